"""``MotionLib.load(..., filter=...)``: a training loop never sees a clip the filter
drops (a check preset, or a function of the motion)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.motionlib import MotionLib
from quality.clips import sunk_sfu


def _folder(tmp_path: Path) -> Path:
    """sfu.pkl as it is, and a copy with frame 7 pushed 0.12 m into the ground."""
    return sunk_sfu(tmp_path / "clips")[0].parent


def test_a_check_preset_drops_the_bad_clip(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    character = corpus_file("parc", "character", "humanoid.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        everything = MotionLib.load(folder, character)
        checked = MotionLib.load(folder, character, filter="default")
    assert everything.names == ["good", "sunk"] and everything.dropped == []
    assert checked.names == ["good"]
    assert [(Path(path).name, why) for path, why in checked.dropped] == [
        ("sunk.pkl", "fail:below_ground")]
    ids = checked.sample_motions(200, np.random.default_rng(0))
    assert set(np.asarray(ids).tolist()) == {0}


def test_a_function_filters_and_a_filter_that_keeps_nothing_is_refused(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    character = corpus_file("parc", "character", "humanoid.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        good = mk.read(folder / "good.pkl")
        assert isinstance(good, mk.Motion)
        height = float(good.tracks["root"].data[7, 2]) - 0.06
        kept = MotionLib.load(folder, character,
                              filter=lambda m: float(m.tracks["root"].data[7, 2]) > height)
    assert kept.names == ["good"] and [why for _, why in kept.dropped] == ["fail:filter"]
    with warnings.catch_warnings(), pytest.raises(mk.ConversionError, match="leaves no motion"):
        warnings.simplefilter("ignore")
        MotionLib.load(folder, character, filter=lambda m: False)
