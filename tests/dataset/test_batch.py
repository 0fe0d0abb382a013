"""motionkit batch on a real Dask cluster: conversions, failures, the catalog, reruns."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

import motionkit as mk
from motionkit.cli import cli
from motionkit.dataset.batch import Job, run_batch
from motionkit.dataset.files import expand

from .dask_helpers import Cluster, dask_cluster, make_dataset


def _motionkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "motionkit", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path], list[Path]]:
    root = tmp_path_factory.mktemp("data") / "in"
    good, broken = make_dataset(root, 200)
    return root, good, broken


def test_batch_convert_on_a_cluster_converts_every_good_file_and_lists_the_broken(
        cluster: Cluster, dataset: tuple[Path, list[Path], list[Path]], tmp_path: Path) -> None:
    root, good, broken = dataset
    out = tmp_path / "out"
    done = _motionkit("batch", "convert", str(root), "--out", str(out), "--to", "traj",
                      "--scheduler", cluster.address)
    assert done.returncode == 2, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(broken)
    for path in broken:  # one line each, the control character escaped
        shown = str(path).replace("\x1b", "\\x1b")
        assert any(line.startswith(shown + ":") for line in lines), (shown, lines)
    assert "\x1b" not in done.stdout
    (tmp_path / "one").mkdir()
    for path in good:
        target = out / path.relative_to(root).with_suffix(".traj")
        single = tmp_path / "one" / target.name  # same name: the name goes into the file
        mk.convert(path, single)
        assert target.read_bytes() == single.read_bytes(), path
    for path in broken:
        assert not (out / path.relative_to(root).with_suffix(".traj")).exists()
    assert not list(out.rglob("*.part"))

    catalog = pl.read_parquet(out / "catalog.parquet")
    assert catalog.height == len(good) + len(broken)
    rows = {row["path"]: row for row in catalog.iter_rows(named=True)}
    for path in broken:
        row = rows[str(path.absolute())]
        assert row["status"] == "failed" and row["error"]
    runner = CliRunner()
    for path in good[::7]:
        row = rows[str(path.absolute())]
        result = runner.invoke(cli, ["info", "--json", str(path)])
        doc = json.loads(result.output)
        assert row["status"] == "ok" and row["error"] is None
        assert (row["format"], row["frames"], row["duration"]) == (
            doc["format"], doc["frames"], doc["duration"])
        assert row["tracks"] == list(doc["tracks"])
        assert row["shapes"] == [t["shape"] for t in doc["tracks"].values()]
        assert row["rate"] == doc["tracks"]["root"].get("rate")
        assert row["stamped"] == bool(doc["tracks"]["root"].get("stamped"))
        assert row["terrain"] is ("terrain" in doc)
        assert row["size"] == path.stat().st_size and len(row["sha256"]) == 64


def test_a_rerun_converts_nothing_and_a_touched_input_exactly_once(
        cluster: Cluster, dataset: tuple[Path, list[Path], list[Path]], tmp_path: Path) -> None:
    root, good, _ = dataset
    items = expand([str(root / "group1"), str(root / "group2")])
    job = Job("convert", tmp_path / "out", to_format="tum", lossy=True)
    first = run_batch(job, items, scheduler=cluster.address)
    assert {o.status for o in first} == {"converted", "failed"}
    again = run_batch(job, items, scheduler=cluster.address)
    assert [o.status for o in again] == [
        "skipped" if o.status == "converted" else "failed" for o in first]
    touched = next(p for p in good if "group2" in p.parts)
    later = time.time() + 5
    os.utime(touched, (later, later))
    third = run_batch(job, items, scheduler=cluster.address)
    assert [o.source for o in third if o.status == "converted"] == [str(touched.absolute())]
    quiet = expand([str(root / "group4")])  # no broken file: a rerun needs no cluster at all
    run_batch(Job("convert", tmp_path / "out4", to_format="tum", lossy=True), quiet,
              scheduler=cluster.address)
    assert {o.status for o in run_batch(Job("convert", tmp_path / "out4", to_format="tum"), quiet,
                                        scheduler="tcp://127.0.0.1:9")} == {"skipped"}
    forced = run_batch(Job("convert", job.out, to_format="tum", lossy=True, force=True), items,
                       scheduler=cluster.address)
    assert sum(o.status == "converted" for o in forced) == sum(
        o.status == "converted" for o in first)


def test_batch_eval_writes_one_results_table(cluster: Cluster, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    for name in ("a", "b", "c"):
        stamps = np.arange(50) * 0.1
        xyz = np.cumsum(rng.normal(size=(50, 3)), axis=0)
        rows = np.column_stack([stamps, xyz, np.zeros((50, 3)), np.ones(50)])
        (tmp_path / "gt").mkdir(exist_ok=True)
        (tmp_path / "est" / "run").mkdir(parents=True, exist_ok=True)
        np.savetxt(tmp_path / "gt" / f"{name}.tum", rows)
        rows[:, 1:4] += rng.normal(scale=0.01, size=(50, 3))
        np.savetxt(tmp_path / "est" / "run" / f"{name}.tum", rows)
    done = _motionkit("batch", "eval", str(tmp_path / "est"), "--ref",
                      str(tmp_path / "gt" / "{stem}.tum"), "--out", str(tmp_path / "res"),
                      "--align", "se3", "--scheduler", cluster.address)
    assert done.returncode == 0, done.stdout + done.stderr
    table = pl.read_parquet(tmp_path / "res" / "results.parquet")
    assert table.height == 3 and set(table["metric"]) == {"ape"}
    assert (table["rmse"] < 0.05).all()
    assert (tmp_path / "res" / "run" / "a.tum.json").is_file()
    wrong = _motionkit("batch", "eval", str(tmp_path / "est"), "--ref", "{relative.__class__}",
                       "--out", str(tmp_path / "res"), "--scheduler", cluster.address)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "may use" in wrong.stderr


def test_batch_validate_and_info_with_a_local_cluster(
        dataset: tuple[Path, list[Path], list[Path]], tmp_path: Path) -> None:
    root, good, _ = dataset
    done = _motionkit("batch", "info", str(root / "group3"), "--out", str(tmp_path / "info"),
                      "-j", "1")
    assert done.returncode == 2
    written = sorted(tmp_path.joinpath("info").rglob("*.json"))
    expected = [p for p in good if "group3" in p.parts]
    assert len(written) == len(expected)
    doc = json.loads((tmp_path / "info" / expected[0].relative_to(root / "group3")).with_name(
        expected[0].name + ".json").read_text())
    assert doc["frames"] == 20
    bad = _motionkit("batch", "validate", str(root / "nothing-*.tum"), "--out", str(tmp_path))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "matches no file" in bad.stderr
    refused = _motionkit("batch", "convert", str(root), "--out", str(tmp_path), "--to", "parc-character")
    assert refused.returncode == 2
    assert refused.stderr == "motionkit: error: format 'parc-character' cannot be written\n"


def test_killing_a_worker_mid_batch_loses_nothing(tmp_path: Path) -> None:
    good, broken = make_dataset(tmp_path / "in", 300, seed=1)
    out = tmp_path / "out"
    with dask_cluster(2, tmp_path / "cluster.log") as running:
        batch = subprocess.Popen(
            [sys.executable, "-m", "motionkit", "batch", "convert", str(tmp_path / "in"),
             "--out", str(out), "--to", "traj", "--scheduler", running.address],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(list(out.rglob("*.traj"))) < 20:
            assert time.monotonic() < deadline and batch.poll() is None
            time.sleep(0.01)
        victim = running.workers[0]
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        assert len(list(out.rglob("*.traj"))) < len(good)  # killed in the middle
        stdout, stderr = batch.communicate(timeout=120)
    assert batch.returncode == 2, stderr
    assert len(stdout.splitlines()) == len(broken)
    assert len(list(out.rglob("*.traj"))) == len(good)
    catalog = pl.read_parquet(out / "catalog.parquet")
    assert catalog.height == len(good) + len(broken)
    assert catalog.filter(pl.col("status") == "ok").height == len(good)
