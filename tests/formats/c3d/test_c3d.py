"""C3D: the three corpus files against the ezc3d/c3d oracles (points exactly, invalid
samples exactly, labels, rates, analog channels), bounds, and the rigid-body fit."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.formats.c3d.read import rigid_track

FILES = {"Optotrak": 59, "Qualisys": 0, "Vicon": 305}


def _read(name: str, **options: object) -> mk.Motion:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optotrak ends early (both libraries warn too)
        motion = mk.read(corpus_file("containers", "c3d", f"{name}.c3d"), **options)
    assert isinstance(motion, mk.Motion)
    return motion


@pytest.mark.parametrize("name", list(FILES))
def test_points_equal_the_oracles(name: str) -> None:
    motion = _read(name)
    oracle = np.load(corpus_file("containers", "c3d", f"{name}_oracle.npz"))
    labels = [str(label) for label in oracle["labels"]]
    points = np.stack([motion.tracks[label].data for label in labels], axis=1)
    in_file_units = (points * 1000.0).astype(np.float32)  # metres back to mm
    assert in_file_units.shape == oracle["points"].shape
    assert np.array_equal(in_file_units, oracle["points"], equal_nan=True)
    invalid = np.isnan(points).any(axis=2)
    assert int(invalid.sum()) == FILES[name]
    assert np.array_equal(invalid, oracle["residuals"] == -1)  # c3d's invalid marks
    residuals = motion.tracks["marker_residuals"]
    assert np.array_equal(residuals.data < 0, invalid)
    assert motion.tracks[labels[0]].timeline.rate == float(oracle["rate"])
    assert motion.tracks[labels[0]].timeline.start == int(oracle["first_frame"]) / float(
        oracle["rate"])


@pytest.mark.parametrize("name", ["Qualisys", "Vicon"])
def test_analog_channels_at_their_own_rate(name: str) -> None:
    motion = _read(name)
    oracle = np.load(corpus_file("containers", "c3d", f"{name}_oracle.npz"))
    labels = [f"analog/{label}" for label in oracle["analog_labels"]]
    first = motion.tracks[labels[0]]
    assert first.timeline.rate == float(oracle["analog_rate"])
    assert first.frames == int(oracle["analog_shape"][0])
    values = np.stack([motion.tracks[label].data[:100, 0] for label in labels], axis=1)
    assert np.array_equal(values.astype(np.float32), oracle["analogs_first100"])


def test_labels_as_written() -> None:
    vicon = _read("Vicon")
    assert "boite:gauche_ext" in vicon.tracks
    assert vicon.meta["c3d"]["units"] == "mm"


def test_a_truncated_parameter_section_is_refused(tmp_path: Path) -> None:
    data = corpus_file("containers", "c3d", "Vicon.c3d").read_bytes()
    start = (data[0] - 1) * 512
    path = tmp_path / "cut.c3d"
    path.write_bytes(data[:start + 700])
    with pytest.raises(mk.FormatError, match="truncated"):
        mk.read(path)
    path.write_bytes(data[:300])
    with pytest.raises(mk.FormatError):
        mk.read(path)


def test_rigid_pose_of_the_box_markers() -> None:
    names = ["boite:gauche_ext", "boite:gauche_int", "boite:droite_int", "boite:droite_ext"]
    motion = _read("Vicon", rigid=",".join(names))
    root = motion.tracks["root"]
    reference = np.stack([motion.tracks[n].data[root.attrs["reference_frame"]] for n in names])
    centre = reference.mean(axis=0)
    index = {t: i for i, t in enumerate(np.round(motion.tracks[names[0]].times, 9))}
    errors = []
    for pose, time in zip(root.data, np.round(root.times, 9), strict=True):
        predicted = Rotation.from_quat(pose[3:]).apply(reference - centre) + pose[:3]
        actual = np.stack([motion.tracks[n].data[index[time]] for n in names])
        ok = np.isfinite(actual).all(axis=1)
        errors.append(np.abs(predicted[ok] - actual[ok]).max())
    assert max(errors) < 0.005  # a box: rigid to a few millimetres


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), frames=st.integers(1, 5))
def test_rigid_fit_recovers_a_rigid_motion(seed: int, frames: int) -> None:
    rng = np.random.default_rng(seed)
    shape = rng.normal(size=(4, 3))
    rotations = Rotation.random(frames, random_state=seed)
    offsets = rng.normal(size=(frames, 3))
    timeline = mk.Timeline.uniform(100.0, frames)
    motion = mk.Motion()
    for k in range(4):
        motion.add(mk.Track(f"m{k}", "vector3", rotations.apply(shape[k]) + offsets, timeline))
    track = rigid_track(motion, ["m0", "m1", "m2", "m3"], "test")
    reference = np.stack([motion.tracks[f"m{k}"].data[0] for k in range(4)])
    centre = reference.mean(axis=0)
    for frame in range(frames):
        pose = track.data[frame]
        got = Rotation.from_quat(pose[3:]).apply(reference - centre) + pose[:3]
        want = np.stack([motion.tracks[f"m{k}"].data[frame] for k in range(4)])
        assert np.abs(got - want).max() < 1e-9


def test_dec_and_mips_floats() -> None:
    from motionkit.formats.c3d.parse import floats

    ieee = np.array([1.0, -2.5, 1000.0, 3.25e-3], dtype="<f4")
    dec = np.ascontiguousarray((ieee * 4).view("<u2").reshape(-1, 2)[:, ::-1]).tobytes()
    assert np.array_equal(floats(dec, "dec"), ieee)
    assert np.array_equal(floats(ieee.astype(">f4").tobytes(), "mips"), ieee)


@pytest.mark.parametrize("name", list(FILES))
def test_points_equal_ezc3d_and_c3d_live(name: str) -> None:
    ezc3d = require_peer("ezc3d")
    c3d = require_peer("c3d")
    path = corpus_file("containers", "c3d", f"{name}.c3d")
    motion = _read(name)
    ours = np.stack([motion.tracks[label].data for label in _labels(motion)], axis=1)
    ours = (ours * 1000.0).astype(np.float32)
    theirs = ezc3d.c3d(str(path))["data"]["points"][:3]  # type: ignore[attr-defined]
    theirs = np.transpose(theirs, (2, 1, 0)).astype(np.float32)
    assert np.array_equal(ours, theirs, equal_nan=True)
    with open(path, "rb") as handle, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reader = c3d.Reader(handle)  # type: ignore[attr-defined]
        frames = [points for _, points, _ in reader.read_frames()]
    table = np.stack(frames).astype(np.float32)  # (frames, markers, 5): x y z residual cameras
    invalid = table[..., 3] < 0
    assert np.array_equal(invalid, np.isnan(ours).any(axis=2))
    assert np.array_equal(ours[~invalid], table[..., :3][~invalid])
    # residuals: low byte of the fourth word times |POINT:SCALE|, as c3d gives them
    residuals = motion.tracks["marker_residuals"].data
    assert np.allclose(residuals[~invalid] * 1000.0, table[..., 3][~invalid], rtol=1e-6,
                       atol=1e-6)


def _labels(motion: mk.Motion) -> list[str]:
    residuals = motion.tracks["marker_residuals"]
    assert residuals.labels is not None
    return residuals.labels
