"""The MOTION block through the compiled number scan and through the Python path (polars,
NumPy, the token walk) it falls back to without a compiler: the same Motion, bit for bit,
and the same FormatError or warning for a broken block."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from bvh_text import basic_bvh
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import corpus_file, corpus_names, corpus_root, require_peer
from motionkit import _accel
from motionkit.formats.shared import number_scan

HEADER = basic_bvh("  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation "
                   "Xrotation Yrotation", "")


def _corpus() -> list[str]:
    folder = corpus_root() / "bvh"
    return corpus_names(sorted(p.name for p in folder.glob("*.bvh")) if folder.is_dir() else [])


def _outcome(path: Path, way: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """What reading gives (``way``: compiled, numpy or polars): the tracks' bytes and meta,
    or the error, and the warnings."""
    with monkeypatch.context() as patch:
        if way != "compiled":
            patch.setattr(number_scan, "_COMPILED", None)
        polars = require_peer("polars") if way == "polars" else None
        patch.setattr(_accel, "polars_for", lambda size: polars)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                motion = mk.read(path)
                told = repr([(n, t.data.dtype, t.data.shape, t.data.tobytes().hex(), t.labels)
                             for n, t in motion.tracks.items()]) + repr(motion.meta)
            except mk.FormatError as error:
                told = f"FormatError {error}"
    return told + repr(sorted(str(w.message) for w in caught))


def _same(path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The outcome, the same on every path there is (without the extension the compiled
    way is the NumPy one, and ``test_number_scan`` fails on its install test)."""
    compiled = _outcome(path, "compiled", monkeypatch)
    assert compiled == _outcome(path, "numpy", monkeypatch)
    assert compiled == _outcome(path, "polars", monkeypatch)
    return compiled


@pytest.mark.parametrize("name", _corpus())
def test_corpus_files_read_alike_on_every_path(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not _same(corpus_file("bvh", name), monkeypatch).startswith("FormatError")


@pytest.mark.parametrize("rows", [
    "1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 9\n",  # fine
    "1 2 3 4 5 6 7 8 9\n1 x 3 4 5 6 7 8 9\n",  # not a number
    "1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 nan\n",  # NaN: a warning, through the Python path
    "1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8\n",  # short row
    "1 2 3 4 5 6 7 8 9\n",  # fewer rows
    "1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 9\n1 2\n",  # numbers after the frames
    "1 2 3 4 5 6 7 8 9 1 2 3 4 5 6 7 8 9\n",  # right count, one line
    "1_0 2 3 4 5 6 7 8 9\r\n1 2 3 4 5 6 7 8 1e400\r\n",  # float() takes 1_0
    "1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 9 -\n",  # a bad token after the frames
])
def test_broken_blocks_fail_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: str) -> None:
    path = tmp_path / "block.bvh"
    path.write_text(HEADER + rows)
    _same(path, monkeypatch)


def test_a_huge_exponent_after_a_long_fraction_is_inf_as_float_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the exponent's digits past those the scan gathers once cancelled the shift: 1.0
    path = tmp_path / "huge.bvh"
    path.write_text(HEADER + "1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 0." + "0" * 99_999
                    + "1e1000000\n")
    compiled = _outcome(path, "compiled", monkeypatch)
    assert compiled == _outcome(path, "numpy", monkeypatch)
    assert compiled == _outcome(path, "polars", monkeypatch)  # (polars' own parse: 1.0)
    assert "channel values are NaN or infinite" in compiled


_TOKENS = st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
                    st.floats(-400, 400).map(lambda v: f"{v:.4f}"),
                    st.sampled_from(["nan", "-inf", "1_0", "x", "1e", "-", "0x1", "é", "1e999"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(_TOKENS, min_size=7, max_size=10), min_size=1, max_size=4),
       st.sampled_from([" ", "\t", "  "]), st.sampled_from(["\n", "\r\n", "\n\n"]))
def test_generated_blocks_read_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     rows: list[list[str]], blank: str, newline: str) -> None:
    path = tmp_path / "generated.bvh"
    path.write_bytes((HEADER + newline.join(blank.join(row) for row in rows) + newline).encode())
    _same(path, monkeypatch)
