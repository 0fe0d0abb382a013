"""The corpus motions of the quality oracle (spec containers-and-quality §7.4), read with
their models, and the oracle's planted defects applied as root-track edits."""

from __future__ import annotations

import json
import shutil
import warnings
from functools import cache
from pathlib import Path

import numpy as np

import motionkit as mk
from conftest import corpus_file

#: oracle name -> (motion, model, reader options)
CLIPS = {
    "humanoid_platform05": (("mimickit", "humanoid_platform05.pkl"),
                            ("parc", "character", "humanoid.xml"), {}),
    "parc_sfu": (("parc", "ms", "sfu.pkl"), ("parc", "character", "humanoid.xml"), {}),
    "parc_teaser_717": (("parc", "ms", "dec2024_teaser_717_1_modified_opt.pkl"),
                        ("parc", "character", "humanoid.xml"), {}),
    "g1_walk": (("mimickit", "g1_walk.pkl"), ("containers", "characters", "g1.xml"), {}),
    "g1_kimodo_walk": (("containers", "isaaclab", "g1_kimodo_walk.csv"),
                       ("containers", "characters", "g1_bm_no_mesh_box_feet.xml"),
                       {"format": "g1csv-kimodo"}),
}
PARC_TERRAIN = ("sfu.pkl", "TEASER_TERRAIN.pkl", "dec2024_teaser_717_1_modified_opt.pkl")


@cache
def oracle() -> dict[str, dict[str, object]]:
    loaded: dict[str, dict[str, object]] = json.loads(
        corpus_file("containers", "quality", "quality_oracle.json").read_text())
    return loaded


@cache
def model(*parts: str) -> mk.Skeleton:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # meshes not copied; PARC's floor geom
        read = mk.read(corpus_file(*parts))
    assert isinstance(read, mk.Skeleton)
    return read


def clip(name: str) -> tuple[mk.Motion, mk.Skeleton]:
    """The oracle's motion ``name`` and its model."""
    motion_parts, model_parts, options = CLIPS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        motion = mk.read(corpus_file(*motion_parts), character=corpus_file(*model_parts),
                         **options)
    assert isinstance(motion, mk.Motion)
    return motion, model(*model_parts)


def with_defect(motion: mk.Motion, skeleton: mk.Skeleton, name: str, variant: str) -> mk.Motion:
    """``motion`` with the oracle's planted defect ``variant``: a rigid shift of whole
    frames, as an edit of the root track (float64, as the oracle shifted its positions)."""
    if variant == "original":
        return motion
    facts = oracle()[name]
    fps = float(facts["fps"])  # type: ignore[arg-type]
    root = np.asarray(motion.tracks["root"].data, dtype=np.float64).copy()
    frames = np.arange(len(root))
    if variant == "sunk_frame_10cm":
        frame = int(facts["defect_frame"])  # type: ignore[call-overload]
        lowest = mk.kinematics.link_poses(skeleton, motion).data[frame, :, 2].min()
        root[frame, 2] += -0.10 - lowest
    elif variant == "root_spike_20mps":
        root[int(facts["defect_frame"]), 0] += 20.0 / fps  # type: ignore[call-overload]
    elif variant == "float_1s_0p3m":
        first, stop = facts["float_frames"]  # type: ignore[misc]
        ramp = int(facts["float_ramp_frames"])  # type: ignore[call-overload]
        rise = np.minimum((frames - (first - ramp)) / ramp, (stop - 1 + ramp - frames) / ramp)
        root[:, 2] += 0.3 * np.clip(rise, 0.0, 1.0)
    elif variant == "foot_slide_0p5m":
        first, stop = facts["slide_frames"]  # type: ignore[misc]
        root[:, 0] += 0.5 * np.clip((frames - first) / (stop - 1 - first), 0.0, 1.0)
    else:
        raise ValueError(variant)
    tracks = dict(motion.tracks)
    tracks["root"] = motion.tracks["root"].with_data(root)
    return mk.Motion(tracks, motion.skeleton, motion.terrain, dict(motion.meta))


def sunk_sfu(folder: Path) -> tuple[Path, Path]:
    """PARC's sfu clip in ``folder`` as it is (``good.pkl``: it passes) and with frame 7
    pushed 0.12 m into the ground (``sunk.pkl``: a root-track edit), as (good, sunk)."""
    folder.mkdir(parents=True, exist_ok=True)
    good, sunk = folder / "good.pkl", folder / "sunk.pkl"
    shutil.copy(corpus_file("parc", "ms", "sfu.pkl"), good)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        motion = mk.read(good)
    assert isinstance(motion, mk.Motion)
    root = np.asarray(motion.tracks["root"].data, dtype=np.float64).copy()
    root[7, 2] -= 0.12
    motion.tracks["root"] = motion.tracks["root"].with_data(root.astype(np.float32))
    mk.write(sunk, motion)
    return good, sunk
