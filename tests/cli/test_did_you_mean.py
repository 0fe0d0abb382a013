"""A name not found is answered with the closest names (difflib), wherever it is looked up."""

from __future__ import annotations

from pathlib import Path

import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.errors import choices
from motionkit.formats import registry
from test_cli import run_cli


def test_the_helper_puts_the_close_names_first_even_beyond_the_listing() -> None:
    names = [f"BODY{i}" for i in range(40)] + ["RLEG_ANKLE_R"]
    text = choices("RLEG_ANKEL_R", names, "bodies")
    assert text.startswith("did you mean 'RLEG_ANKLE_R'?")
    assert "(41 in all)" in text
    assert choices("zzzz", ["tum", "seq"]) == "known: tum, seq"
    assert choices("TUM", ["tum"]).startswith("did you mean 'tum'?")


def test_a_misspelt_body_is_answered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = corpus_file("choreonoid", "SR1.body")
    seq = corpus_file("choreonoid", "SR1WalkPattern1.seq")
    code, _, err = run_cli(["fk", str(body), str(seq), str(tmp_path / "f.tum"), "--body",
                            "RLEG_ANKEL_R"], capsys)
    assert code == 2 and "did you mean 'RLEG_ANKLE_R'" in err
    code, _, err = run_cli(["convert", str(seq), str(tmp_path / "f.tum"), "--model", str(body),
                            "-O", "link=RLEG_ANKEL_R", "--lossy"], capsys)
    assert code == 2 and "did you mean 'RLEG_ANKLE_R'" in err
    skeleton = mk.read(body)
    with pytest.raises(KeyError, match="did you mean 'RLEG_ANKLE_R'"):
        skeleton.body_index("RLEG_ANKEL_R")
    with pytest.raises(KeyError, match="did you mean"):
        skeleton.joint(skeleton.bodies[3].joint.name + "x")


def test_misspelt_formats_options_and_topics(tmp_path: Path) -> None:
    with pytest.raises(mk.MotionkitError, match="did you mean 'kitti'"):
        registry.by_name("kiti")
    source = corpus_file("evo", "fr2_desk_groundtruth.txt")
    with pytest.raises(mk.MotionkitError, match="did you mean 'precision'"):
        mk.convert(source, tmp_path / "x.tum", precison=3)
    with pytest.raises(mk.MotionkitError, match="did you mean 'quaternion_order'"):
        mk.read(source, quaternion_ordr="wxyz")
    with pytest.raises(mk.FormatError, match="did you mean 'ORB-SLAM'"):
        mk.read(f"{corpus_file('evo', 'ROS_example.bag')}:/ORB_SLAM")
    with pytest.raises(mk.MotionkitError, match="did you mean 'linear'"):
        mk.ops.resample(mk.read(source, dedupe=True), 10, method="linaer")


def test_a_misspelt_joint_to_plot_is_answered(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["plot", str(corpus_file("choreonoid", "SR1WalkPattern1.seq")),
                            "--model", str(corpus_file("choreonoid", "SR1.body")), "--joints",
                            "RLEG_KNE", "-o", str(tmp_path / "k.svg")], capsys)
    assert code == 2 and "did you mean 'RLEG_KNEE'" in err


def test_names_that_differ_only_in_case_are_both_offered() -> None:
    from motionkit.errors import did_you_mean

    text = did_you_mean("HIP", ["Hip", "hip", "knee"])
    assert "'Hip'" in text and "'hip'" in text
