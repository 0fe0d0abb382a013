"""``motionkit eval``: compare an estimated trajectory with ground truth (APE, RPE, KITTI drift)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from ..errors import MotionkitError
from ._common import busy, clean, echo_json, parse_options

if TYPE_CHECKING:
    from ..evaluation import Poses, Result
    from ..evaluation.align import Kind
    from ..evaluation.associate import Method
    from ..evaluation.kitti import KittiAlign
    from ..evaluation.metrics import DeltaUnit, Offset, Relation

MATCH = click.Choice(["nearest", "interpolate"])
RELATION = click.Choice(["translation", "rotation_angle", "rotation", "full", "point_distance"])
ALIGN = click.Choice(["se3", "sim3", "posyaw", "scale", "translation", "none"])


def parse_offset(value: str) -> Offset:
    """--offset: seconds, or 'auto' (estimated)."""
    if value == "auto":
        return "auto"
    try:
        number = float(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is neither seconds nor 'auto'") from None
    if not math.isfinite(number):
        raise click.BadParameter(f"{value!r} is not a finite number of seconds")
    return number


def _inputs(func: Callable[..., None]) -> Callable[..., None]:
    """REF, EST and the options shared by every metric."""
    options = [
        click.argument("ref", type=click.Path(dir_okay=True)),
        click.argument("est", type=click.Path(dir_okay=True)),
        click.option("-R", "--ref-option", "ref_options", multiple=True, metavar="KEY=VALUE",
                     help="Reader option for REF, e.g. -R topic=groundtruth, -R times=times.txt."),
        click.option("-E", "--est-option", "est_options", multiple=True, metavar="KEY=VALUE",
                     help="Reader option for EST, e.g. -E topic=ORB-SLAM."),
        click.option("--match", type=MATCH, default="nearest", show_default=True,
                     help="nearest stamp (as evo) or interpolate the estimate (as trajectopy)."),
        click.option("--max-diff", type=float, default=0.01, show_default=True, metavar="S",
                     help="Largest stamp difference of a nearest match."),
        click.option("--max-gap", type=float, default=10.0, show_default=True, metavar="S",
                     help="Gaps longer than this are not bridged by interpolation."),
        click.option("--offset", default="0", show_default=True, metavar="S|auto",
                     help="Seconds added to EST's stamps, or 'auto' to estimate them."),
        click.option("--json", "as_json", is_flag=True, help="Print the result as JSON."),
        click.option("--save", type=click.Path(dir_okay=False), metavar="RESULT.json",
                     help="Write the result (big per-pair tables go to RESULT.errors.parquet)."),
        click.option("--plot", type=click.Path(dir_okay=False), metavar="PNG",
                     help="Draw both paths and the errors over time (needs motionkit[plot])."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _read(ref: str, est: str, ref_options: tuple[str, ...],
          est_options: tuple[str, ...]) -> tuple[Poses, Poses]:
    from ..evaluation import read_poses

    with busy("reading"):
        return (read_poses(ref, **parse_options(ref_options)),
                read_poses(est, **parse_options(est_options)))


def _finish(result: Result, as_json: bool, save: str | None, plot: str | None,
            inputs: tuple[Poses, Poses]) -> None:
    if plot:
        from ..plot.evaluation import save_evaluation

        click.echo(f"wrote {save_evaluation(result, *inputs, plot)}", err=True)
    if save:
        for path in result.save(save):
            click.echo(f"wrote {path}", err=True)
    if as_json:
        echo_json(result.to_dict(inline=result.pairs <= 10_000))
    else:
        click.echo(result.summary())
        if result.metric == "kitti":
            click.echo(_kitti_lines(result.extra))


def _kitti_lines(extra: dict[str, Any]) -> str:
    """Overall and per-length drift lines."""
    lines = [f"  segments: {extra['segments']}   t_err {extra['t_err_percent']:.6f} %   "
             f"r_err {extra['r_err_deg_per_100m']:.6f} deg/100m"]
    for length, row in extra["per_length"].items():
        lines.append(f"    {length:>5} m: {row['segments']:6d} segments  t_err {row['t_err_percent']:.6f} %"
                     f"  r_err {row['r_err_deg_per_100m']:.6f} deg/100m")
    return "\n".join(lines)


@click.group("eval", epilog="""\b
Examples:
  motionkit eval ape gt.tum est.tum --align se3
  motionkit eval ape run.bag:groundtruth run.bag:ORB-SLAM --align sim3 --match interpolate
  motionkit eval rpe gt.tum est.tum --delta 100 --unit m --all-pairs
  motionkit eval kitti 00_gt.txt 00_est.txt
  motionkit eval table runs/*.json -o table.md""")
def command() -> None:
    """Compare estimated trajectories with ground truth: APE, RPE, KITTI drift, tables."""


@command.command("ape")
@_inputs
@click.option("--align", "alignment", type=ALIGN, default="none", show_default=True,
              help="Fit EST onto REF first (Umeyama se3/sim3/scale, rpg's posyaw, centroids).")
@click.option("--n-align", type=int, metavar="N", help="Fit the alignment on the first N pairs only.")
@click.option("--origin", is_flag=True, help="Move EST's first pose onto REF's (with --align none|scale).")
@click.option("--relation", type=RELATION, default="translation", show_default=True)
@click.option("--unit", type=click.Choice(["m", "deg", "rad"]), help="deg (default) or rad for angles.")
def ape(ref: str, est: str, ref_options: tuple[str, ...], est_options: tuple[str, ...], match: str,
        max_diff: float, max_gap: float, offset: str, as_json: bool, save: str | None, plot: str | None,
        alignment: str, n_align: int | None, origin: bool, relation: str, unit: str | None) -> None:
    """Absolute pose error of EST against REF."""
    from ..evaluation import ape as run

    reference, estimate = _read(ref, est, ref_options, est_options)
    with busy("evaluating"):
        result = run(reference, estimate, relation=cast("Relation", relation), unit=unit,
                     align=cast("Kind", alignment), n_align=n_align, origin=origin,
                     match=cast("Method", match), max_diff=max_diff, offset=parse_offset(offset),
                     max_gap=max_gap)
    _finish(result, as_json, save, plot, (reference, estimate))


@command.command("rpe")
@_inputs
@click.option("--delta", type=float, default=1.0, show_default=True, help="Pair spacing.")
@click.option("--unit", type=click.Choice(["frames", "m", "deg", "rad", "s"]), default="frames",
              show_default=True, help="Unit of --delta.")
@click.option("--all-pairs", is_flag=True, help="A pair from every pose, not consecutive pairs.")
@click.option("--tolerance", type=float, default=0.1, show_default=True,
              help="Relative tolerance of --all-pairs ends (m, s).")
@click.option("--align", "alignment", type=ALIGN, default="none", show_default=True)
@click.option("--relation", type=RELATION, default="translation", show_default=True)
@click.option("--angle-unit", type=click.Choice(["deg", "rad"]), help="Unit of rotation_angle errors.")
def rpe(ref: str, est: str, ref_options: tuple[str, ...], est_options: tuple[str, ...], match: str,
        max_diff: float, max_gap: float, offset: str, as_json: bool, save: str | None, plot: str | None,
        delta: float, unit: str, all_pairs: bool, tolerance: float, alignment: str, relation: str,
        angle_unit: str | None) -> None:
    """Relative pose error of EST against REF over pairs DELTA apart."""
    from ..evaluation import rpe as run

    reference, estimate = _read(ref, est, ref_options, est_options)
    with busy("evaluating"):
        result = run(reference, estimate, delta=delta, unit=cast("DeltaUnit", unit),
                     relation=cast("Relation", relation),
                     error_unit=angle_unit, all_pairs=all_pairs, tolerance=tolerance,
                     align=cast("Kind", alignment), match=cast("Method", match), max_diff=max_diff,
                     offset=parse_offset(offset), max_gap=max_gap)
    _finish(result, as_json, save, plot, (reference, estimate))


@command.command("kitti")
@_inputs
@click.option("--align", "alignment", type=click.Choice(["none", "se3", "sim3"]), default="none",
              show_default=True)
def kitti(ref: str, est: str, ref_options: tuple[str, ...], est_options: tuple[str, ...], match: str,
          max_diff: float, max_gap: float, offset: str, as_json: bool, save: str | None,
          plot: str | None, alignment: str) -> None:
    """KITTI odometry drift (t_err %, r_err deg/100m over 100-800 m segments)."""
    from ..evaluation import associate, kitti_odometry

    reference, estimate = _read(ref, est, ref_options, est_options)
    with busy("evaluating"):
        shift = parse_offset(offset)
        if len(reference) != len(estimate) or match != "nearest" or shift != 0.0:
            if shift == "auto":
                from ..evaluation import estimate_offset

                shift = estimate_offset(reference, estimate, max_gap=max_gap)
            pairs = associate(reference, estimate, cast("Method", match), max_diff, float(shift), max_gap)
            result = kitti_odometry(pairs, align=cast("KittiAlign", alignment))
        else:
            result = kitti_odometry(reference, estimate, align=cast("KittiAlign", alignment))
    _finish(result, as_json, save, plot, (reference, estimate))


@command.command("table")
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), metavar="TABLE.csv|.md|.parquet",
              help="Write the table (format by suffix) instead of printing it.")
def table(results: tuple[str, ...], output: str | None) -> None:
    """One row per saved RESULT: its settings and statistics, for comparing many runs."""
    import polars as pl

    from .._io import atomic_write
    from ..evaluation import load

    rows = [load(path).summary_row(Path(path).name) for path in results]
    frame = pl.DataFrame(rows)
    if output is None:
        click.echo(_markdown(*_shortened(frame)))
        return
    suffix = Path(output).suffix.lower()
    if suffix not in (".csv", ".parquet", ".md"):
        raise MotionkitError(f"table format {suffix or '(none)'} is not known; use .csv, .md or .parquet")
    with atomic_write(output) as handle:  # never a half-written table
        if suffix == ".csv":
            frame.write_csv(handle)
        elif suffix == ".parquet":
            frame.write_parquet(handle)
        else:
            handle.write((_markdown(*_shortened(frame)) + "\n").encode("utf-8"))
    click.echo(f"wrote {output} ({len(rows)} rows)", err=True)


def _shortened(frame: Any) -> tuple[Any, str | None]:
    """The table for people: ``ref`` and ``est`` relative to the folder all of them share
    (named once above the table), not the same absolute prefix in every row. CSV and
    Parquet keep the paths whole, for programs."""
    import os

    import polars as pl

    paths = [str(p) for column in ("ref", "est") for p in frame[column].to_list() if p]
    if not paths or not all(os.path.isabs(p) for p in paths):
        return frame, None
    common = os.path.commonpath(paths)
    if common in paths:  # one file: its folder
        common = os.path.dirname(common)
    if common == os.path.dirname(common):  # nothing shared but the root
        return frame, None
    def relative(path: str) -> str:
        return os.path.relpath(path, common)

    short = frame.with_columns(*(pl.col(column).map_elements(relative, return_dtype=pl.String)
                                 for column in ("ref", "est")))
    return short, common


def _markdown(frame: Any, base: str | None = None) -> str:
    """The table as markdown for the terminal or a .md file; every text from the result
    files (paths, names) escaped, so a shared result cannot drive the terminal."""
    def cell(value: object) -> str:
        return f"{value:.6g}" if isinstance(value, float) else clean(value)

    lines = [f"ref and est under {clean(base)}/", ""] if base else []
    lines += ["| " + " | ".join(clean(name) for name in frame.columns) + " |",
              "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join(lines)
