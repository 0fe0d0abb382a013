"""MotionLib.load and packing, made faster without changing a bit of what they build:
the rotation checks run once per pack (not once per motion), each format's reader options
are found once per load, and each path is resolved once.
"""

from __future__ import annotations

import hashlib
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.formats import registry
from motionkit.model import Motion, Timeline, Track
from motionkit.motionlib import MotionLib
from motionkit.motionlib import library as library_module

CORPUS_MS = ("TEASER_TERRAIN.pkl", "dec2024_teaser_717_1_modified_opt.pkl", "sfu.pkl")

#: Digests of every array of ``MotionLib.state()`` as the library built them before.
STATE_DIGESTS = {
    "corpus": "9f64bc70de59c19f178ae619dc0a8bafe1b39c0c78410291c74ad3911db35782",
    "synthetic": "7574fb3fb7374e4a70f9142df94583e77f51175432b5ba9fb098358072961100",
}


def _digest(lib: MotionLib) -> str:
    digest = hashlib.sha256()
    for name, array in sorted(lib.state().items()):
        digest.update(f"{name}{array.dtype.str}{array.shape}".encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def _synthetic(count: int = 12) -> list[Motion]:
    """Motions whose quaternions are off unit norm and of either sign of w."""
    rng = np.random.default_rng(3)
    motions = []
    for index in range(count):
        frames = int(rng.integers(2, 40))
        timeline = Timeline.uniform(float(rng.choice([15.0, 30.0, 60.0])), frames)
        rot = rng.normal(size=(frames, 5, 4)) * rng.uniform(0.5, 2.0, size=(frames, 5, 1))
        root = np.concatenate([rng.normal(size=(frames, 3)) * 10, rot[:, 0]], axis=1)
        motion = Motion(meta={"loop_mode": "WRAP" if index % 2 else "CLAMP"})
        motion.add(Track("root", "pose", root, timeline))
        motion.add(Track("joint_rotations", "quaternion", rot[:, 1:], timeline))
        if index % 3:
            motion.add(Track("contacts", "value", rng.random((frames, 5)), timeline))
        motions.append(motion)
    return motions


def _corpus_list(folder: Path) -> Path:
    lines = ["motions:"]
    for index in range(9):
        name = CORPUS_MS[index % 3]
        target = folder / f"m{index}.pkl"
        shutil.copyfile(corpus_file("parc", "ms", name), target)
        lines.append(f"  - file: {target.name}\n    weight: {1 + index % 4}")
    listing = folder / "list.yaml"
    listing.write_text("\n".join(lines) + "\n")
    return listing


def _quiet_load(source: Path) -> MotionLib:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        return MotionLib.load(source)


def test_the_corpus_library_is_bit_identical_to_before(tmp_path: Path) -> None:
    assert _digest(_quiet_load(_corpus_list(tmp_path))) == STATE_DIGESTS["corpus"]


def test_a_synthetic_library_is_bit_identical_to_before() -> None:
    assert _digest(MotionLib(_synthetic(), weights=np.arange(1, 13))) == STATE_DIGESTS["synthetic"]


def test_the_rotation_check_runs_once_per_pack(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic: two norm computations (roots, joints) for the whole library, where
    each motion was checked twice on its own before."""
    calls = 0
    norms = library_module._norms

    def counted(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nonlocal calls
        calls += 1
        return norms(q)

    monkeypatch.setattr(library_module, "_norms", counted)
    MotionLib(_synthetic(12))
    assert calls == 2


def test_reader_options_are_found_once_per_format(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    options = registry.Format.reader_options

    def counted(self: registry.Format, **context: object) -> dict[str, object]:
        calls.append(self.name)
        return options(self, **context)

    monkeypatch.setattr(registry.Format, "reader_options", counted)
    lib = _quiet_load(_corpus_list(tmp_path))
    assert lib.num_motions == 9
    assert calls == ["parc"]


def _with(motions: list[Motion], index: int, track: str, frame: int,
          value: float) -> list[Motion]:
    data = np.array(motions[index].tracks[track].data)
    if track == "root":
        data[frame, 3:7] = value
    else:
        data[frame, 1] = value
    motions[index].tracks[track] = Track(track, motions[index].tracks[track].kind, data,
                                         motions[index].tracks[track].timeline)
    return motions


@pytest.mark.parametrize(("faults", "expected"), [
    ([(4, "root", 1, 0.0)], "motion 4: root orientation at frame 1 "),
    ([(2, "joint_rotations", 0, np.nan), (2, "root", 1, 0.0)],
     "motion 2: root orientation at frame 1 "),
    ([(1, "joint_rotations", 1, np.inf), (3, "root", 0, 0.0)],
     "motion 1: joint rotation at frame 1 "),
    ([(5, "root", 1, np.nan), (5, "root", 0, np.nan)], "motion 5: root orientation at frame 0 "),
])
def test_the_first_bad_rotation_is_named_as_before(
        faults: list[tuple[int, str, int, float]], expected: str) -> None:
    motions = _synthetic(8)
    for index, track, frame, value in faults:
        motions = _with(motions, index, track, frame, value)
    with pytest.raises(mk.MotionkitError, match=expected.replace("(", r"\(")):
        MotionLib(motions)


def test_an_earlier_bad_rotation_comes_before_a_later_motions_other_fault() -> None:
    motions = _with(_synthetic(8), 2, "root", 1, 0.0)
    del motions[5].tracks["joint_rotations"]
    with pytest.raises(mk.MotionkitError, match="motion 2: root orientation at frame 1"):
        MotionLib(motions)
    motions = _synthetic(8)
    del motions[1].tracks["joint_rotations"]
    with pytest.raises(mk.MotionkitError, match="motion 1 has no joint rotations"):
        MotionLib(_with(motions, 4, "root", 1, 0.0))


def test_a_bad_rotation_comes_before_differing_joint_counts() -> None:
    motions = _synthetic(6)
    timeline = motions[3].tracks["root"].timeline
    motions[3].tracks["joint_rotations"] = Track(
        "joint_rotations", "quaternion", np.ones((timeline.count, 2, 4)), timeline)
    with pytest.raises(mk.MotionkitError, match="different joint counts \\[2, 4\\]"):
        MotionLib(motions)
    with pytest.raises(mk.MotionkitError, match="motion 4: root orientation at frame 0"):
        MotionLib(_with(motions, 4, "root", 0, 0.0))


def test_misc_data_is_never_decoded_for_a_library(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A library uses root, rotations, contacts, rate, loop mode and terrain: the PARC
    reader skips misc data (most of a torch-laden file's read time), same library."""
    from motionkit.formats.shared.pickles import safepickle

    blobs: list[str] = []
    real = safepickle.loads

    def counted(data: bytes, path: object, what: str, *args: object, **kwargs: object) -> object:
        blobs.append(what)
        return real(data, path, what, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(safepickle, "loads", counted)
    assert _digest(_quiet_load(_corpus_list(tmp_path))) == STATE_DIGESTS["corpus"]
    assert blobs and "misc_data" not in blobs
