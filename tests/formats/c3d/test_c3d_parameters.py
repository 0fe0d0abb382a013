"""Hostile C3D parameter values: each is one FormatError naming the parameter and what was
expected (no NumPy or Python message), and analog samples the channels do not cover are
named, not dropped in silence; a text of strings of length 0 is that many blank strings.
The files are built here, byte by byte."""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

import pytest

import motionkit as mk
from motionkit.errors import FormatError, MotionkitWarning

Param = tuple[str, str, int, list[int], bytes]


def _c3d(points: int, analog: int, params: list[Param], frames: bytes) -> bytes:
    """An Intel float C3D: header block, one parameter block, frames from block 3."""
    header = bytearray(512)
    header[0:2] = b"\x02\x50"
    struct.pack_into("<5H", header, 2, points, analog, 1, 10, 0)
    struct.pack_into("<f", header, 12, -1.0)  # float storage
    struct.pack_into("<HH", header, 16, 3, 0)
    struct.pack_into("<f", header, 20, 100.0)
    group_ids: dict[str, int] = {}
    items: list[tuple[bytes, bytes]] = []
    for group, name, kind, dims, raw in params:
        if group not in group_ids:
            group_ids[group] = len(group_ids) + 1
            items.append((bytes([len(group), 256 - group_ids[group]]) + group.encode(), b"\0"))
        body = bytes([kind & 0xFF, len(dims), *dims]) + raw + b"\0"
        items.append((bytes([len(name), group_ids[group]]) + name.encode(), body))
    section = bytearray(b"\x01\x50\x01\x54")
    for index, (head, body) in enumerate(items):
        after = 2 + len(body) if index < len(items) - 1 else 0
        section += head + struct.pack("<h", after) + body
    section += bytes(512 - len(section))
    return bytes(header) + bytes(section) + frames


def _i16(value: int) -> bytes:
    return struct.pack("<h", value)


def _f32(*values: float) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


ONE_MARKER = _f32(1.0, 2.0, 3.0, 0.0) * 10
CASES = {
    "POINT:USED is -1": (1, 0, [("POINT", "USED", 2, [], _i16(-1))], ONE_MARKER),
    "POINT:USED is nan": (1, 0, [("POINT", "USED", 4, [], _f32(float("nan")))], ONE_MARKER),
    "POINT:USED is 1.5": (1, 0, [("POINT", "USED", 4, [], _f32(1.5))], ONE_MARKER),
    "POINT:USED is 2 but the header's marker count is 1": (1, 0, [("POINT", "USED", 2, [], _i16(2))],
                                                            ONE_MARKER),
    "ANALOG:USED is -1": (1, 2, [("ANALOG", "USED", 2, [], _i16(-1))],
                          (_f32(1, 2, 3, 0) + _f32(5, 6)) * 10),
    "ANALOG:RATE is 0": (1, 1, [("ANALOG", "USED", 2, [], _i16(1)),
                                ("ANALOG", "RATE", 4, [], _f32(0.0))],
                         (_f32(1, 2, 3, 0) + _f32(5.0)) * 10),
}


@pytest.mark.parametrize("expected", list(CASES))
def test_a_hostile_parameter_is_one_format_error_naming_it(tmp_path: Path,
                                                           expected: str) -> None:
    path = tmp_path / "hostile.c3d"
    path.write_bytes(_c3d(*CASES[expected]))
    with pytest.raises(FormatError, match="expected") as caught:
        mk.read(path)
    assert expected in str(caught.value)
    assert caught.value.path == str(path)


def test_text_of_length_zero_is_blank_labels(tmp_path: Path) -> None:
    path = tmp_path / "blank.c3d"  # a real Optotrak file has DESCRIPTIONS of dims (0, n)
    path.write_bytes(_c3d(1, 0, [("POINT", "LABELS", -1, [0, 1], b"")], ONE_MARKER))
    assert list(mk.read(path).tracks)[:1] == ["marker#0"]


def test_analog_samples_the_channels_do_not_cover_are_named(tmp_path: Path) -> None:
    path = tmp_path / "left.c3d"  # 3 samples a frame, 2 channels: one sample left over
    path.write_bytes(_c3d(1, 3, [("ANALOG", "USED", 2, [], _i16(2)),
                                 ("ANALOG", "RATE", 4, [], _f32(100.0))],
                          (_f32(1, 2, 3, 0) + _f32(5, 6, 7)) * 10))
    with pytest.warns(MotionkitWarning, match="the last 1 of each frame are not read"):
        motion = mk.read(path)
    assert motion.tracks["analog/channel#0"].data[:, 0].tolist() == [5.0] * 10
    fine = tmp_path / "fine.c3d"
    fine.write_bytes(_c3d(1, 2, [("ANALOG", "USED", 2, [], _i16(2)),
                                 ("ANALOG", "RATE", 4, [], _f32(100.0))],
                          (_f32(1, 2, 3, 0) + _f32(5, 6)) * 10))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mk.read(fine).tracks["analog/channel#1"].data[:, 0].tolist() == [6.0] * 10


def test_without_analog_rate_each_channel_runs_at_its_own_samples_per_frame(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """2 channels × 2 samples a frame at 100 Hz and no ANALOG:RATE: 200 Hz each (the header
    word counts the samples of all channels), so the analog span equals the markers'."""
    data = _c3d(1, 4, [("POINT", "USED", 2, [], _i16(1)), ("ANALOG", "USED", 2, [], _i16(2))],
                (_f32(1, 2, 3, 0) + _f32(5, 6, 7, 8)) * 10)
    (tmp_path / "an.c3d").write_bytes(data)
    motion = mk.read(tmp_path / "an.c3d")
    assert motion.meta["c3d"]["analog_rate"] == 200.0


def test_a_parameter_offset_before_the_section_is_refused() -> None:
    import struct

    from motionkit.formats.c3d.parse import parse

    data = bytearray(1024)
    data[0], data[1] = 2, 0x50
    struct.pack_into("<H", data, 2, 1)
    data[512 + 2], data[512 + 3] = 1, 84
    data[516], data[517], data[518] = 1, 0xFF, ord("A")
    struct.pack_into("<h", data, 519, -523)  # back before byte 516
    with pytest.raises(mk.FormatError, match="points before the parameter section"):
        parse(bytes(data), "h.c3d")
