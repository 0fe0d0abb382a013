"""Property tests: any motion the model can hold survives a .seq round trip exactly."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import motionkit as mk

try:
    import polars as POLARS
except ImportError:  # the loadtxt path is still compared with float()
    POLARS = None

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
names = st.text(st.sampled_from("abcdefghijXYZ_"), min_size=1, max_size=8).filter(
    lambda n: n not in ("root", "links", "joints", "zmp"))
# Names Choreonoid gives a meaning (a link-position or ZMP content) on tracks of any kind.
loaded_names = st.sampled_from(["links", "root", "LinkPosition", "MultiLinkPositionSeq", "ZMP"])
plain_values = st.recursive(
    st.none() | st.booleans() | st.integers() | finite | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6)


@st.composite
def timelines(draw: st.DrawFn, frames: int, stamped_ok: bool) -> mk.Timeline:
    if stamped_ok and draw(st.booleans()):
        steps = draw(arrays(np.float64, frames, elements=st.floats(1e-4, 10.0)))
        start = draw(st.floats(0, 100))
        return mk.Timeline.stamped(start + np.concatenate([[0.0], np.cumsum(steps[1:])]),
                                   rate=draw(st.sampled_from([None, 30.0, 100.0])))
    rate = draw(st.floats(0.5, 5000.0))
    start = draw(st.sampled_from([0.0, 0.0, 1.5, draw(st.floats(0, 1e4))]))
    return mk.Timeline.uniform(rate, frames, start)


def unit_quaternions(data: np.ndarray) -> np.ndarray:
    quats = np.clip(data, -1e6, 1e6)
    norms = np.linalg.norm(quats, axis=-1, keepdims=True)
    quats = np.where(norms > 1e-3, quats / np.where(norms == 0, 1, norms), [0, 0, 0, 1])
    return quats


@st.composite
def motions(draw: st.DrawFn, stamped_ok: bool = True) -> mk.Motion:
    motion = mk.Motion()
    if draw(st.booleans()):
        motion.meta["name"] = draw(st.text(max_size=10))
        motion.meta["loop_mode"] = draw(st.sampled_from(["CLAMP", "WRAP"]))
    plan = draw(st.lists(st.sampled_from(
        ["root", "links", "joints", "zmp", "value", "vector3", "pose", "quaternion"]),
        min_size=1, max_size=5, unique=True))
    for what in plan:
        frames = draw(st.integers(1, 6))
        timeline = draw(timelines(frames, stamped_ok))
        parts = draw(st.integers(1, 4))
        if what in ("root", "links", "pose"):
            shape: tuple[int, ...] = (frames, 7) if what == "root" else (frames, parts, 7)
            if what in ("pose", "links") and draw(st.booleans()):
                shape = (frames, 7)
            data = draw(arrays(np.float64, shape, elements=finite))
            data[..., 3:] = unit_quaternions(data[..., 3:])
            kind = "pose"
        elif what == "quaternion":
            data = unit_quaternions(draw(arrays(np.float64, (frames, parts, 4), elements=finite)))
            kind = "quaternion"
        elif what in ("zmp", "vector3"):
            data = draw(arrays(np.float64, (frames, 3), elements=finite))
            kind = "vector3"
        else:
            data = draw(arrays(np.float64, (frames, parts), elements=finite))
            kind = "value"
        name = what if what in ("root", "links", "joints", "zmp") else draw(names | loaded_names)
        if name in motion.tracks:
            continue
        labels = None
        if draw(st.booleans()):
            count = data.shape[1] if data.ndim == 3 or kind == "value" else 1
            labels = [f"part {i}" for i in range(count)]
        attrs = draw(st.dictionaries(st.text(max_size=4), plain_values, max_size=3))
        if name in ("zmp", "ZMP") and kind == "vector3":  # a ZMP component always says which
            attrs["root_relative"] = draw(st.booleans())
        motion.add(mk.Track(name, kind, data, timeline, labels, attrs))  # type: ignore[arg-type]
    return motion


def assert_same(a: mk.Motion, b: mk.Motion) -> None:
    if "root" in a.tracks and "root" not in b.tracks:  # written once, as part 0 of links
        derived = b.root_pose()
        assert derived is not None
        assert derived.data.tobytes() == a.tracks["root"].data.tobytes()
        assert derived.timeline.same_as(a.tracks["root"].timeline)
        a = mk.Motion({k: v for k, v in a.tracks.items() if k != "root"}, meta=a.meta)
    if "root" in b.tracks and "root" not in a.tracks and "links" in b.tracks:
        assert b.tracks["root"].data.tobytes() == b.tracks["links"].data[:, 0].tobytes()
        b = mk.Motion({k: v for k, v in b.tracks.items() if k != "root"}, meta=b.meta)
    assert set(a.tracks) == set(b.tracks)
    for name, track in a.tracks.items():
        other = b.tracks[name]
        assert other.kind == track.kind, name
        assert other.data.shape == track.data.shape, name
        assert other.data.tobytes() == track.data.astype(np.float64).tobytes(), name
        assert other.timeline.is_uniform == track.timeline.is_uniform
        assert other.times.tobytes() == track.times.tobytes(), name
        assert other.labels == track.labels
        assert other.attrs == track.attrs
    assert {k: v for k, v in b.meta.items() if k not in ("source_format", "choreonoid")} == \
        {k: v for k, v in a.meta.items() if k not in ("source_format", "choreonoid")}


SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(motion=motions(), version=st.sampled_from([2, 3, 4]), fast=st.booleans())
def test_round_trip_is_exact(motion: mk.Motion, version: int, fast: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.seq"
        mk.write(path, motion, version=version)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            again = mk.read(path, fast=fast)
    assert_same(motion, again)


@SETTINGS
@given(motion=motions(stamped_ok=False))
def test_version_1_round_trip_is_exact(motion: mk.Motion) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.yaml"
        mk.write(path, motion, format="seq", version=1)
        assert_same(motion, mk.read(path))


@SETTINGS
@given(motion=motions())
def test_fast_and_full_yaml_paths_agree(motion: mk.Motion) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.seq"
        mk.write(path, motion, precision=9)
        assert_same(mk.read(path, fast=False), mk.read(path, fast=True))


@settings(max_examples=200, deadline=None)
@given(values=arrays(np.float64, st.tuples(st.integers(1, 20), st.integers(1, 6)), elements=finite),
       digits=st.sampled_from([None, 6, 9, 17]))
def test_every_number_parser_reads_the_written_digits_exactly(values: np.ndarray,
                                                              digits: int | None) -> None:
    """polars (when installed), np.loadtxt and the YAML path give float()'s answer bit for bit."""
    from motionkit import _accel

    motion = mk.Motion()
    motion.add(mk.Track("joints", "value", values, mk.Timeline.uniform(10, len(values))))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.seq"
        mk.write(path, motion, precision=digits)
        text = path.read_text()
        lines = [line for line in text.splitlines() if line.startswith("      - [")]
        expected = np.array([[float(v) for v in line[9:-2].split(",")] for line in lines])
        results = [mk.read(path, fast=False).tracks["joints"].data]
        original = _accel.polars_for
        try:
            for module in (None, POLARS):
                _accel.polars_for = lambda size, module=module: module  # type: ignore[misc]
                results.append(mk.read(path).tracks["joints"].data)
        finally:
            _accel.polars_for = original  # type: ignore[assignment]
    for result in results:
        assert result.tobytes() == expected.tobytes()


@settings(max_examples=80, deadline=None)
@given(positions=arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 3), st.just(3)),
                        elements=st.floats(-100, 100)),
       layout=st.sampled_from(["XYZQWQXQYQZ", "XYZQXQYQZQW", "XYZRPY"]),
       timed=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_every_se3_layout_reads_to_xyzw_poses(positions: np.ndarray, layout: str, timed: bool,
                                              seed: int) -> None:
    from scipy.spatial.transform import Rotation

    frames, parts, _ = positions.shape
    rotations = Rotation.random(frames * parts, random_state=seed)
    quats = rotations.as_quat().reshape(frames, parts, 4)
    if layout == "XYZQWQXQYQZ":
        entries = np.concatenate([positions, quats[..., 3:], quats[..., :3]], axis=-1)
    elif layout == "XYZQXQYQZQW":
        entries = np.concatenate([positions, quats], axis=-1)
    else:  # R = Rz(yaw) Ry(pitch) Rx(roll)
        ypr = rotations.as_euler("ZYX").reshape(frames, parts, 3)
        entries = np.concatenate([positions, ypr[..., ::-1]], axis=-1)
    lines = []
    for index, frame in enumerate(entries):
        cells = ", ".join("[ " + ", ".join(repr(float(v)) for v in entry) + " ]" for entry in frame)
        lines.append(f"      - [ {f'{index * 0.25!r}, ' if timed else ''}{cells} ]\n")
    text = ("type: CompositeSeq\nformatVersion: 2\nframeRate: 4\n"
            f"{'hasFrameTime: true' if timed else ''}\ncomponents:\n  -\n    type: MultiSE3Seq\n"
            f"    content: Markers\n    numParts: {parts}\n    SE3Format: {layout}\n"
            "    frames:\n" + "".join(lines))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "se3.seq"
        path.write_text(text)
        fast, slow = mk.read(path), mk.read(path, fast=False)
    track = fast.tracks["Markers"]
    assert track.data.tobytes() == slow.tracks["Markers"].data.tobytes()
    assert track.timeline.is_uniform != timed
    assert np.array_equal(track.data[..., :3], positions)
    if layout == "XYZRPY":
        dots = np.abs(np.sum(track.data[..., 3:] * quats, axis=-1))
        assert np.allclose(dots, 1.0, atol=1e-12)
    else:
        assert np.array_equal(track.data[..., 3:], quats)
