"""The C3D frame decode: the compiled pass (``formats/c3d/_decode.c``) equals the NumPy rule
bit for bit on any bytes in every word format, and the reader gives one answer whatever the
processor (Intel, DEC, MIPS) and whichever pass runs; a FIFO is not read, a file cut inside
a frame keeps its whole frames."""

from __future__ import annotations

import os
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import require_compiled
from motionkit.formats.c3d import decode, read

KINDS = list(decode.KINDS)


def _layout(kind: str, markers: int, channels: int, samples: int, extra: int,
            factors: tuple[float, float]) -> decode.Layout:
    rng = np.random.default_rng(markers * 7 + channels)
    return decode.Layout(markers, 4 * markers + channels * samples + extra, kind, channels,
                         samples, factors[0], factors[1], rng.normal(size=channels) * 100,
                         rng.normal(size=channels))


@settings(max_examples=200, deadline=None)
@given(kind=st.sampled_from(KINDS), markers=st.integers(0, 4), channels=st.integers(0, 3),
       samples=st.integers(0, 3), extra=st.integers(0, 2), frames=st.integers(0, 70),
       first=st.integers(0, 3), data=st.data(),
       factors=st.tuples(st.floats(-10, 10), st.floats(0, 10)))
def test_compiled_decode_equals_the_numpy_rule(kind: str, markers: int, channels: int,
                                               samples: int, extra: int, frames: int,
                                               first: int, data: st.DataObject,
                                               factors: tuple[float, float]) -> None:
    require_compiled(decode.COMPILED, "the compiled C3D decode")
    layout = _layout(kind, markers, channels, samples, extra, factors)
    raw = data.draw(st.binary(min_size=frames * layout.frame_bytes,
                              max_size=frames * layout.frame_bytes))
    if frames and markers and data.draw(st.booleans()):  # residual words real files hold
        table = np.frombuffer(raw, dtype=np.uint8).copy()
        integer = kind.endswith("i2")
        special = np.array([-1, 0, 255, 256, -32768, 32767] if integer else
                           [-1.0, 2.0**31, 2.0**31 - 1, np.nan, 0.0, 513.75, -0.0])
        words = table.view("<f4" if kind == "dec" else kind)  # DEC: other bits, still words
        residual_words = words[3::layout.words]
        residual_words[:] = np.resize(special, residual_words.size)
        raw = table.tobytes()
    outputs = []
    for way in (decode.decode, decode.decode_reference):
        out = decode.Frames.empty(layout, frames + first + 1)
        for array in (out.xyz, out.residual, out.analog):
            if array is not None:
                array.fill(7.0)  # what the pass does not write stays
        way(raw, frames, layout, out, first)
        outputs.append(out)
    compiled, reference = outputs
    assert np.array_equal(compiled.xyz, reference.xyz, equal_nan=True)
    assert np.array_equal(compiled.residual, reference.residual, equal_nan=True)
    if compiled.analog is None or reference.analog is None:
        assert compiled.analog is None and reference.analog is None
    else:
        assert np.array_equal(compiled.analog, reference.analog, equal_nan=True)


def test_the_compiled_decode_refuses_sizes_its_buffers_cannot_hold() -> None:
    require_compiled(decode.COMPILED, "the compiled C3D decode")
    layout = _layout("<f4", 2, 1, 2, 0, (1.0, 1.0))
    out = decode.Frames.empty(layout, 3)
    with pytest.raises(ValueError):
        decode.decode(bytes(layout.frame_bytes * 2), 3, layout, out, 0)  # raw too short
    with pytest.raises(ValueError):
        decode.decode(bytes(layout.frame_bytes * 3), 3, layout, out, 1)  # past the outputs


@pytest.mark.parametrize("huge", [2**31 + 1, 2**40, 2**62])
def test_the_compiled_decode_refuses_counts_whose_products_would_overflow(huge: int) -> None:
    """Sizes whose products wrap a 64-bit integer (2^62 samples of 4 channels) are refused
    before any is multiplied: the module is importable, so its checks are the guard."""
    require_compiled(decode.COMPILED, "the compiled C3D decode")
    from motionkit.formats.c3d import _decode  # type: ignore[attr-defined]

    floats, empty = np.zeros(4), np.zeros(0)
    with pytest.raises(ValueError):
        _decode.decode(b"", 1, 0, 0, 0, 0, 4, huge, 1.0, 1.0, floats, floats, empty, empty,
                       np.zeros(1, "f4"), 0, 1)
    with pytest.raises(ValueError):
        _decode.decode(b"", huge, 1, 4, 0, 4, 0, 0, 1.0, 1.0, empty, empty, empty, empty,
                       None, 0, huge)


# --- files in every processor format ----------------------------------------------------

def _f32(values: list[float], processor: str) -> bytes:
    ieee = np.asarray(values, dtype="<f4")
    if processor == "mips":
        return ieee.astype(">f4").tobytes()
    if processor == "dec":  # 4 times the value, the two 16-bit halves swapped
        return np.ascontiguousarray((ieee * 4).view("<u2").reshape(-1, 2)[:, ::-1]).tobytes()
    return ieee.tobytes()


def _c3d(processor: str, floating: bool, points: np.ndarray, analog: np.ndarray,
         extra: tuple[tuple[str, str, int, list[int], bytes], ...] = ()) -> bytes:
    """A C3D file: ``points`` (frames, markers, 4) and ``analog`` (frames, samples,
    channels) words, in the processor's format, with ``extra`` parameters."""
    order = ">" if processor == "mips" else "<"
    frames, markers, _ = points.shape
    _, samples, channels = analog.shape
    scale = -0.5 if floating else 0.25
    header = bytearray(512)
    header[0:2] = b"\x02\x50"
    struct.pack_into(f"{order}5H", header, 2, markers, samples * channels, 1, frames, 0)
    header[12:16] = _f32([scale], processor)
    struct.pack_into(f"{order}HH", header, 16, 3, 0)
    header[20:24] = _f32([100.0], processor)

    def i16(*values: int) -> bytes:
        return struct.pack(f"{order}{len(values)}h", *values)

    params = [("POINT", "USED", 2, [], i16(markers)), ("POINT", "UNITS", -1, [2], b"mm"),
              ("POINT", "RATE", 4, [], _f32([100.0], processor)),
              ("ANALOG", "USED", 2, [], i16(channels)),
              ("ANALOG", "RATE", 4, [], _f32([100.0 * samples], processor)),
              ("ANALOG", "OFFSET", 2, [channels], i16(*range(3, 3 + channels))),
              ("ANALOG", "SCALE", 4, [channels], _f32([0.5 + c for c in range(channels)],
                                                      processor)),
              ("ANALOG", "GEN_SCALE", 4, [], _f32([2.0], processor)), *extra]
    groups: dict[str, int] = {}
    items: list[tuple[bytes, bytes]] = []
    for group, name, kind, dims, raw in params:
        if group not in groups:
            groups[group] = len(groups) + 1
            items.append((bytes([len(group), 256 - groups[group]]) + group.encode(), b"\0"))
        items.append((bytes([len(name), groups[group]]) + name.encode(),
                      bytes([kind & 0xFF, len(dims), *dims]) + raw + b"\0"))
    section = bytearray(b"\x01\x50\x01" + bytes([{"intel": 84, "dec": 85, "mips": 86}[processor]]))
    for index, (head, body) in enumerate(items):
        after = 2 + len(body) if index < len(items) - 1 else 0
        section += head + struct.pack(f"{order}h", after) + body
    section += bytes(512 - len(section))
    words = np.concatenate([points.reshape(frames, -1), analog.reshape(frames, -1)], axis=1)
    body = (_f32(words.reshape(-1).tolist(), processor) if floating
            else words.astype(f"{order}i2").tobytes())
    return bytes(header) + bytes(section) + body


def _words(frames: int = 9, markers: int = 3, samples: int = 2,
           channels: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    points = rng.integers(-2000, 2000, size=(frames, markers, 4)).astype(np.float64)
    points[..., 3] = rng.integers(0, 3000, size=(frames, markers))
    points[2, 1, 3] = -1  # one invalid sample
    return points, rng.integers(-500, 500, size=(frames, samples, channels)).astype(np.float64)


def _arrays(motion: mk.Motion) -> list[np.ndarray]:
    return [np.asarray(track.data) for _, track in sorted(motion.tracks.items())]


@pytest.mark.parametrize("floating", [True, False])
def test_every_processor_reads_the_same_numbers(tmp_path: Path, floating: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    points, analog = _words()
    results = []
    for processor in ("intel", "dec", "mips"):
        path = tmp_path / f"{processor}.c3d"
        path.write_bytes(_c3d(processor, floating, points, analog))
        results.append(_arrays(mk.read(path)))
        with monkeypatch.context() as patch:  # and the NumPy pass on the same file
            patch.setattr(decode, "_COMPILED", None)
            results.append(_arrays(mk.read(path)))
    for other in results[1:]:
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(results[0], other,
                                                                        strict=True))
    motion = mk.read(tmp_path / "intel.c3d")
    scale = 1.0 if floating else 0.25
    want = points[..., :3] * (scale * 1e-3)  # mm, times the scale of integer words
    want[2, 1] = np.nan
    got = np.stack([motion.tracks[name].data for name in ("marker#0", "marker#1", "marker#2")],
                   axis=1)
    assert np.array_equal(got, want, equal_nan=True)
    residuals = motion.tracks["marker_residuals"].data
    expected = (points[..., 3].astype(np.int64) & 0xFF) * ((0.5 if floating else 0.25) * 1e-3)
    expected[2, 1] = -1.0
    assert np.array_equal(residuals, expected)
    channel = motion.tracks["analog/channel#1"].data[:, 0]
    assert np.array_equal(channel, ((analog[:, :, 1].reshape(-1) - 4) * 1.5 * 2.0)
                          .astype(np.float32))


def test_unsigned_integer_analog_is_refused_not_read_as_signed(tmp_path: Path) -> None:
    """ANALOG:FORMAT UNSIGNED: a stored 40000 would read as -25536; refused instead (floats
    carry their sign, so a float file with the same parameter reads)."""
    points, analog = np.zeros((2, 1, 4)), np.array([[[-25536.0]], [[100.0]]])
    unsigned = (("ANALOG", "FORMAT", -1, [8], b"UNSIGNED"),)
    (tmp_path / "int.c3d").write_bytes(_c3d("intel", False, points, analog, unsigned))
    with pytest.raises(mk.FormatError, match="UNSIGNED"):
        mk.read(tmp_path / "int.c3d")
    (tmp_path / "float.c3d").write_bytes(_c3d("intel", True, points, analog, unsigned))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert isinstance(mk.read(tmp_path / "float.c3d"), mk.Motion)


def test_a_file_cut_inside_a_frame_keeps_its_whole_frames(tmp_path: Path) -> None:
    points, analog = _words()
    data = _c3d("intel", True, points, analog)
    frame = (3 * 4 + 2 * 2) * 4
    path = tmp_path / "cut.c3d"
    path.write_bytes(data[:len(data) - frame - 5])  # 7 whole frames and part of the 8th
    with pytest.warns(mk.MotionkitWarning, match="ends after 7 of 9 frames"):
        motion = mk.read(path)
    assert motion.tracks["marker#0"].frames == 7
    assert motion.tracks["analog/channel#0"].frames == 14


def test_slabs_join_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    points, analog = _words(frames=40)
    path = tmp_path / "slabs.c3d"
    path.write_bytes(_c3d("mips", False, points, analog))
    whole = _arrays(mk.read(path))
    monkeypatch.setattr(read, "CHUNK_BYTES", 3 * (3 * 4 + 2 * 2) * 2)  # 3 frames a slab
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(whole, _arrays(
        mk.read(path)), strict=True))


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.c3d")  # no writer: a blocking open would wait for ever
    with warnings.catch_warnings(), pytest.raises(mk.FormatError, match="FIFO"):
        mk.read(tmp_path / "pipe.c3d")
