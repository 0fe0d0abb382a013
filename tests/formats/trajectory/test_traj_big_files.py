"""The one-pass trajectory read (big files with polars) against the exact two-pass read.

The one pass must either give exactly what the two passes give (arrays bit for bit, the
same error with the same line and column, the same warnings once) or give up early.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import require_peer, use_polars
from motionkit.errors import FormatError, MotionkitWarning
from motionkit.formats.trajectory import _text

require_peer("polars")

HEAD = "#epsg 0\n#fields t,px,py,pz,qx,qy,qz,qw\n"


def _rows(count: int, digits: int = 9, start: int = 0) -> str:
    rng = np.random.default_rng(count + digits)
    quat = rng.normal(size=(count, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    lines = []
    for i in range(count):
        values = [1.7e9 + (start + i) * 0.01, *rng.normal(size=3) * 100, *quat[i]]
        lines.append(",".join(f"{v:.{digits}f}" for v in values))
    return "\n".join(lines) + "\n"


def _outcome(path: Path, **options: Any) -> tuple[Any, ...]:
    """(root data, times, warnings, metadata) of a read, or (line, column, message) of its
    error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            motion = mk.read(path, **options)
        except FormatError as exc:
            return exc.line, exc.column, exc.message
    root = motion.tracks["root"]
    return root.data, root.times, [str(w.message) for w in caught], motion.meta


def _both(path: Path, monkeypatch: pytest.MonkeyPatch, block: int = 512,
          **options: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The outcome of the one-pass read (polars forced on, small blocks) and of the exact
    read (the one pass switched off)."""
    use_polars(monkeypatch, True)
    monkeypatch.setattr(_text, "_BLOCK", block)
    one = _outcome(path, **options)
    with monkeypatch.context() as patch:
        patch.setattr(_text, "_scan_head", lambda path, header_row: None)
        exact = _outcome(path, **options)
    return one, exact


def _same(one: tuple[Any, ...], exact: tuple[Any, ...]) -> None:
    assert len(one) == len(exact)
    if isinstance(exact[0], np.ndarray):
        np.testing.assert_array_equal(one[0], exact[0])
        np.testing.assert_array_equal(one[1], exact[1])
        assert one[2:] == exact[2:]
    else:
        assert one == exact


def _no_second_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the exact two-pass scan ran")

    monkeypatch.setattr(_text, "scan", refuse)


def test_clean_file_is_read_in_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "clean.traj"
    path.write_text(HEAD + _rows(400))
    one, exact = _both(path, monkeypatch)
    _same(one, exact)
    assert one[0].shape == (400, 7)
    _no_second_pass(monkeypatch)
    _same(_outcome(path), exact)


@pytest.mark.parametrize("name", ["t.tum", "t.csv", "t.kitti"])
def test_other_formats_in_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   name: str) -> None:
    rng = np.random.default_rng(3)
    if name == "t.tum":
        text = "timestamp x y z qx qy qz qw\n" + _rows(300).replace(",", " ")
    elif name == "t.csv":
        text = "#timestamp,x,y,z,qw,qx,qy,qz\n" + "".join(
            f"{1403715524907143168 + 3 * i},{i},0,0,1,0,0,0\n" for i in range(300))
    else:
        text = "".join(f"1 0 0 {v:.6f} 0 1 0 0 0 0 1 0\n" for v in rng.normal(size=300))
    path = tmp_path / name
    path.write_text(text)
    one, exact = _both(path, monkeypatch)
    _same(one, exact)
    _no_second_pass(monkeypatch)
    _same(_outcome(path), exact)


@pytest.mark.parametrize("case", ["late header", "crlf", "blank line", "bad number",
                                  "shorter rows", "inline comment", "names row"])
def test_what_one_pass_cannot_take_gives_the_exact_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    rows = _rows(300)
    text = {
        "late header": HEAD + rows + "#time_offset 10\n#name late\n",
        "crlf": (HEAD + rows).replace("\n", "\r\n"),
        "blank line": HEAD + rows + "\n" + _rows(20, start=300),
        "bad number": HEAD + rows + _rows(5, start=300).replace("0", "o", 1),
        "shorter rows": HEAD + rows + _rows(4000, digits=1, start=300),
        "inline comment": HEAD + rows + _rows(3, start=300).replace("\n", " # note\n", 1),
        "names row": HEAD + rows + "t,px,py,pz,qx,qy,qz,qw\n",
    }[case]
    path = tmp_path / "case.traj"
    path.write_text(text)
    one, exact = _both(path, monkeypatch)
    _same(one, exact)
    if case == "late header":
        np.testing.assert_array_equal(one[1][:2], [1.7e9 + 10, 1.7e9 + 10.01])
    if case in ("bad number", "names row"):
        assert isinstance(one[0], int) and one[0] > 300  # a line number


def test_warnings_are_given_once_when_the_one_pass_gives_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "w.traj"
    path.write_text("#colour blue\n#fields t,px,py,pz,-\n"
                    + "".join(f"{i},1,2,3,x,extra\n" for i in range(50))
                    + "# a late comment\n")
    one, exact = _both(path, monkeypatch)
    _same(one, exact)
    assert sum("unknown header key #colour" in w for w in one[2]) == 1
    assert sum("beyond #fields" in w for w in one[2]) == 1


def test_warnings_point_at_the_callers_line(tmp_path: Path) -> None:
    path = tmp_path / "w.traj"
    path.write_text("#colour blue\n" + HEAD + _rows(3))
    with pytest.warns(MotionkitWarning, match="unknown header key") as caught:
        mk.read(path)
    assert caught[0].filename == __file__


def test_errors_after_the_one_pass_name_the_right_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows(300).splitlines()
    rows[250] = rows[250].rsplit(",", 4)[0] + ",0,0,0,0"  # a zero quaternion on line 253
    path = tmp_path / "z.traj"
    path.write_text(HEAD + "\n".join(rows) + "\n")
    one, exact = _both(path, monkeypatch)
    assert one == exact == (253, None, "zero or invalid quaternion")
    _no_second_pass(monkeypatch)  # an error found after a finished one pass is final
    assert _outcome(path) == exact


def test_skipped_text_columns_are_read_in_one_pass(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    rows = "".join(f"{i},note {i},{i},2,3,0,0,0,1,x\n" for i in range(200))
    path = tmp_path / "skip.traj"
    path.write_text("#fields t,-,px,py,pz,qx,qy,qz,qw\n" + rows)
    short = tmp_path / "short.traj"
    short.write_text("#fields t,-,px,py,pz,qx,qy,qz,qw\n" + rows + "9,short,1,2,3,0,0,0,1\n")
    one, exact = _both(short, monkeypatch)  # polars pads a short row's text; the count sees it
    _same(one, exact)
    assert one[:2] == (202, None)
    one, exact = _both(path, monkeypatch)
    _same(one, exact)
    assert one[2] == [f"{path}: 1 column(s) beyond #fields ignored"]
    _no_second_pass(monkeypatch)
    _same(_outcome(path), exact)


@pytest.mark.parametrize("separator", ["\t", "\t ", "  "])
def test_whitespace_separated_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   separator: str) -> None:
    path = tmp_path / "ws.tum"
    path.write_text(_rows(200).replace(",", separator))
    one, exact = _both(path, monkeypatch)
    _same(one, exact)
    assert one[0].shape == (200, 7)
    if separator == "\t":  # one tab: polars splits it, so no second pass
        _no_second_pass(monkeypatch)
        _same(_outcome(path), exact)


def test_crlf_files_in_one_pass_and_a_bare_cr_the_exact_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    crlf = tmp_path / "crlf.traj"
    crlf.write_bytes((HEAD + _rows(300)).replace("\n", "\r\n").encode())
    lone = tmp_path / "lone.traj"
    lone.write_bytes((HEAD + _rows(300)).replace("\n", "\r\n").replace(",", "\r,", 1).encode())
    one, exact = _both(lone, monkeypatch)  # a bare CR: blank space to the exact read
    _same(one, exact)
    one, exact = _both(crlf, monkeypatch)
    _same(one, exact)
    _no_second_pass(monkeypatch)
    _same(_outcome(crlf), exact)


# Found by a review of the one pass; each compares both reads on the reviewer's case.

def test_blank_lines_in_the_first_block_do_not_inflate_the_estimate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "blank.traj"
    path.write_text(HEAD + _rows(1) + "\n" * 5000 + "  \n" + _rows(50, start=1))
    use_polars(monkeypatch, True)
    assert _text._scan_head(path, False) is None  # 5000 blank "rows" would be allocated
    one, exact = _both(path, monkeypatch, block=1 << 22)
    _same(one, exact)


def test_tum_names_row_and_later_comments_in_the_same_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "names.tum"
    path.write_text("t x y z qw qx qy qz\n# columns: t x y z qx qy qz qw\n"
                    + _rows(100).replace(",", " "))
    one, exact = _both(path, monkeypatch)
    _same(one, exact)
    metas = []
    for force_exact in (False, True):
        with monkeypatch.context() as patch:
            if force_exact:
                patch.setattr(_text, "_scan_head", lambda path, header_row: None)
            metas.append(mk.read(path).meta["tum"])
    assert metas[0] == metas[1] and metas[0]["quaternion_order"] == "wxyz"


@pytest.mark.parametrize("case", ["bom mid-file", "names with comment", "names not utf-8",
                                  "only delimiters"])
def test_review_cases_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    path = tmp_path / "r.tum"
    tum = _rows(40).replace(",", " ")
    data = {
        "bom mid-file": (b"# c\n" + tum.encode() + b"\xef\xbb\xbf"
                         + _rows(3, start=40).replace(",", " ").encode()),
        "names with comment": b"t x y z qx qy qz qw # TUM order\n" + tum.encode(),
        "names not utf-8": b"t x y z q\xff\n" + tum.encode() + b"# \xfe\n",
        "only delimiters": b",,,\n" + tum.encode(),
    }[case]
    path.write_bytes(data)
    block = len(tum) if case == "bom mid-file" else 512  # a one-pass block starts at the BOM
    one, exact = _both(path, monkeypatch, block, format="tum")
    _same(one, exact)
    if case != "names with comment":
        assert isinstance(exact[0], int)  # each of these is a FormatError with its line


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(1, 60), block=st.sampled_from([64, 200, 1 << 22]),
       extras=st.lists(st.tuples(st.integers(0, 60), st.sampled_from(
           ["", "   ", "# c", "#name x", "1,2", "1,2,3,4,5,6,7,8,9", "nan,1,2,3,0,0,0,1",
            "t,px,py,pz,qx,qy,qz,qw"])), max_size=3),
       tum=st.booleans(), crlf=st.booleans(), bom=st.booleans())
def test_one_pass_equals_two_passes(tmp_path_factory: pytest.TempPathFactory,
                                    monkeypatch: pytest.MonkeyPatch, rows: int, block: int,
                                    extras: list[tuple[int, str]], tum: bool, crlf: bool,
                                    bom: bool) -> None:
    lines = _rows(rows).splitlines()
    for position, line in extras:
        lines.insert(min(position, len(lines)), line)
    text = "\n".join(lines) + "\n"
    # TUM is space-delimited, and a first row of names is a header there
    text = text.replace(",", " ") if tum else HEAD + text
    if crlf:
        text = text.replace("\n", "\r\n")
    path = tmp_path_factory.mktemp("p") / ("p.tum" if tum else "p.traj")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    one, exact = _both(path, monkeypatch, block, format="tum" if tum else "traj")
    _same(one, exact)
