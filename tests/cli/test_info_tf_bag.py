"""``info`` on a bag of TF only shows its edges and exits 0 (issue 25)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import motionkit as mk
from test_cli import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "formats" / "rosbag"))
from test_rosbag import _tf_bag  # the bag builder of the rosbag tests


def test_info_on_a_tf_only_bag_lists_its_edges(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "tf_only"
    _tf_bag(folder, [10**9, 2 * 10**9, 3 * 10**9])
    with pytest.raises(mk.FormatError):  # reading it as a motion is still refused
        mk.read(folder)
    code, out, err = run_cli(["info", str(folder)], capsys)
    assert code == 0, err
    assert "tf map -> base: 3 transforms over 2 s" in out
    assert f"{folder}:tf:PARENT->CHILD" in out
    code, out, _ = run_cli(["info", "--json", str(folder)], capsys)
    assert code == 0 and json.loads(out)["format"] == "rosbag"
    # the address the survey gives reads the chain
    assert mk.read(f"{folder}:tf:map->base").frames == 3


def test_info_on_a_bag_with_nothing_to_show_still_fails(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import corpus_file

    code, _, err = run_cli(["info", str(corpus_file("rosbag2", "only_services.mcap"))], capsys)
    assert code == 2 and "motionkit: error:" in err and "Traceback" not in err
