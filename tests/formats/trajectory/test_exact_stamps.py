"""Decimal stamps that float64 cannot hold (Unix time to the nanosecond) are read as exact
integer nanoseconds, so a TUM or .traj file converts to itself digit for digit."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import use_polars
from motionkit.formats.trajectory import _text
from motionkit.model.timeline import ns_to_seconds

POSE = "1 2 3 0 0 0 1"
EUROC_LIKE = [1403636579763555584, 1403636579768555520, 1403636579773555456]


def _stamp(ns: int) -> str:
    sign = "-" if ns < 0 else ""
    whole, part = divmod(abs(ns), 1_000_000_000)
    return f"{sign}{whole}.{part:09d}"


def _tum(path: Path, stamps: list[int], layout: str = "{t} {pose}") -> Path:
    pose = POSE.replace(" ", ",") if "," in layout else POSE
    path.write_text("".join(layout.format(t=_stamp(ns), pose=pose) + "\n" for ns in stamps))
    return path


def test_unix_stamps_convert_to_themselves(tmp_path: Path) -> None:
    source = _tum(tmp_path / "a.tum", EUROC_LIKE)
    motion = mk.read(source)
    assert motion.tracks["root"].timeline.stamps_ns.tolist() == EUROC_LIKE
    mk.write(tmp_path / "b.tum", motion)
    stamps = [line.split()[0] for line in (tmp_path / "b.tum").read_text().splitlines()]
    assert stamps == [line.split()[0] for line in source.read_text().splitlines()]
    # float64 alone gives …555527 for the first: the digits a float round trip would change
    assert f"{float(_stamp(EUROC_LIKE[0])):.9f}" != _stamp(EUROC_LIKE[0])


def test_traj_keeps_them_too_and_adds_its_offset_exactly(tmp_path: Path) -> None:
    rows = "".join(f"{_stamp(ns)},1,2,3\n" for ns in EUROC_LIKE)
    (tmp_path / "a.traj").write_text("#fields t,px,py,pz\n" + rows)
    (tmp_path / "b.traj").write_text("#fields t,px,py,pz\n#time_offset 0.25\n" + rows)
    plain = mk.read(tmp_path / "a.traj").tracks["root"].timeline
    shifted = mk.read(tmp_path / "b.traj").tracks["root"].timeline
    assert plain.stamps_ns.tolist() == EUROC_LIKE
    assert shifted.stamps_ns.tolist() == [ns + 250_000_000 for ns in EUROC_LIKE]
    np.testing.assert_array_equal(shifted.times, ns_to_seconds(shifted.stamps_ns))


@pytest.mark.parametrize("layout", ["{t}\t{pose}", "  {t}   {pose}  ", "{t},{pose}"])
def test_any_layout_the_reader_takes(tmp_path: Path, layout: str) -> None:
    timeline = mk.read(_tum(tmp_path / "a.tum", EUROC_LIKE, layout)).tracks["root"].timeline
    assert timeline.stamps_ns.tolist() == EUROC_LIKE


def test_comments_between_rows(tmp_path: Path) -> None:
    text = "".join(f"# row {i}\n{_stamp(ns)} {POSE}\n" for i, ns in enumerate(EUROC_LIKE))
    (tmp_path / "a.tum").write_text(text)
    assert mk.read(tmp_path / "a.tum").tracks["root"].timeline.stamps_ns.tolist() == EUROC_LIKE


def test_stamps_float64_holds_stay_floats(tmp_path: Path) -> None:
    # relative times keep every digit as floats (more than nine decimals included)
    (tmp_path / "a.tum").write_text(f"0.5 {POSE}\n0.123456789123 {POSE}\n1e-12 {POSE}\n")
    timeline = mk.read(tmp_path / "a.tum", sort=True).tracks["root"].timeline
    assert timeline.stamps_ns is None
    assert timeline.times.tolist() == [1e-12, 0.123456789123, 0.5]


def test_a_tenth_decimal_that_tells_floats_apart_keeps_the_floats(tmp_path: Path) -> None:
    # just below 2**23 s float64 is finer than a nanosecond: its shortest text may need ten
    # decimals, and dropping one would change the float a written motion reads back as
    (tmp_path / "a.tum").write_text(f"8388603.6744033415 {POSE}\n8388608.5 {POSE}\n")
    timeline = mk.read(tmp_path / "a.tum").tracks["root"].timeline
    assert timeline.stamps_ns is None
    assert timeline.times.tolist() == [8388603.6744033415, 8388608.5]


def test_a_non_decimal_stamp_keeps_the_float_reading(tmp_path: Path) -> None:
    (tmp_path / "a.tum").write_text(f"1403636579.5 {POSE}\n1.4036365797e9 {POSE}\n"
                                    f"99999999999.5 {POSE}\n")
    timeline = mk.read(tmp_path / "a.tum").tracks["root"].timeline
    # exponents are decimals too; 99999999999.5 s is past int64 nanoseconds: floats stand
    assert timeline.stamps_ns is None
    assert timeline.times.tolist() == [1403636579.5, 1403636579.7, 99999999999.5]


def _one_pass_read(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """The stamps of a one-pass read in 4 KB blocks, and the pieces read again for them."""
    use_polars(monkeypatch, True)
    monkeypatch.setattr(_text, "_BLOCK", 4096)  # one-pass block ≫ 2 × _BLOCK: read in pieces
    pieces: list[int] = []
    chunks = _text.TextTable.row_chunks

    def counted(table: _text.TextTable) -> object:
        for piece in chunks(table):
            pieces.append(len(piece))
            yield piece

    monkeypatch.setattr(_text.TextTable, "row_chunks", counted)
    return mk.read(path).tracks["root"].timeline.stamps_ns.tolist(), pieces


def test_the_one_pass_read_takes_them_as_it_parses(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    stamps = [1_700_000_000_000_000_000 + i * 10_000_001 for i in range(3000)]
    assert _one_pass_read(_tum(tmp_path / "big.tum", stamps), monkeypatch) == (stamps, [])


def test_stamps_that_grow_past_float64_are_read_again_in_pieces(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the first blocks hold stamps float64 keeps, so only a second read gets them all
    stamps = [(2**23 - 15) * 10**9 + i * 10_000_001 for i in range(3000)]
    found, pieces = _one_pass_read(_tum(tmp_path / "big.tum", stamps), monkeypatch)
    assert found == stamps
    assert len(pieces) > 10 and max(pieces) < 3 * 4096


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(2**23 * 10**9, 2**62), min_size=1, max_size=40, unique=True),
       st.sampled_from(["{t} {pose}", "{t}\t{pose}", " {t}  {pose}"]))
def test_any_nanosecond_stamps_read_back_exactly(tmp_path: Path, stamps: list[int],
                                                 layout: str) -> None:
    stamps.sort()
    timeline = mk.read(_tum(tmp_path / "h.tum", stamps, layout)).tracks["root"].timeline
    assert timeline.stamps_ns.tolist() == stamps
    np.testing.assert_array_equal(timeline.times, ns_to_seconds(np.array(stamps)))


def test_a_wide_delimiter(tmp_path: Path) -> None:
    rows = "".join(f"{_stamp(ns)}§1§2§3\n" for ns in EUROC_LIKE)
    (tmp_path / "a.traj").write_text("#fields t,px,py,pz\n#delimiter §\n" + rows)
    assert mk.read(tmp_path / "a.traj").tracks["root"].timeline.stamps_ns.tolist() == EUROC_LIKE


def test_without_polars_the_float_stamps_stand(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "polars", None)  # import polars raises ImportError
    timeline = mk.read(_tum(tmp_path / "a.tum", EUROC_LIKE)).tracks["root"].timeline
    assert timeline.stamps_ns is None
    assert timeline.times.tolist() == [float(_stamp(ns)) for ns in EUROC_LIKE]


def test_blanks_after_the_delimiter_keep_the_polars_parse() -> None:
    import polars as pl

    block = b"".join(b"1, 2, " + _stamp(ns).encode() + b"\n" for ns in EUROC_LIKE)
    parsed = _text._parse_polars(pl, block, b",", 3, 3, frozenset(), frozenset(), 2)
    assert parsed is not None and parsed[2] is not None
    assert parsed[2].tolist() == EUROC_LIKE


def test_one_stamp_converts_as_an_array() -> None:
    assert ns_to_seconds(5).shape == ()
    assert float(ns_to_seconds(5)) == 5e-9
