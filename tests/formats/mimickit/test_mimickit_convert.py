"""MimicKit motions through ``mk.convert`` to and from PARC MS, ``.seq`` and ``.traj`` (the
loss rule: refused by name, or dropped with a warning under lossy), and MimicKit's dataset
list in MotionLib."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

import motionkit as mk
from conftest import corpus_file
from motionkit.motionlib.library import MotionLib

pytestmark = pytest.mark.corpus


def _humanoid() -> Path:
    return corpus_file("parc", "character", "humanoid.xml")


def _platform() -> Path:
    return corpus_file("mimickit", "humanoid_platform05.pkl")


def _quiet_read(path: Path, **options: object) -> mk.Motion:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        motion = mk.read(path, **options)
    assert isinstance(motion, mk.Motion)
    return motion


def test_mimickit_to_parc_ms_and_back(tmp_path: Path) -> None:
    with pytest.raises(mk.ConversionError, match="character"):
        mk.convert(_platform(), tmp_path / "ms.pkl")  # .pkl writes PARC by default
    mk.convert(_platform(), tmp_path / "ms.pkl", character=_humanoid())
    source = mk.read(_platform(), character=_humanoid())
    parc = _quiet_read(tmp_path / "ms.pkl", format="parc", character=_humanoid())
    assert parc.meta["source_format"] == "parc" and parc.meta["loop_mode"] == "CLAMP"
    np.testing.assert_allclose(parc.tracks["root"].data, source.tracks["root"].data,
                               rtol=0, atol=2e-6)  # PARC stores float32
    np.testing.assert_allclose(parc.tracks["joint_rotations"].data,
                               source.tracks["joint_rotations"].data, rtol=0, atol=2e-6)
    mk.convert(tmp_path / "ms.pkl", tmp_path / "back.pkl", from_format="parc",
               to_format="mimickit", character=_humanoid())
    back = mk.read(tmp_path / "back.pkl", character=_humanoid())
    assert back.meta["loop_mode"] == "CLAMP" and back.tracks["root"].timeline.rate == 30
    np.testing.assert_allclose(back.tracks["joints"].data, source.tracks["joints"].data,
                               rtol=0, atol=1e-5)


def test_parc_files_with_contacts_and_terrain_convert_only_lossily() -> None:
    for parts in (("parc", "ms", "sfu.pkl"), ("parc", "legacy_v0.1", "TEASER_TERRAIN.pkl")):
        source = corpus_file(*parts)
        target = source.parent / "never-written.pkl"
        with pytest.raises(mk.ConversionError, match=r"'contacts'.*the terrain"):
            mk.convert(source, target, to_format="mimickit", character=_humanoid())
        assert not target.exists()


def test_parc_ms_to_mimickit_drops_contacts_and_terrain_with_a_warning(tmp_path: Path) -> None:
    source = corpus_file("parc", "ms", "sfu.pkl")
    with pytest.warns(mk.MotionkitWarning, match=r"dropped track 'contacts'; the terrain"):
        mk.convert(source, tmp_path / "mk.pkl", to_format="mimickit", character=_humanoid(),
                   lossy=True)
    parc = _quiet_read(source, character=_humanoid())
    out = mk.read(tmp_path / "mk.pkl", character=_humanoid())
    np.testing.assert_array_equal(out.tracks["root"].data[:, :3],
                                  parc.tracks["root"].data[:, :3])
    dots = np.abs(np.sum(out.tracks["joint_rotations"].data
                         * parc.tracks["joint_rotations"].data, axis=-1))
    np.testing.assert_allclose(dots, 1.0, rtol=0, atol=1e-6)  # PARC's float32 quaternions


def test_mimickit_to_seq_and_back(tmp_path: Path) -> None:
    source = corpus_file("mimickit", "g1_walk.pkl")
    mk.convert(source, tmp_path / "walk.seq")
    mk.convert(tmp_path / "walk.seq", tmp_path / "walk.pkl", to_format="mimickit")
    before, after = mk.read(source), mk.read(tmp_path / "walk.pkl")
    assert after.meta["loop_mode"] == "WRAP" and after.tracks["root"].timeline.rate == 120
    for name in ("root", "joints"):
        np.testing.assert_allclose(after.tracks[name].data, before.tracks[name].data,
                                   rtol=0, atol=1e-12)


def test_mimickit_to_traj_keeps_the_root_only_when_lossy(tmp_path: Path) -> None:
    source = corpus_file("mimickit", "g1_walk.pkl")
    with pytest.raises(mk.ConversionError, match=r"track 'joints'.*'loop_mode'"):
        mk.convert(source, tmp_path / "walk.traj")
    with pytest.warns(mk.MotionkitWarning, match="'joints'"):
        mk.convert(source, tmp_path / "walk.traj", lossy=True)
    root = _quiet_read(tmp_path / "walk.traj").tracks["root"]
    np.testing.assert_allclose(root.data, mk.read(source).tracks["root"].data, rtol=0,
                               atol=1e-12)
    with pytest.raises(mk.ConversionError, match="2 frames or more"), \
            pytest.warns(mk.MotionkitWarning, match="'sorting'"):
        mk.convert(tmp_path / "walk.traj", tmp_path / "again.pkl", to_format="mimickit",
                   rate=0.001, lossy=True)


def test_the_mimickit_dataset_list_loads_in_motionlib(tmp_path: Path) -> None:
    """MimicKit's locomotion list with every listed file present (each a copy of a real
    humanoid motion) under the list's folder, which here is also the repository root."""
    listing = tmp_path / "dataset_humanoid_locomotion.yaml"
    shutil.copy(corpus_file("mimickit", "dataset_humanoid_locomotion.yaml"), listing)
    entries = yaml.safe_load(listing.read_text())["motions"]
    for entry in entries:
        target = tmp_path / entry["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            shutil.copy(_platform(), target)
    library = MotionLib.load(listing, character=_humanoid())
    weights = np.array([entry["weight"] for entry in entries], dtype=float)
    assert library.num_motions == len(entries) == 56
    np.testing.assert_allclose(library.weights, weights / weights.sum())
    motion = mk.read(_platform(), character=_humanoid())
    frames = library.frames_at(np.array([0, 55]), np.array([0.0, 0.0]))
    np.testing.assert_allclose(frames.root_pos, motion.tracks["root"].data[[0, 0], :3],
                               rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.abs(np.sum(frames.joint_rot * motion.tracks[
        "joint_rotations"].data[[0, 0]], axis=-1)), 1.0, rtol=0, atol=1e-6)
    with pytest.raises(mk.MotionkitError, match="no character to derive them"):
        MotionLib.load(listing)


def test_a_folder_of_mimickit_motions_loads_in_motionlib(tmp_path: Path) -> None:
    shutil.copy(_platform(), tmp_path / "a.pkl")
    mk.convert(_platform(), tmp_path / "b.pkl", character=_humanoid())  # PARC MS beside it
    library = MotionLib.load(tmp_path, character=_humanoid())
    assert library.num_motions == 2
    frames = library.frames_at(np.array([0, 1]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(frames.root_pos[0], frames.root_pos[1], rtol=0, atol=1e-5)
