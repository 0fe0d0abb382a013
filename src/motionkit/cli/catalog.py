"""``motionkit catalog``: one Parquet row per file of a dataset."""

from __future__ import annotations

import os
import sys

import click

from .batch import printable


@click.command(epilog="""\b
Examples:
  motionkit catalog data/ -o catalog.parquet
  motionkit catalog 'parc/**/*.pkl' bags/ -o catalog.parquet -j 2
  motionkit catalog data/ -o catalog.parquet --scheduler tcp://head:8786""")
@click.argument("patterns", nargs=-1, required=True)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), metavar="CATALOG.parquet")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=os.cpu_count() or 1,
              show_default="the number of cores", help="Worker processes of the local cluster.")
@click.option("--scheduler", metavar="ADDRESS", help="Run on an existing Dask cluster.")
def command(patterns: tuple[str, ...], output: str, jobs: int, scheduler: str | None) -> None:
    """Catalog files (folders, globs): path, size, sha256, format, frames, duration, rate,
    tracks and their shapes, skeleton, terrain, status and error."""
    from ..dataset.batch import catalog

    rows = catalog(patterns, output, workers=jobs, scheduler=scheduler)
    failed = [row for row in rows if row["status"] == "failed"]
    for row in failed:
        click.echo(printable(str(row["error"])))
    click.echo(f"wrote {printable(output)} ({len(rows)} rows, {len(failed)} failed)", err=True)
    if failed:
        sys.exit(2)
