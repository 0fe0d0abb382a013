"""motionkit catalog, the file list of a batch, and what importing the package costs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from motionkit.dataset.catalog import COLUMNS
from motionkit.dataset.files import expand
from motionkit.errors import MotionkitError

from .dask_helpers import Cluster, make_dataset


def test_catalog_command_writes_one_row_per_file(cluster: Cluster, tmp_path: Path) -> None:
    good, broken = make_dataset(tmp_path / "in", 12)
    target = tmp_path / "catalog.parquet"
    done = subprocess.run([sys.executable, "-m", "motionkit", "catalog", str(tmp_path / "in"),
                           "-o", str(target), "--scheduler", cluster.address],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and len(done.stdout.splitlines()) == len(broken)
    table = pl.read_parquet(target)
    assert table.columns == list(COLUMNS)
    assert table.height == len(good) + len(broken)
    assert sorted(table["path"]) == table["path"].to_list()
    ok = table.filter(pl.col("status") == "ok")
    assert ok.height == len(good) and set(ok["format"]) == {"tum", "traj", "seq"}
    assert (ok["frames"] == 20).all() and (ok["rate"] == 30.0).all()


def test_expand_mirrors_each_patterns_folder(tmp_path: Path) -> None:
    for name in ("a/x.tum", "a/b/y.tum", "c/z.seq"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    items = expand([str(tmp_path / "a"), str(tmp_path / "**" / "*.seq"), str(tmp_path / "a" / "x.tum")])
    assert [str(i.relative) for i in items] == ["b/y.tum", "x.tum", "c/z.seq"]
    assert items[0].target(tmp_path / "out", ".traj") == tmp_path / "out" / "b" / "y.traj"
    with pytest.raises(MotionkitError, match="matches no file"):
        expand([str(tmp_path / "nothing*.tum")])


def test_importing_motionkit_and_its_dataset_package_stays_light() -> None:
    heavy = ("dask", "distributed", "polars", "click", "scipy")
    code = ("import sys, motionkit, motionkit.dataset; "
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_patterns_reaching_out_of_their_folder_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "m.seq").write_text("")
    with pytest.raises(MotionkitError, match="outside the folder it starts from"):
        expand([str(tmp_path / "a" / "*" / ".." / ".." / "x" / "*.seq")])


def test_a_lerobot_dataset_is_one_item_and_one_catalog_row_per_episode(tmp_path: Path) -> None:
    """``catalog data/`` with a dataset folder in it: the folder is one item (its Parquet
    and JSON files are not catalogued one by one) and gives a row per episode."""
    import shutil

    from conftest import corpus_file
    from motionkit.dataset.catalog import read_file, write_catalog
    from motionkit.formats.lerobot import dataset as lerobot

    arm = tmp_path / "data" / "arm"
    shutil.copytree(corpus_file("episodes", "lerobot", "arm7_tiny"), arm)
    (tmp_path / "data" / "walk.tum").write_text("0 0 0 0 0 0 0 1\n1 1 0 0 0 0 0 1\n")
    items = expand([str(tmp_path / "data")])
    assert [str(item.relative) for item in items] == ["arm", "walk.tum"]
    assert [str(item.relative) for item in expand([str(arm)])] == ["arm"]
    rows = [read_file(item.source)[0] for item in items]
    assert rows[0]["status"] == "ok" and rows[0]["format"] == "lerobot"
    target = write_catalog(rows, tmp_path / "catalog.parquet")
    table = pl.read_parquet(target)
    assert table.columns == list(COLUMNS) and table.height == 3
    episodes = table.filter(pl.col("format") == "lerobot")
    motions = lerobot.read_episodes(arm)
    assert episodes["episode"].to_list() == [0, 1]
    assert episodes["frames"].to_list() == [m.frames for m in motions]
    assert episodes["duration"].to_list() == [m.duration for m in motions]
    assert episodes["task"].to_list() == [m.meta["task"] for m in motions]
    assert episodes["shapes"].to_list()[1][0] == [47, 7]
    assert set(episodes["path"]) == {str(arm)} and (episodes["rate"] == 30.0).all()
    size = sum(p.stat().st_size for p in arm.rglob("*") if p.is_file())
    assert (episodes["size"] == size).all()
    other = table.filter(pl.col("format") != "lerobot")
    assert other["episode"].to_list() == [None] and other["task"].to_list() == [None]
