"""Batch jobs over many files: convert, validate, info, catalog, evaluate, retarget, check
and fix.

Files are done by :func:`work` on the workers of an engine (``dataset.engines``: local
processes, Dask or Ray), a chunk of files per task. It never raises for a bad file: it
returns an :class:`Outcome` saying what happened, so one broken file never stops a
batch; a worker that dies mid-task has its tasks rerun by the engine. Each verb is one
entry of :data:`VERBS` (what it writes, and what it does with a file it has read).
Outputs are written atomically beside their final name and mirror the input tree; an
output newer than its input is kept unless the job says ``force``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import os
import string
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal, cast

from .._io import atomic_write
from ..errors import ConversionError, MotionkitError
from .catalog import (
    COLUMNS,
    EPISODE_ROWS,
    Row,
    info_document,
    one_line,
    read_catalog,
    read_file,
    write_catalog,
)
from .files import Item, expand, stamp, up_to_date
from .sandbox import Limits, Stopped, run_limited

if TYPE_CHECKING:
    from ..api import WriterPlan
    from ..evaluation.align import Kind
    from ..formats.registry import Loaded
    from ..model.skeleton import Skeleton
    from ..quality import CheckReport
    from ..retarget.plan import Plan

#: A verb's name: a key of :data:`VERBS` (convert, validate, info, catalog, eval, retarget,
#: check, fix).
Op = str
#: "filtered": convert --where check.ok left a clip that fails a check unwritten; "fixed":
#: fix made a fix ("written": it found nothing to fix and wrote the copy as it is)
Status = Literal["converted", "written", "skipped", "filtered", "fixed", "ok", "failed"]


@dataclass(frozen=True)
class Job:
    """What to do with every file of a batch."""

    op: Op
    out: Path | None = None
    to_format: str | None = None
    from_format: str | None = None
    lossy: bool = False
    force: bool = False
    #: eval: where each estimate's reference is, with {relative}, {parent}, {stem}, {name}.
    reference: str | None = None
    metric: Literal["ape", "rpe"] = "ape"
    align: Kind = "none"
    #: per file: a file over its time or memory limit fails alone (in a child process)
    limits: Limits = field(default_factory=Limits)
    #: retarget: the robot, the body map and the options (frames in order, clips in parallel)
    plan: Plan | None = None
    #: the one-file verb's options: -O (to the reader or writer, whichever takes each, as
    #: ``convert``), -R (the reader's), and convert's --rate, --method and --model
    options: dict[str, object] = field(default_factory=dict)
    read_options: dict[str, object] = field(default_factory=dict)
    rate: float | None = None
    method: str = "auto"
    model: str | None = None
    #: eval: the reference's reader options (-R) and the metric's (match, max_diff, …)
    ref_options: dict[str, object] = field(default_factory=dict)
    metric_options: dict[str, object] = field(default_factory=dict)

    #: convert --fps: every track on one clock first (``ops.sync``), as ``convert --fps``
    fps: float | None = None
    tolerance: float | None = None
    on_gap: str = "fail"
    #: convert --into: every input becomes one episode of this one dataset (written on the
    #: client at the end; the workers read, sync and settle each input into ``out``'s
    #: ``.episodes`` folder)
    into: Path | None = None
    #: check, and convert --where check.ok: ``quality.check``'s settings (preset, ground,
    #: feet_names, thresholds); the model is ``model``
    quality: dict[str, object] = field(default_factory=dict)
    #: convert: "check.ok" writes only the clips that pass every check
    where: str | None = None
    #: fix: the fixes to make (``quality.fix.FIXES``; empty: all) and the longest spike (s)
    fixes: tuple[str, ...] = ()
    max_spike: float | None = None

    def target(self, item: Item) -> Path | None:
        """Where ``item``'s output goes (None for jobs that write no per-file output)."""
        writes = VERBS[self.op].writes
        if self.out is None or writes is None:
            return None
        if writes == "json":
            return item.target(self.out).with_name(item.relative.name + ".json")
        if self.into is not None:
            return item.target(self.out / EPISODES)
        suffix = None
        if self.to_format:
            from ..formats import registry

            extensions = registry.by_name(self.to_format).extensions
            suffix = extensions[0] if extensions else None
        return item.target(self.out, suffix)


#: convert --into: the folder of ``out`` holding each input's episode until the dataset
#: is written (a rerun after a crash redoes only the inputs it lacks).
EPISODES = ".episodes"


@dataclass
class Outcome:
    """What one task did with one file; ``row`` is its catalog row."""

    source: str
    status: Status
    row: Row
    output: str | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


def work(job: Job, item: Item) -> Outcome:
    """Do ``job`` for one file (runs on a Dask worker; never raises for the file's faults)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = _work(job, item)
    outcome.warnings = [" ".join(str(w.message).split()) for w in caught]
    return outcome


def work_chunk(job: Job, items: list[Item]) -> list[Outcome]:
    """:func:`work` for several files in one task (fewer tasks: less scheduling per file),
    each within the job's limits."""
    if job.limits.any:
        return [_limited(job, item) for item in items]
    return [_unlimited(job, item) for item in items]


#: The sandbox handler that does one file (JSON in and out: see :func:`work_json`).
WORK = "motionkit.dataset.batch:work_json"


def _limited(job: Job, item: Item) -> Outcome:
    answer = run_limited(job.limits, WORK, {"job": _job_json(job), "item": _item_json(item)})
    if isinstance(answer, Stopped):
        return failed_outcome(item.source, answer.reason)
    try:
        return Outcome(**answer)  # type: ignore[arg-type]
    except TypeError:  # not a mapping of Outcome's fields
        return failed_outcome(item.source, "the reading process gave no outcome")


def work_json(payload: dict[str, dict[str, object]]) -> dict[str, object]:
    """:func:`work` in a sandbox child: the job and the item as JSON, the outcome as JSON
    (numbers, text, lists and mappings only: nothing of it can run when it is read)."""
    outcome = work(_job_of(payload["job"]), _item_of(payload["item"]))
    plain: dict[str, object] = json.loads(json.dumps(dataclasses.asdict(outcome),
                                                     default=_plain))
    return plain


def _plain(value: object) -> object:
    """A value of a catalog row JSON cannot hold as is (a NumPy number, a path)."""
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)


def _job_json(job: Job) -> dict[str, object]:
    out = dataclasses.asdict(job)
    for name in ("out", "into"):
        value = getattr(job, name)
        out[name] = None if value is None else str(value)
    return out


def _job_of(values: dict[str, object]) -> Job:
    from ..retarget.plan import Plan
    from ..retarget.run import Options

    fields = dict(values)
    settings, plan = fields.pop("plan"), None
    if isinstance(settings, dict):
        plan = Plan(**{**settings, "options": Options(**settings["options"])})
    limits = fields.pop("limits")
    assert isinstance(limits, dict)
    out, into = fields.pop("out"), fields.pop("into")
    return Job(**fields, out=None if out is None else Path(str(out)),  # type: ignore[arg-type]
               into=None if into is None else Path(str(into)), limits=Limits(**limits), plan=plan)


def _item_json(item: Item) -> dict[str, object]:
    return {"source": str(item.source), "relative": str(item.relative)}


def _item_of(values: dict[str, object]) -> Item:
    return Item(Path(str(values["source"])), PurePosixPath(str(values["relative"])))


def _unlimited(job: Job, item: Item) -> Outcome:
    try:
        return work(job, item)
    except MemoryError:
        return failed_outcome(item.source, "MemoryError: out of memory")


def chunk_size(files: int, workers: int) -> int:
    """Files per task: about 16 tasks per worker, 1 to 32 files each."""
    return max(1, min(32, files // (max(workers, 1) * 16)))


def _work(job: Job, item: Item) -> Outcome:
    source = item.source
    verb = VERBS[job.op]
    try:
        target = job.target(item)
        reading, plans = _split(job, source, target)
    except MotionkitError as exc:
        row, _ = read_file(source, job.from_format)
        return _failed(source, row, exc)
    row, obj = read_file(source, job.from_format, reading)
    if obj is None:
        return Outcome(str(source), "failed", row, error=str(row["error"]))
    if target is None or verb.run is None:
        return Outcome(str(source), "ok", row)
    if not job.force and not verb.always and up_to_date(source, target):
        return Outcome(str(source), "skipped", row, output=str(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        status = verb.run(job, Read(item, str(row["format"]), obj, target, plans, row))
    except MemoryError:
        raise  # the sandbox says which limit; see work_chunk
    except Exception as exc:  # the file's failure, reported in its outcome
        return _failed(source, row, exc)
    return Outcome(str(source), status, row, output=str(target))


@dataclass(frozen=True)
class Read:
    """A file a verb works on: the item, the format it was read as, what it holds, where
    its output goes, and (convert with options) the writers that may write it."""

    item: Item
    format: str
    obj: Loaded
    target: Path
    plans: list[WriterPlan]
    #: the file's catalog row, which a verb may add columns to (check's verdict)
    row: Row


@dataclass(frozen=True)
class Verb:
    """One batch verb: what it writes per file, and what it does with a file it has read.

    ``run(job, read)`` writes ``read.target`` and returns the outcome's status;
    ``check(job)`` refuses a job before anything runs."""

    #: "motion": a file of the --to format; "json": FILE.json; None: only the catalog row
    writes: Literal["motion", "json"] | None
    run: Callable[[Job, Read], Status] | None = None
    check: Callable[[Job], None] | None = None
    #: redone on every run (its output depends on more than the input: a robot, a map)
    always: bool = False


#: The batch verbs by name; a new verb is one entry (and its click command in cli/batch.py).
VERBS: dict[str, Verb] = {}


def _convert(job: Job, read: Read) -> Status:
    from ..api import choose_writer, finish_conversion
    from ..formats import registry

    obj = read.obj
    episodes = read.row.get(EPISODE_ROWS)
    if isinstance(episodes, list) and len(episodes) > 1 and \
            "episode" not in {**job.options, **job.read_options}:
        raise ConversionError(f"a dataset of {len(episodes)} episodes, and an input is written "
                              "as one motion (episode 0 alone): choose one with -R episode=N")
    if job.where is not None and not _quality_report(job, read).passed:
        return "filtered"
    writer, writing = choose_writer(read.plans, obj) if read.plans else (registry.for_writing(
        read.target, job.to_format, like=read.format, obj=obj), {})
    if job.fps is not None:
        from ..model import Motion
        from ..ops import sync

        if not isinstance(obj, Motion):
            raise ConversionError("--fps applies to motions only")
        zero = not writer.holds(**writing).start  # frames from 0 where the target has no start
        obj = sync(obj, job.fps, tolerance=job.tolerance, on_gap=job.on_gap, zero=zero)
    finish_conversion(obj, read.target, writer, rate=job.rate, method=job.method, model=job.model,
                      lossy=job.lossy, write_options=writing)
    return "converted"


def _check_convert(job: Job) -> None:
    from ..formats import registry

    _check_writable(job)
    if job.fps is not None and job.rate is not None:
        raise ConversionError("--fps and --rate both set a rate: give one")
    if job.fps is None and (job.tolerance is not None or job.on_gap != "fail"):
        raise ConversionError("--tolerance and --on-gap belong to --fps")
    if job.where not in (None, "check.ok"):
        raise MotionkitError(f"--where {job.where!r}: the one condition is check.ok")
    if job.where is not None:
        _check_quality(job)
    if job.into is not None:
        fmt = registry.by_name(job.to_format or "")
        if not hasattr(fmt.load(), "write_episodes"):
            raise MotionkitError(f"--into writes one dataset of several episodes; {fmt.name} "
                                 "holds one motion per file (--to lerobot)")
        takes = inspect.signature(fmt.load().write_episodes).parameters
        wrong = sorted(key for key in set(job.options) & fmt.write_options()
                       if key not in takes or key == "lossy")  # lossy: --lossy says it
        if wrong:
            raise MotionkitError(f"--into: option(s) {', '.join(wrong)} cannot go to the "
                                 f"dataset's writer ({fmt.name}); --lossy for lossy")


def _retarget_verb(job: Job, read: Read) -> Status:
    _retarget(job, read.obj, read.target)
    return "written"


def _check_retarget(job: Job) -> None:
    if job.plan is None:
        raise MotionkitError("batch retarget needs a robot and a body map")


def _info(job: Job, read: Read) -> Status:
    _write_json(read.target, info_document(read.format, read.obj))
    return "written"


def _eval(job: Job, read: Read) -> Status:
    _evaluate(job, read.item, read.target)
    return "written"


def _check_verb(job: Job, read: Read) -> Status:
    _write_json(read.target, _quality_report(job, read).to_dict())
    return "written"


def _fix_verb(job: Job, read: Read) -> Status:
    """The fixed copy written (``api.write_fixed``, as ``motionkit fix``); the check of
    what it holds and the fixes made go into the file's catalog row."""
    from ..api import write_fixed
    from ..model import Motion

    if not isinstance(read.obj, Motion):
        raise MotionkitError(f"holds a {type(read.obj).__name__}, not a motion")
    fixed, again = write_fixed(read.target, read.obj, _model_skeleton(job.model),
                               model=job.model, fixes=tuple(job.fixes) or None,
                               max_spike=job.max_spike, format=job.to_format, lossy=job.lossy,
                               **_check_settings(job))
    read.row.update(again.catalog_row())
    read.row.update({"fix.count": len(fixed.fixes), "fix.made": list(fixed.fixes),
                     "fix.left": list(fixed.left)})
    return "fixed" if fixed.fixes else "written"


def _check_fix(job: Job) -> None:
    from ..quality.fix import SPIKE_TIME, check_fixes

    check_fixes(tuple(job.fixes), SPIKE_TIME if job.max_spike is None else job.max_spike)
    _check_writable(job)
    _check_quality(job)


def _check_writable(job: Job) -> None:
    from ..formats import registry

    if job.to_format and not registry.by_name(job.to_format).can_write():
        raise MotionkitError(f"format {job.to_format!r} cannot be written")


def _check_quality(job: Job) -> None:
    """The check settings refused before any file is read (one line, naming the value):
    the preset, every -T threshold, the ground, and the feet where the model names them."""
    from ..quality.options import check_options

    check_options(skeleton=_model_skeleton(job.model) if job.quality.get("feet_names") else None,
                  **_check_settings(job))


def _check_settings(job: Job) -> dict[str, Any]:
    """``quality.check``'s keywords from the job (the feet as a tuple)."""
    settings = {"preset": "default", "ground": None, **job.quality}
    feet = settings.get("feet_names")
    settings["feet_names"] = tuple(cast("list[str]", feet)) if feet else None
    return settings


def _quality_report(job: Job, read: Read) -> CheckReport:
    """``quality.check`` of the file with the job's model and settings; its verdict and
    worst values go into the file's catalog row (``check.ok``, ``check.<name>``, …)."""
    from ..model import Motion
    from ..quality import check

    if not isinstance(read.obj, Motion):
        raise MotionkitError(f"holds a {type(read.obj).__name__}, not a motion")
    report = check(read.obj, _model_skeleton(job.model), name=str(read.item.source),
                   **_check_settings(job))
    read.row.update(report.catalog_row())
    return report


@functools.lru_cache(maxsize=4)
def _model_skeleton(model: str | None) -> Skeleton | None:
    """The skeleton of a --model file, read once per worker process."""
    if model is None:
        return None
    from ..api import read_skeleton

    return read_skeleton(model)


def _check_eval(job: Job) -> None:
    if job.reference is None:
        raise MotionkitError("batch eval needs a reference pattern (--ref)")
    check_reference(job.reference)


VERBS.update(
    convert=Verb("motion", _convert, _check_convert),
    retarget=Verb("motion", _retarget_verb, _check_retarget, always=True),
    info=Verb("json", _info),
    eval=Verb("json", _eval, _check_eval),
    validate=Verb(None),
    catalog=Verb(None),
    check=Verb("json", _check_verb, _check_quality, always=True),
    fix=Verb("motion", _fix_verb, _check_fix, always=True),
)


def _split(job: Job, source: Path, target: Path | None,
           ) -> tuple[dict[str, object], list[WriterPlan]]:
    """The job's options for this file as (the reader's, the writers convert may use
    with the options split for each, as ``convert`` splits them); verbs that write no
    motion give every option to the reader. No options: ({}, [])."""
    from ..api import split_options, writer_plans
    from ..formats import registry

    checked = bool(job.quality) and job.model is not None  # the checked model is the character
    if not job.options and not job.read_options and not checked:
        return {}, []
    reader = registry.for_reading(source, job.from_format)
    if checked:
        job = dataclasses.replace(job, read_options={
            **reader.reader_options(character=job.model), **job.read_options})
    if job.op != "convert" or target is None:
        return split_options(reader, reader, {}, {**job.options, **job.read_options})[0], []
    plans = writer_plans(reader, target, job.to_format, job.options, job.read_options)
    return plans[0][1], plans


def _retarget(job: Job, obj: object, target: Path) -> None:
    from ..model import Motion
    from ..retarget.plan import write_robot_motion

    assert job.plan is not None  # run_batch checked it
    if not isinstance(obj, Motion):
        raise MotionkitError(f"holds a {type(obj).__name__}, not a motion")
    result = job.plan.run(obj)
    write_robot_motion(target, result.motion, job.to_format, job.plan, job.lossy)


def _failed(source: Path, row: Row, exc: BaseException) -> Outcome:
    error = one_line(exc)
    row["status"], row["error"] = "failed", error
    return Outcome(str(source), "failed", row, error=error)


def _write_json(target: Path, document: object) -> None:
    with atomic_write(target, "w") as handle:
        json.dump(document, handle, indent=2, default=str)
        handle.write("\n")


#: The fields a reference pattern may use.
REFERENCE_FIELDS = frozenset({"relative", "parent", "stem", "name"})


def check_reference(pattern: str) -> None:
    """A MotionkitError unless ``pattern`` uses only plain {relative}, {parent}, {stem}, {name}."""
    try:
        fields = [field for _, field, spec, _ in string.Formatter().parse(pattern)
                  if field is not None and (field or spec is not None)]
    except ValueError as exc:
        raise MotionkitError(f"reference pattern {pattern!r}: {exc}") from None
    wrong = sorted({f for f in fields if f not in REFERENCE_FIELDS})
    if wrong:
        raise MotionkitError(f"reference pattern {pattern!r} uses {', '.join(map(repr, wrong))}; "
                             "it may use {relative}, {parent}, {stem} and {name}")


def reference_for(pattern: str, relative: PurePosixPath) -> Path:
    """The reference path of an estimate: ``pattern`` with {relative}, {parent}, {stem}, {name}."""
    parent = str(relative.parent) if str(relative.parent) != "." else ""
    return Path(pattern.format(relative=str(relative), parent=parent, stem=relative.stem,
                               name=relative.name))


def _evaluate(job: Job, item: Item, target: Path) -> None:
    from .. import evaluation

    assert job.reference is not None  # run_batch checked it
    reference = reference_for(job.reference, item.relative)
    ref = evaluation.read_poses(reference, None, **cast("dict[str, Any]", job.ref_options))
    est = evaluation.read_poses(item.source, job.from_format,
                                **cast("dict[str, Any]", job.read_options))
    settings = cast("dict[str, Any]", job.metric_options)
    if job.metric == "ape":
        result = evaluation.ape(ref, est, align=job.align, **settings)
    else:
        result = evaluation.rpe(ref, est, align=job.align, **settings)
    result.ref_name, result.est_name = str(reference), str(item.source)
    result.save(target)


def run_batch(job: Job | Op, items: list[Item], workers: int = 1, scheduler: str | None = None,
              on_outcome: Callable[[Outcome], None] | None = None,
              engine: str | None = None) -> list[Outcome]:
    """Run ``job`` over ``items`` on ``engine`` (``local``, ``dask`` or ``ray``; by default
    the one ``scheduler``'s address speaks, else Dask's or Ray's where installed, else
    local processes: ``dataset.engines``); outcomes in the items' order.

    ``on_outcome`` is called as each file finishes (for progress). A task of several files
    lost for good (its workers kept dying) is redone a file per task, so that only the
    file that kills its worker is lost, on every engine: a failed outcome, not an
    exception. With an ``out`` folder
    the job also writes its catalog there, ``catalog.parquet``; with ``into``, the one
    dataset of every converted input's episode."""
    from .engines import Lost, open_engine

    if isinstance(job, str):
        job = Job(job)
    verb = VERBS.get(job.op)
    if verb is None:
        raise MotionkitError(f"no batch verb {job.op!r}; one of {', '.join(sorted(VERBS))}")
    _check_job(job)
    if verb.check is not None:
        verb.check(job)
    if not items:
        return []
    _refuse_shared_targets(job, items)
    outcomes: list[Outcome | None] = [None] * len(items)

    def settle(index: int, outcome: Outcome) -> None:
        outcomes[index] = outcome
        if on_outcome is not None:
            on_outcome(outcome)

    for index, outcome in _unchanged(job, items):
        settle(index, outcome)
    todo = [index for index, outcome in enumerate(outcomes) if outcome is None]
    if todo:
        with open_engine(engine, workers, scheduler) as running:
            size = chunk_size(len(todo), running.slots)
            chunks = {running.submit(work_chunk, job, [items[i] for i in todo[start:start + size]]):
                      todo[start:start + size] for start in range(0, len(todo), size)}
            for number, result in running.completed():
                chunk = chunks.pop(number)
                if isinstance(result, Lost) and len(chunk) > 1:  # each file alone: only the
                    for index in chunk:                          # one that kills is lost
                        chunks[running.submit(work_chunk, job, [items[index]])] = [index]
                    continue
                results = cast("list[Outcome]", result) if not isinstance(result, Lost) else [
                    failed_outcome(items[i].source, f"task lost: {result.reason}") for i in chunk]
                for index, outcome in zip(chunk, results, strict=True):
                    settle(index, outcome)
    done = [o for o in outcomes if o is not None]
    if job.out is not None:
        write_catalog([o.row for o in done], job.out / "catalog.parquet")
        if job.op == "eval":
            write_results_table(done, job.out / "results.parquet")
    if job.into is not None:
        _join_episodes(job, done)
    return done


def _join_episodes(job: Job, outcomes: list[Outcome]) -> None:
    """convert --into: the episodes the workers wrote (one per input, in the inputs' order)
    as the one dataset ``job.into``, written here on the client, with the writer's options
    but the names it gave the tracks (the episodes hold them already). Nothing is written
    while an input failed: the batch lists the failures, and a rerun redoes only them."""
    import shutil

    from ..formats import registry

    assert job.into is not None and job.out is not None  # the CLI and check_convert see to it
    if any(o.status == "failed" for o in outcomes) or not outcomes:
        return
    from ..api import split_options

    fmt = registry.by_name(job.to_format or "")
    episodes = [fmt.read(Path(str(o.output))) for o in outcomes]
    # the writer's share of -O, as the workers split it (the same for every reader: a
    # reader's key goes to the reader alone), less the tracks' names the episodes hold
    reader = registry.for_reading(Path(outcomes[0].source), job.from_format)
    writing = split_options(reader, fmt, job.options, job.read_options)[1]
    kept = {key: value for key, value in writing.items() if key not in ("state", "action")}
    fmt.load().write_episodes(job.into, episodes, lossy=job.lossy, **kept)
    shutil.rmtree(job.out / EPISODES, ignore_errors=True)


def _check_job(job: Job) -> None:
    """What every verb's job may get wrong, refused before any file is read (one line,
    not one failure per file): a --from or --to that names no format, a rate that is not
    a positive number of Hz."""
    import math

    from ..formats import registry

    for name in (job.from_format, job.to_format):
        if name:
            registry.by_name(name)
    for option, rate in (("--rate", job.rate), ("--fps", job.fps)):
        if rate is not None and not (math.isfinite(rate) and rate > 0):
            raise ConversionError(f"{option} {rate!r}: expected a rate > 0 (Hz)")


def _refuse_shared_targets(job: Job, items: list[Item]) -> None:
    """Two inputs that would write one output (``w.seq`` and ``w.tum`` → ``w.traj``), and an
    input that would be its own output (``--out`` its own folder), are refused before
    anything runs, naming them: else one would silently be skipped or replaced."""
    first: dict[Path, Item] = {}
    for item in items:
        target = job.target(item)
        if target is None:
            continue
        if target.exists() and os.path.samefile(target, item.source):
            raise MotionkitError(f"{item.source} would be replaced by its own output; write "
                                 "to another --out")
        other = first.setdefault(target, item)
        if other is not item:
            raise MotionkitError(f"{other.source} and {item.source} would both be written to "
                                 f"{target}; convert them in separate batches")


def _unchanged(job: Job, items: list[Item]) -> list[tuple[int, Outcome]]:
    """Files a rerun need not even read: their output is newer than them, and the last
    catalog in ``out`` has an ``ok`` row of the same size and modification time."""
    if job.out is None or job.force or VERBS[job.op].always:
        return []  # a retargeted, checked or fixed clip depends on the model and the options too
    previous = read_catalog(job.out / "catalog.parquet")
    found = []
    for index, item in enumerate(items):
        row = previous.get(str(item.source))
        target = job.target(item)
        if row is None or target is None or row["status"] != "ok":
            continue
        now = stamp(item.source)  # a dataset folder's: its files' total size, newest time
        if now is not None and (row["size"], row["mtime_ns"]) == now \
                and up_to_date(item.source, target):
            found.append((index, Outcome(str(item.source), "skipped", row, output=str(target))))
    return found


def failed_outcome(source: Path, error: str) -> Outcome:
    """The outcome of a file that gave no outcome of its own: its task was lost (its
    workers kept dying), or it went over a limit."""
    row: Row = dict.fromkeys(COLUMNS)
    row.update(path=str(source), tracks=[], shapes=[], terrain=False, status="failed", error=error)
    return Outcome(str(source), "failed", row, error=error)


def write_results_table(outcomes: list[Outcome], path: Path) -> Path | None:
    """The evaluated pairs as one results table (``motionkit eval table``'s columns), beside
    a Markdown copy; None when no pair was evaluated."""
    import polars as pl

    from ..evaluation import load

    rows = [load(outcome.output).summary_row(os.path.basename(outcome.output))
            for outcome in outcomes if outcome.output is not None and outcome.status != "failed"]
    if not rows:
        return None
    frame = pl.DataFrame(rows)
    with atomic_write(path) as handle:
        frame.write_parquet(handle)
    return path


def catalog(patterns: list[str] | tuple[str, ...], output: str | os.PathLike[str],
            workers: int = 1, scheduler: str | None = None,
            engine: str | None = None) -> list[Row]:
    """Catalog every file under ``patterns`` (folders, globs, files) into ``output``."""
    items: list[Item] = expand(patterns)
    outcomes = run_batch("catalog", items, workers=workers, scheduler=scheduler, engine=engine)
    rows = [o.row for o in outcomes]
    write_catalog(rows, output)
    return rows
