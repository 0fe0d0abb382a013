"""``convert A A`` is refused unless ``--in-place``; an existing target is "replaced"."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import corpus_file
from seqfiles import V4_ALL
from test_cli import run_cli


@pytest.mark.parametrize("spelling", ["same", "relative", "symlink"])
def test_convert_onto_its_source_is_refused_without_in_place(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        spelling: str) -> None:
    source = tmp_path / "walk.seq"
    source.write_text(V4_ALL)
    monkeypatch.chdir(tmp_path)
    target = {"same": str(source), "relative": "./sub/../walk.seq", "symlink": "link.seq"}[spelling]
    (tmp_path / "sub").mkdir()
    if spelling == "symlink":
        os.symlink(source, tmp_path / "link.seq")
    code, _, err = run_cli(["convert", str(source), target, "-O", "precision=9"], capsys)
    assert code == 2 and "--in-place" in err and len(err.strip().splitlines()) == 1
    assert source.read_text() == V4_ALL  # untouched


def test_convert_in_place_replaces_the_source_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "walk.seq"
    source.write_text(V4_ALL)
    code, out, _ = run_cli(["convert", str(source), str(source), "--in-place", "-O",
                            "precision=9"], capsys)
    assert code == 0 and out.startswith(f"replaced {source}")
    assert source.read_text() != V4_ALL


def test_convert_says_wrote_for_a_new_target_and_replaced_for_an_old_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "walk.seq"
    source.write_text(V4_ALL)
    target = tmp_path / "out.seq"
    code, out, _ = run_cli(["convert", str(source), str(target)], capsys)
    assert code == 0 and out.startswith(f"wrote {target}")
    code, out, _ = run_cli(["convert", str(source), str(target)], capsys)
    assert code == 0 and out.startswith(f"replaced {target}")


def test_a_bag_address_onto_its_own_bag_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = tmp_path / "run.bag"
    shutil.copy(corpus_file("evo", "ROS_example.bag"), bag)
    before = bag.read_bytes()
    code, _, err = run_cli(["convert", f"{bag}:/groundtruth", str(bag), "--lossy"], capsys)
    assert code == 2 and "input of this command" in err
    assert bag.read_bytes() == before


@pytest.mark.parametrize("selector", ["/ORB-SLAM", "ORB-SLAM"])
def test_both_bag_address_spellings_read_a_topic_without_a_slash(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], selector: str) -> None:
    bag = corpus_file("evo", "ROS_example.bag")
    target = tmp_path / "orb.tum"
    code, out, err = run_cli(["convert", f"{bag}:{selector}", str(target)], capsys)
    assert code == 0, err
    assert "8362 frames" in out


def test_the_bag_hint_gives_an_address_that_works(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = corpus_file("evo", "ROS_example.bag")
    code, _, err = run_cli(["convert", str(bag), str(tmp_path / "x.tum")], capsys)
    assert code == 2
    spelled = err.split("BAG:", 1)[1].split()[0].rstrip(")")
    code, _, err = run_cli(["convert", f"{bag}:{spelled}", str(tmp_path / "x.tum")], capsys)
    assert code == 0, err


def test_resample_onto_its_source_needs_in_place(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "walk.seq"
    source.write_text(V4_ALL)
    code, _, err = run_cli(["resample", str(source), str(source), "--rate", "50"], capsys)
    assert code == 2 and "--in-place" in err and source.read_text() == V4_ALL
    code, out, _ = run_cli(["resample", str(source), str(source), "--rate", "50", "--in-place"],
                           capsys)
    assert code == 0 and out.startswith(f"replaced {source}")


def test_a_model_is_never_replaced_even_in_place(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    body = tmp_path / "SR1.body"
    shutil.copy(corpus_file("choreonoid", "SR1.body"), body)
    before = body.read_bytes()
    code, _, err = run_cli(["convert", str(corpus_file("choreonoid", "SR1WalkPattern1.seq")),
                            str(body), "--model", str(body), "--in-place"], capsys)
    assert code == 2 and "input of this command" in err and body.read_bytes() == before


def test_in_place_is_refused_for_a_topic_of_a_bag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The written bag would hold the one topic: the bag's other topics would be lost."""
    bag = tmp_path / "run.bag"
    shutil.copy(corpus_file("evo", "ROS_example.bag"), bag)
    before = bag.read_bytes()
    code, _, err = run_cli(["convert", f"{bag}:/groundtruth", str(bag), "--in-place",
                            "--lossy"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "one part of" in err and "--in-place to replace" not in err
    assert bag.read_bytes() == before


def test_in_place_onto_a_link_says_the_link_was_replaced(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "walk.seq"
    source.write_text(V4_ALL)
    os.symlink(source, tmp_path / "link.seq")
    code, out, err = run_cli(["convert", str(source), str(tmp_path / "link.seq"), "--in-place",
                              "-O", "precision=9"], capsys)
    assert code == 0, err
    assert out.startswith(f"replaced the link {tmp_path / 'link.seq'}") and str(source) in out
    assert source.read_text() == V4_ALL and not (tmp_path / "link.seq").is_symlink()
