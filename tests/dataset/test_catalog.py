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
