"""``motionkit batch``: convert, validate, describe, evaluate, retarget, check or fix many
files, on local processes, Dask or Ray (``dataset.engines``)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from ..dataset.engines import ENGINES
from ..errors import MotionkitError
from ..ops import METHODS
from ..ops.sync import GAP_ACTIONS
from ._common import parse_options, read_option
from .eval import ALIGN, MATCH, RELATION, parse_offset
from .retarget import plan_of, plan_options

if TYPE_CHECKING:
    from ..dataset.batch import Outcome
    from ..dataset.files import Item


def printable(text: str) -> str:
    """``text`` with control characters escaped, safe to print on a terminal."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


#: The parameters :func:`_shared` adds to a command (``run``'s ``shared``).
SHARED = ("patterns", "out", "jobs", "engine", "scheduler", "from_format", "force", "timeout",
          "memory")


def _shared(func: Callable[..., None]) -> Callable[..., None]:
    """PATTERNS and the options every batch command takes (:data:`SHARED`)."""
    options = [
        click.argument("patterns", nargs=-1, required=True),
        click.option("--out", type=click.Path(file_okay=False), required=True, metavar="DIR",
                     help="Output folder (mirrors the input tree; catalog.parquet goes here)."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=os.cpu_count() or 1,
                     show_default="the number of cores",
                     help="Worker processes of a local engine (local processes, Dask or Ray)."),
        click.option("--engine", type=click.Choice(ENGINES), show_default="dask where "
                     "installed, else ray where installed, else local",
                     help="Where the work runs: local processes (no extra), Dask or Ray."),
        click.option("--scheduler", "--address", "scheduler", metavar="ADDRESS",
                     help="Run on an existing cluster: a Dask scheduler (tcp://host:8786) or "
                          "Ray (ray://host:10001; auto inside a Ray job)."),
        click.option("--from", "from_format", metavar="FORMAT", help="Read inputs as this format."),
        click.option("--force", is_flag=True, help="Redo outputs that are newer than their inputs."),
        click.option("--timeout", type=click.FloatRange(min=0), default=600, show_default=True,
                     metavar="SECONDS", help="Stop a file after this long; it fails alone (0: "
                                             "no limit)."),
        click.option("--memory", type=click.IntRange(min=0), default=4096, show_default=True,
                     metavar="MB", help="Stop a file that needs more memory; it fails alone "
                                        "(0: no limit)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def run(op: str, shared: dict[str, object], **fields: object) -> None:
    """Run verb ``op`` with the options every batch command takes (``shared``) and its own
    (``fields`` of :class:`~motionkit.dataset.batch.Job`) with a progress bar; list the
    failures at the end (exit 2 if any)."""
    from tqdm import tqdm

    from ..dataset.batch import Job, run_batch
    from ..dataset.files import expand
    from ..dataset.sandbox import Limits

    given = cast("dict[str, Any]", shared)  # click's values of the options _shared adds
    job = Job(op, Path(given["out"]).absolute(), from_format=given["from_format"],
              force=given["force"], limits=Limits(given["timeout"] or None,
                                                  given["memory"] or None),
              **cast("dict[str, Any]", fields))
    items, skipped = _known(expand(given["patterns"]), job.from_format)
    counts = {"failed": 0}
    start = time.monotonic()
    bar = tqdm(total=len(items), desc=f"batch {job.op}", unit="file", file=sys.stderr,
               delay=0.5, dynamic_ncols=True, disable=None)  # None: only on a terminal

    def tick(outcome: Outcome) -> None:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        bar.set_postfix(failed=counts["failed"], refresh=False)
        bar.update()

    try:
        outcomes = run_batch(job, items, workers=given["jobs"], scheduler=given["scheduler"],
                             on_outcome=tick, engine=given["engine"])
    finally:
        bar.close()
    elapsed = time.monotonic() - start
    failures = [o for o in outcomes if o.status == "failed"]
    for outcome in failures:
        error = str(outcome.error)
        click.echo(printable(error if error.startswith(outcome.source) else
                             f"{outcome.source}: {error}"))
    done = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()) if n or status == "failed")
    warned = sum(len(o.warnings) for o in outcomes)
    if warned:
        done += f", {warned} warning(s)"
    if skipped:
        kinds = ", ".join(sorted({item.source.suffix or "(none)" for item in skipped}))
        done += f"; {len(skipped)} skipped (no known extension: {printable(kinds)})"
    click.echo(f"{len(outcomes)} file(s): {done} in {elapsed:.1f} s "
               f"({len(outcomes) / max(elapsed, 1e-9):.1f} files/s); "
               f"catalog {printable(str(Path(cast(Path, job.out)) / 'catalog.parquet'))}", err=True)
    if failures:
        sys.exit(2)
    if job.op == "check" and any(o.row.get("check.ok") is False for o in outcomes):
        sys.exit(1)


def _known(items: list[Item], from_format: str | None) -> tuple[list[Item], list[Item]]:
    """The items a format claims (by extension, or a dataset folder a format reads whole),
    and the rest (SOURCES.md, meshes), which a batch skips and counts apart instead of
    failing them. With --from every file is read."""
    if from_format is not None:
        return items, []
    from ..formats import registry

    known = {suffix for info in registry.formats() for suffix in info.extensions}
    items = [item for item in items if not _bag_index(item.source)]  # read with its bag

    def claimed(item: Item) -> bool:
        return item.source.suffix.lower() in known or registry.episode_folder(item.source)

    kept = [item for item in items if claimed(item)]
    if not kept and items:
        raise MotionkitError(f"none of the {len(items)} file(s) has the extension of a known "
                             "format (see motionkit formats; --from names one)")
    return kept, [item for item in items if not claimed(item)]


def _bag_index(path: Path) -> bool:
    """A ROS 2 bag's ``metadata.yaml``, beside its .mcap or .db3 files: part of the bag
    (read with it), not a motion of its own, so a folder of bags is batched whole."""
    return path.name == "metadata.yaml" and any(
        sibling.suffix in (".mcap", ".db3") for sibling in path.parent.iterdir())


def _quality_options(func: Callable[..., None]) -> Callable[..., None]:
    """check's --preset, --ground, --feet and -T (one place for batch check and convert)."""
    options = [
        click.option("--preset", type=click.Choice(["default", "protomotions"]),
                     default="default", show_default=True, help="The check constants and rules."),
        click.option("--ground", metavar="Z|auto|terrain|hf", help="The ground, as check --ground."),
        click.option("--feet", metavar="BODY,BODY", help="The foot bodies, as check --feet."),
        click.option("-T", "--threshold", "thresholds", multiple=True, metavar="NAME=VALUE",
                     help="Replace one check constant, e.g. -T body_speed=10."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _quality(preset: str, ground: str | None, feet: str | None,
             thresholds: tuple[str, ...]) -> dict[str, object]:
    """``quality.check``'s settings as a batch job carries them."""
    return {"preset": preset, "ground": ground, **parse_options(thresholds),
            "feet_names": [name.strip() for name in feet.split(",")] if feet else None}


def _read_options(func: Callable[..., None]) -> Callable[..., None]:
    """``-R`` and ``--character``: what the one-file verbs give their readers."""
    func = click.option("--character", type=click.Path(exists=True, dir_okay=False),
                        help="Character/model file that gives joints their meaning.")(func)
    return read_option(func)


def _reading(read_options: tuple[str, ...], character: str | None) -> dict[str, object]:
    options = parse_options(read_options)
    if character:
        options["character"] = str(Path(character).absolute())
    return options


@click.group("batch", epilog="""\b
Examples:
  motionkit batch convert 'motions/**/*.seq' --out converted --to traj -j 2
  motionkit batch validate data/ --out report
  motionkit batch info 'parc/**/*.pkl' --out info --scheduler tcp://head:8786
  motionkit batch validate data/ --out report --engine ray --address auto
  motionkit batch eval 'runs/**/*.tum' --ref 'gt/{name}' --out results --align se3
  motionkit batch retarget 'mocap/**/*.bvh' --robot g1.xml --map bvh_to_g1.json --out g1 --to gmr
  motionkit batch check g1/ --out checked --model g1.xml
  motionkit batch fix g1/ --out fixed --model g1.xml""")
def command() -> None:
    """Work on many files at once: on local processes, Dask or Ray (--engine), started here
    or joined with --scheduler.

    One broken file never stops a batch: its error is listed at the end (exit 2). Each
    file is read in a child process of its worker, within --timeout and --memory, on every
    engine; a worker that dies has its files redone.
    """


@command.command("convert", epilog="""\b
Examples:
  motionkit batch convert 'motions/**/*.seq' --out converted --to traj
  motionkit batch convert data/ --out data_v4 -j 2 --force
  motionkit batch convert 'runs/*.traj' --out tum --to tum --lossy --scheduler tcp://head:8786
  motionkit batch convert 'walks/*.seq' --out links --model SR1.body --to seq
  motionkit batch convert 'walks/*.seq' --out bvh --model SR1.body --to bvh --lossy
  motionkit batch convert 'runs/*.pkl' --out seq --character humanoid.xml --to seq --rate 30
  motionkit batch convert 'bags/*.mcap' --out work --into dataset --to lerobot --fps 30""")
@_shared
@click.option("--to", "to_format", metavar="FORMAT", help="Write this format (default: the input's).")
@click.option("--lossy", is_flag=True, help="Drop what the target cannot hold (with a warning).")
@click.option("--rate", type=click.FloatRange(min=0, min_open=True),
              help="Resample every track to this rate (Hz).")
@click.option("--method", type=click.Choice(("auto", *METHODS)), default="auto", show_default=True,
              help="Interpolation when resampling.")
@click.option("--model", type=click.Path(exists=True, dir_okay=False),
              help="Body model (.body, .skel, MJCF): derive link poses the target needs.")
@click.option("-O", "--option", "options", multiple=True, metavar="KEY=VALUE",
              help="A writer option (or a reader's, where only it takes the key), as convert.")
@click.option("--fps", type=click.FloatRange(min=0, min_open=True),
              help="Put every track on one clock at this rate first, as convert --fps "
                   "(motionkit.ops.sync).")
@click.option("--tolerance", type=click.FloatRange(min=0), metavar="SECONDS",
              help="With --fps: how far a sample used may lie from a frame.")
@click.option("--on-gap", type=click.Choice(GAP_ACTIONS), default="fail", show_default=True,
              help="With --fps: a frame in a topic's gap fails the file, or is dropped.")
@click.option("--where", type=click.Choice(["check.ok"]),
              help="Write only the clips that pass every check (as batch check, with --model "
                   "and the check options).")
@_quality_options
@click.option("--into", type=click.Path(file_okay=False), metavar="DATASET",
              help="Write every input as one episode of this one dataset (--to lerobot), in "
                   "the inputs' order; workers read and sync, the dataset is written at the end.")
@_read_options
def convert(to_format: str | None, lossy: bool, rate: float | None, method: str,
            model: str | None, options: tuple[str, ...], fps: float | None,
            tolerance: float | None, on_gap: str, where: str | None, preset: str,
            ground: str | None, feet: str | None, thresholds: tuple[str, ...],
            into: str | None, read_options: tuple[str, ...], character: str | None,
            **shared: object) -> None:
    """Convert every file matched by PATTERNS into --out, with convert's options."""
    if into is not None and to_format is None:
        to_format = "lerobot"  # the one format here that holds several episodes
    run("convert", shared, to_format=to_format, lossy=lossy, options=parse_options(options),
        read_options=_reading(read_options, character), rate=rate, method=method,
        model=str(Path(model).absolute()) if model else None, fps=fps, tolerance=tolerance,
        on_gap=on_gap, into=Path(into).absolute() if into else None, where=where,
        quality=_quality(preset, ground, feet, thresholds) if where else {})


@command.command("check", epilog="""\b
Examples:
  motionkit batch check 'runs/*.pkl' --out checked --model humanoid.xml
  motionkit batch check g1/ --out checked --model g1.xml --preset protomotions -j 2
  motionkit batch convert g1/ --out clean --model g1.xml --where check.ok
\b
Each file's report goes to --out as FILE.json; catalog.parquet has check.ok, check.verdict
and each check's value and pass flag as columns. Exit 1 when a clip fails a check.""")
@_shared
@click.option("--model", "--character", "model", type=click.Path(exists=True, dir_okay=False),
              help="The model the motions are of (as check --model).")
@_quality_options
@click.option("-R", "--read-option", "read_options", multiple=True, metavar="KEY=VALUE",
              help="A reader option, e.g. -R quat=wxyz.")
def check(model: str | None, preset: str, ground: str | None, feet: str | None,
          thresholds: tuple[str, ...], read_options: tuple[str, ...], **shared: object) -> None:
    """Check every motion matched by PATTERNS, as ``motionkit check``."""
    model = str(Path(model).absolute()) if model else None
    run("check", shared, model=model, read_options=parse_options(read_options),
        quality=_quality(preset, ground, feet, thresholds))


@command.command("fix", epilog="""\b
Examples:
  motionkit batch fix 'runs/*.pkl' --out fixed --character humanoid.xml
  motionkit batch fix g1/ --out fixed --model g1.xml --only lift,limits -j 2
  motionkit batch fix g1/ --out fixed --model g1.xml --preset protomotions --to seq --lossy
\b
Each clip's fixed copy goes to --out (as motionkit fix writes it, the fixes in its
quality_fixes metadata; a clip with nothing to fix is written as it is). catalog.parquet
has fix.count, fix.made and fix.left, and the check of each copy (check.ok, ...).
Exit 0 when every copy is written, 2 when a file fails.""")
@_shared
@click.option("--model", "--character", "model", type=click.Path(exists=True, dir_okay=False),
              help="The model the motions are of (as fix --model).")
@click.option("--only", metavar="FIX,FIX", help="Make only these fixes, as fix --only.")
@click.option("--max-spike", type=click.FloatRange(min=0), metavar="SECONDS",
              help="The longest run of frames refilled as one spike, as fix --max-spike.")
@_quality_options
@click.option("--to", "to_format", metavar="FORMAT", help="Write this format (default: the input's).")
@click.option("--lossy", is_flag=True, help="Drop what the target cannot hold (with a warning).")
@click.option("-R", "--read-option", "read_options", multiple=True, metavar="KEY=VALUE",
              help="A reader option, e.g. -R quat=wxyz.")
def fix(model: str | None, only: str | None, max_spike: float | None, preset: str,
        ground: str | None, feet: str | None, thresholds: tuple[str, ...],
        to_format: str | None, lossy: bool, read_options: tuple[str, ...],
        **shared: object) -> None:
    """Write a fixed copy of every motion matched by PATTERNS into --out, as ``motionkit
    fix``."""
    from .fix import parse_fixes

    run("fix", shared, model=str(Path(model).absolute()) if model else None,
        fixes=parse_fixes(only), max_spike=max_spike, to_format=to_format, lossy=lossy,
        read_options=parse_options(read_options),
        quality=_quality(preset, ground, feet, thresholds))


@command.command("validate", epilog="""\b
Examples:
  motionkit batch validate data/ --out report
  motionkit batch validate 'parc/**/*.pkl' --out report -j 2 --engine local""")
@_shared
@_read_options
def validate(read_options: tuple[str, ...], character: str | None, **shared: object) -> None:
    """Read every file completely; the catalog in --out says which failed and why."""
    run("validate", shared, read_options=_reading(read_options, character))


@command.command("info", epilog="""\b
Examples:
  motionkit batch info data/ --out info        (info/…/walk.seq.json)""")
@_shared
@_read_options
def info(read_options: tuple[str, ...], character: str | None, **shared: object) -> None:
    """Write each file's ``info --json`` document to --out as FILE.json."""
    run("info", shared, read_options=_reading(read_options, character))


@command.command("eval", epilog="""\b
Examples:
  motionkit batch eval 'runs/**/*.tum' --ref 'gt/{stem}.tum' --out results --align se3
  motionkit batch eval est/ --ref 'gt/{relative}' --out results --metric rpe""")
@_shared
@click.option("--ref", "reference", required=True, metavar="PATTERN",
              help="Each estimate's reference: a path with {relative}, {parent}, {stem} or {name} "
                   "of the estimate, e.g. 'gt/{parent}/{stem}.tum'.")
@click.option("--metric", type=click.Choice(["ape", "rpe"]), default="ape", show_default=True)
@click.option("--align", "alignment", type=ALIGN,
              default="none", show_default=True, help="Fit each estimate onto its reference first.")
@click.option("--relation", type=RELATION, default="translation", show_default=True)
@click.option("--match", type=MATCH, default="nearest", show_default=True,
              help="nearest stamp (as evo) or interpolate the estimate (as trajectopy).")
@click.option("--max-diff", type=click.FloatRange(min=0), default=0.01, show_default=True,
              metavar="S", help="Largest stamp difference of a nearest match.")
@click.option("--max-gap", type=click.FloatRange(min=0, min_open=True), default=10.0,
              show_default=True, metavar="S",
              help="Gaps longer than this are not bridged by interpolation.")
@click.option("--offset", default="0", show_default=True, metavar="S|auto",
              help="Seconds added to each estimate's stamps, or 'auto' to estimate them.")
@click.option("--n-align", type=click.IntRange(min=1), metavar="N",
              help="Fit the alignment on the first N pairs only.")
@click.option("-R", "--ref-option", "ref_options", multiple=True, metavar="KEY=VALUE",
              help="Reader option for each reference, e.g. -R topic=groundtruth.")
@click.option("-E", "--est-option", "est_options", multiple=True, metavar="KEY=VALUE",
              help="Reader option for each estimate, e.g. -E topic=ORB-SLAM.")
def evaluate(reference: str, metric: str, alignment: str, relation: str, match: str,
             max_diff: float, max_gap: float, offset: str, n_align: int | None,
             ref_options: tuple[str, ...], est_options: tuple[str, ...],
             **shared: object) -> None:
    """Evaluate every estimate against its reference, with eval's options: FILE.json
    results and one table, results.parquet (``eval table``'s columns)."""
    run("eval", shared, reference=reference, metric=metric, align=alignment,
        ref_options=parse_options(ref_options), read_options=parse_options(est_options),
        metric_options={"relation": relation, "match": match, "max_diff": max_diff,
                        "max_gap": max_gap, "offset": parse_offset(offset),
                        "n_align": n_align})


@command.command("retarget", epilog="""\b
Examples:
  motionkit batch retarget 'mocap/**/*.bvh' --robot g1.xml --map bvh_to_g1.json --out out --to gmr
  motionkit batch retarget mocap/ --robot g1.xml --map bvh_to_g1.json --out g1 --to seq -j 2
  motionkit batch retarget 'g1/*.pkl' --character g1.xml --robot h1.xml --by-name --out h1""")
@_shared
@click.option("--to", "to_format", metavar="FORMAT", help="Write this format (e.g. gmr).")
@click.option("--lossy", is_flag=True, help="Drop what the target cannot hold (with a warning).")
@_read_options
@plan_options
def retarget(to_format: str | None, lossy: bool, read_options: tuple[str, ...],
             character: str | None, **settings: object) -> None:
    """Retarget every motion matched by PATTERNS onto one robot (as ``motionkit retarget``;
    ``--character`` for PARC, MimicKit and GMR sources): the frames of a clip in order,
    clips in parallel, a failed clip alone."""
    shared = {name: settings.pop(name) for name in SHARED}
    run("retarget", shared, to_format=to_format, lossy=lossy, plan=plan_of(settings),
        read_options=_reading(read_options, character))
