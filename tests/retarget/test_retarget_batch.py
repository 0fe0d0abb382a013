"""``motionkit batch retarget``: clips in parallel on a local Dask cluster, each the same as
``motionkit retarget`` gives, a broken clip failing alone."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import corpus_file
from motionkit.cli import main


def test_batch_retarget_gives_gmr_output_per_clip_and_fails_a_broken_one_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = corpus_file("retarget", "bvh_to_g1.json").parent
    mocap = tmp_path / "mocap"
    (mocap / "deep").mkdir(parents=True)
    shutil.copy(corpus_file("bvh", "test_freebvh.bvh"), mocap / "a.bvh")
    shutil.copy(corpus_file("bvh", "test_freebvh.bvh"), mocap / "deep" / "b.bvh")
    (mocap / "broken.bvh").write_text("HIERARCHY\nROOT x\n")
    command = ["batch", "retarget", str(mocap), "--out", str(tmp_path / "out"), "--to", "gmr",
               "-j", "2", "--robot", str(folder / "g1_mocap_29dof_nomesh.xml"),
               "--map", str(folder / "bvh_to_g1.json"),
               "--rename", str(folder / "freebvh_lafan1_names.json"),
               "--frame-fix", str(folder / "freebvh_orientation_correction.json")]
    with pytest.raises(SystemExit):
        main(command)  # the default mode first: a rerun with other options must redo it
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main([*command, "--like-gmr"])
    out, err = capsys.readouterr()
    assert done.value.code == 2, err
    assert out.splitlines() == [f"{mocap / 'broken.bvh'}:2:7: file ends where a joint name "
                                "and '{' should be"]
    gmr = np.load(corpus_file("retarget", "freebvh_corrected_gmr.npz"))
    for written in (tmp_path / "out" / "a.pkl", tmp_path / "out" / "deep" / "b.pkl"):
        with open(written, "rb") as handle:
            clip = pickle.load(handle)
        assert np.degrees(np.abs(clip["dof_pos"] - gmr["dof_pos"])).max() < 1e-3


def test_a_batch_job_carries_every_retargeting_option_to_its_worker() -> None:
    """A job crosses the sandbox pipe as JSON: the options come back equal (the feet a
    tuple again, not a JSON list)."""
    import json

    from motionkit.dataset.batch import Job, _job_json, _job_of
    from motionkit.retarget import Options, Plan

    options = Options(height=1.6, ground_clearance=0.01, max_joint_speed=3.0,
                      plant_feet=False, feet=("left_ankle_roll_link", "right_ankle_roll_link"),
                      smoothing=10.0)
    job = Job("retarget", Path("out"), "gmr", None, False, False,
              plan=Plan("g1.xml", "map.json", options=options))
    again = _job_of(json.loads(json.dumps(_job_json(job))))
    assert again.plan is not None and again.plan.options == options
