"""Hostile and broken MimicKit and GMR pickles: each is one FormatError naming the file,
quickly, with no code from the file run and no work beyond what its size warrants."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import motionkit as mk
from conftest import cpu_bound

ROW = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5]


def _refused(tmp_path: Path, data: bytes, match: str, format: str = "mimickit") -> None:
    path = tmp_path / "evil.pkl"
    path.write_bytes(data)
    with cpu_bound(10), pytest.raises(mk.FormatError, match=match) as info:
        mk.read(path, format=format)
    assert info.value.path == str(path) and "\n" not in str(info.value)


def _dict(**values: Any) -> bytes:
    return pickle.dumps({"loop_mode": 0, "fps": 30, "frames": [ROW, ROW], **values}, protocol=4)


def test_rows_shared_by_reference_cannot_multiply_the_work(tmp_path: Path) -> None:
    row = [0.5] * 2000
    data = pickle.dumps({"loop_mode": 0, "fps": 30, "frames": [row] * 200_000}, protocol=4)
    assert len(data) < 2_000_000  # 400 million numbers in under 2 MB
    _refused(tmp_path, data, r"200000 rows of 2000 numbers, more than a file of \d+ bytes")


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    head = _dict(frames=None).split(b"\x8c\x06frames\x94")[0] + b"\x8c\x06frames"
    nested = b"]" * 500 + b"a" * 499  # 500 lists, each inside the one before
    _refused(tmp_path, head + nested + b"u.", "nests deeper than")


@pytest.mark.parametrize(("frames", "match"), [
    ([ROW, [*ROW[:6], "1.5"]], r"row 1 holds a str, not a number"),
    ([ROW, [*ROW[:6], True]], r"row 1 holds a bool"),
    ([ROW, [*ROW[:6], None]], r"row 1 holds a NoneType"),
    ([ROW, [*ROW[:6], [1.0]]], r"row 1 holds a list"),
    ([ROW, ROW[:6]], r"row 1 has 6 numbers, row 0 has 7"),
    ([ROW, "abc"], r"row 1 is a str"),
    ([ROW[:5], ROW[:5]], r"at least 6 numbers"),
    ([], r"frames is empty"),
    ([ROW, [*ROW[:6], float("nan")]], r"non-finite number \(row 1, column 6\)"),
    ([ROW, [*ROW[:6], 10**400]], r"unreadable data|out of range|too large"),
    ("frames", r"frames must be a list of rows or an array, got a str"),
    (np.array([["a"] * 7] * 2), r"refused numpy dtype"),
    (np.array([[1 + 2j] * 7] * 2), r"frames must hold numbers"),
])
def test_frames_that_are_not_rows_of_numbers(tmp_path: Path, frames: Any, match: str) -> None:
    _refused(tmp_path, _dict(frames=frames), match)


@pytest.mark.parametrize(("values", "match"), [
    ({"loop_mode": 2}, r"loop_mode must be 0 \(CLAMP\) or 1 \(WRAP\), got 2"),
    ({"loop_mode": True}, r"loop_mode must be the int 0 \(CLAMP\) or 1 \(WRAP\), got a bool"),
    ({"loop_mode": "WRAP"}, r"text 'WRAP'.*PARC legacy"),
    ({"fps": "30"}, r"fps must be a number, got a str"),
    ({"fps": 0}, r"fps must be between"),
    ({"fps": float("inf")}, r"fps must be between"),
    ({"fps": 10**400}, r"fps is out of range"),
])
def test_bad_loop_modes_and_rates(tmp_path: Path, values: dict[str, Any], match: str) -> None:
    _refused(tmp_path, _dict(**values), match)


def test_what_is_not_a_mimickit_dict(tmp_path: Path) -> None:
    _refused(tmp_path, pickle.dumps([ROW], protocol=4), "holds a list, not a dict")
    _refused(tmp_path, pickle.dumps({"fps": 30}, protocol=4), "no 'frames' key")
    _refused(tmp_path, pickle.dumps({"loop_mode": 0, "fps": 30, "frames": None}, protocol=4)[:-3],
             "longer than the data|truncated")
    gmr = {"fps": 30, "root_pos": np.zeros((2, 3)), "root_rot": np.zeros((2, 4)),
           "dof_pos": np.zeros((2, 1))}
    _refused(tmp_path, pickle.dumps(gmr, protocol=4), "looks like a GMR robot motion")
    _refused(tmp_path, pickle.dumps({"fps": 30, "frames": [ROW]}, protocol=4),
             "no loop_mode")


class _Payload:
    """Pickles as a call to os.system: must never run."""

    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel

    def __reduce__(self) -> tuple[Any, ...]:
        import os

        return (os.system, (f"touch {self.sentinel}",))


@pytest.mark.parametrize("format", ["mimickit", "gmr"])
def test_code_in_the_file_never_runs(tmp_path: Path, format: str) -> None:
    sentinel = tmp_path / "ran"
    values = {"loop_mode": 0, "fps": _Payload(sentinel), "frames": [ROW, ROW],
              "root_pos": _Payload(sentinel), "root_rot": 0, "dof_pos": 0}
    _refused(tmp_path, pickle.dumps(values, protocol=4), "refused global", format)
    assert not sentinel.exists()


@pytest.mark.parametrize("format", ["mimickit", "gmr"])
def test_joblib_containers_are_named(tmp_path: Path, format: str) -> None:
    data = (b"\x80\x04}(\x8c\x06frames\x8c\x13joblib.numpy_pickle\x8c\x11NumpyArrayWrapper"
            b"\x93)\x81u.")
    _refused(tmp_path, data, "joblib container", format)


@pytest.mark.parametrize(("values", "match"), [
    ({"root_rot": np.zeros((3, 4))}, r"root_rot has 3 frames but root_pos has 2"),
    ({"root_rot": np.zeros((2, 3))}, r"root_rot \(frames, 4\)"),
    ({"dof_pos": np.zeros(2)}, r"dof_pos must have 2 axes"),
    ({"dof_pos": [[0.0], [0.0]]}, r"dof_pos must be a numeric array, got a list"),
    ({"root_pos": np.full((2, 3), np.nan)}, r"root_pos holds non-finite"),
    ({"fps": "30"}, r"fps must be a number"),
    ({"local_body_pos": np.zeros((2, 3, 3), np.float32), "link_body_list": ["a"]},
     r"link_body_list names 1 bodies, local_body_pos holds 3"),
    ({"local_body_pos": np.zeros((2, 3, 2), np.float32)}, r"local_body_pos must be \(2, bodies, 3\)"),
    ({"local_body_pos": np.zeros((2, 1, 3)), "link_body_list": [1]}, r"list of body names"),
])
def test_broken_gmr_files(tmp_path: Path, values: dict[str, Any], match: str) -> None:
    rot = np.zeros((2, 4))
    rot[:, 3] = 1
    base = {"fps": 30, "root_pos": np.zeros((2, 3)), "root_rot": rot, "dof_pos": np.zeros((2, 1))}
    _refused(tmp_path, pickle.dumps({**base, **values}, protocol=4), match, "gmr")
