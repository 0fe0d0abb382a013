"""Batch jobs over many files on Dask: convert, validate, info, catalog and evaluate.

Files are done by :func:`work` on Dask workers, a chunk of files per task (a local
cluster of worker processes by default, or any cluster given by its scheduler address).
It never raises for a bad file: it returns an :class:`Outcome` saying what happened, so
one broken file never stops a batch; a worker that dies mid-task has its tasks rerun
elsewhere by Dask.
Outputs are written atomically beside their final name and mirror the input tree; an
output newer than its input is kept unless the job says ``force``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import string
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal, cast

from .._io import atomic_write
from ..errors import MotionkitError
from .catalog import COLUMNS, Row, info_document, one_line, read_catalog, read_file, write_catalog
from .files import Item, expand, up_to_date
from .sandbox import Limits, Stopped, run_limited

if TYPE_CHECKING:
    from distributed import Client

    from ..api import WriterPlan
    from ..evaluation.align import Kind
    from ..retarget.plan import Plan

Op = Literal["convert", "validate", "info", "catalog", "eval", "retarget"]
Status = Literal["converted", "written", "skipped", "ok", "failed"]


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

    def target(self, item: Item) -> Path | None:
        """Where ``item``'s output goes (None for jobs that write no per-file output)."""
        if self.out is None or self.op in ("validate", "catalog"):
            return None
        if self.op in ("convert", "retarget"):
            suffix = None
            if self.to_format:
                from ..formats import registry

                suffix = registry.by_name(self.to_format).extensions[0]
            return item.target(self.out, suffix)
        return item.target(self.out).with_name(item.relative.name + ".json")


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
    out["out"] = None if job.out is None else str(job.out)
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
    out = fields.pop("out")
    return Job(**fields, out=None if out is None else Path(str(out)),  # type: ignore[arg-type]
               limits=Limits(**limits), plan=plan)


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
    try:
        target = job.target(item)
        reading, plans = _split(job, source, target)
    except MotionkitError as exc:
        row, _ = read_file(source, job.from_format)
        return _failed(source, row, exc)
    row, obj = read_file(source, job.from_format, reading)
    if obj is None:
        return Outcome(str(source), "failed", row, error=str(row["error"]))
    if target is None:
        return Outcome(str(source), "ok", row)
    if not job.force and job.op != "retarget" and up_to_date(source, target):
        return Outcome(str(source), "skipped", row, output=str(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if job.op == "convert":
            from ..api import choose_writer, finish_conversion
            from ..formats import registry

            writer, writing = choose_writer(plans, obj) if plans else (registry.for_writing(
                target, job.to_format, like=str(row["format"]), obj=obj), {})
            finish_conversion(obj, target, writer, rate=job.rate, method=job.method,
                              model=job.model, lossy=job.lossy, write_options=writing)
            return Outcome(str(source), "converted", row, output=str(target))
        if job.op == "retarget":
            _retarget(job, obj, target)
            return Outcome(str(source), "written", row, output=str(target))
        if job.op == "info":
            _write_json(target, info_document(str(row["format"]), obj))
        else:
            _evaluate(job, item, target)
    except MemoryError:
        raise  # the sandbox says which limit; see work_chunk
    except Exception as exc:  # the file's failure, reported in its outcome
        return _failed(source, row, exc)
    return Outcome(str(source), "written", row, output=str(target))


def _split(job: Job, source: Path, target: Path | None,
           ) -> tuple[dict[str, object], list[WriterPlan]]:
    """The job's options for this file as (the reader's, the writers convert may use
    with the options split for each, as ``convert`` splits them); verbs that write no
    motion give every option to the reader. No options: ({}, [])."""
    from ..api import split_options, writer_plans
    from ..formats import registry

    if not job.options and not job.read_options:
        return {}, []
    reader = registry.for_reading(source, job.from_format)
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


@contextlib.contextmanager
def client_for(workers: int, scheduler: str | None) -> Iterator[Client]:
    """A Dask client: to the cluster at ``scheduler``, else to a new local cluster of
    ``workers`` single-threaded worker processes (closed on exit)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise MotionkitError("batch work needs Dask: pip install 'motionkit[dask]'") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise MotionkitError(f"cannot reach the Dask scheduler at {scheduler} ({exc})") from None
        with client:
            yield client
        return
    if workers < 1:
        raise MotionkitError("the number of workers must be at least 1")
    with contextlib.ExitStack() as stack:
        with _interrupt_after_start() as spawning:  # a Ctrl-C meanwhile: raised after it
            cluster = stack.enter_context(LocalCluster(
                n_workers=0, threads_per_worker=1, processes=True, dashboard_address=None,
                silence_logs=logging.CRITICAL, preload=["motionkit.dataset._worker"]))
            client = stack.enter_context(Client(cluster))
            with spawning():
                cluster.scale(workers)
                _spawned(workers)
            try:
                client.wait_for_workers(workers, timeout=WORKER_START_SECONDS)
            except TimeoutError:
                raise MotionkitError(f"the local cluster's {workers} worker(s) did not start "
                                     f"within {WORKER_START_SECONDS} s") from None
        yield client


#: How long the local cluster's workers may take to start (about 2 s each on a quiet
#: machine) before a batch gives up with one line, rather than wait for ever on a
#: worker that cannot start.
WORKER_START_SECONDS = 120


def _spawned(workers: int) -> None:
    """Return once this process has started ``workers`` worker processes (their Python
    then starts; a few milliseconds each), or after about 60 s."""
    import multiprocessing
    import time

    for _ in range(30_000):
        if len(multiprocessing.active_children()) >= workers:
            return
        time.sleep(0.002)


@contextlib.contextmanager
def _interrupt_after_start() -> Iterator[Callable[[], contextlib.AbstractContextManager[None]]]:
    """Hold a Ctrl-C that comes while the local cluster starts, and raise it once it has
    (the caller then closes the cluster: a KeyboardInterrupt inside Dask's start-up could
    leave processes behind). The main thread's Python handler is swapped for one that
    records the signal, and put back whatever it was (a handler not set from Python,
    None, and other threads' are left alone). Ctrl-C on a terminal reaches the whole
    process group, and only this process should answer it — one line — so the workers
    ignore SIGINT from birth: SIGINT is ignored (SIG_IGN, which a new process inherits)
    only in the block the context gives, while they are spawned, and the ``_worker``
    preload keeps it so in any worker started later. A port taken by another cluster is
    no news for the user."""
    import signal
    import threading

    held: list[int] = []
    main = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGINT) if main else None

    def record(number: int, frame: object) -> None:
        held.append(number)

    @contextlib.contextmanager
    def spawning() -> Iterator[None]:
        if handler is None:
            yield
            return
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, record)

    if handler is not None:
        signal.signal(signal.SIGINT, record)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"Port \d+ is already in use")
            yield spawning
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
        if held:
            signal.raise_signal(signal.SIGINT)  # to the handler there was (SIG_IGN: nothing)


def run_batch(job: Job | Op, items: list[Item], workers: int = 1, scheduler: str | None = None,
              on_outcome: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run ``job`` over ``items`` on Dask; outcomes in the items' order.

    ``on_outcome`` is called as each file finishes (for progress). A task lost for good
    (its workers kept dying) is a failed outcome, not an exception. With an ``out`` folder
    the job also writes its catalog there, ``catalog.parquet``."""
    if isinstance(job, str):
        job = Job(job)
    if job.op == "convert" and job.to_format:
        from ..formats import registry

        if not registry.by_name(job.to_format).can_write():
            raise MotionkitError(f"format {job.to_format!r} cannot be written")
    if job.op == "retarget" and job.plan is None:
        raise MotionkitError("batch retarget needs a robot and a body map")
    if job.op == "eval":
        if job.reference is None:
            raise MotionkitError("batch eval needs a reference pattern (--ref)")
        check_reference(job.reference)
    if not items:
        return []
    _refuse_shared_targets(job, items)
    outcomes: list[Outcome | None] = [None] * len(items)
    for index, outcome in _unchanged(job, items):
        outcomes[index] = outcome
        if on_outcome is not None:
            on_outcome(outcome)
    todo = [index for index, outcome in enumerate(outcomes) if outcome is None]
    if todo:
        with client_for(workers, scheduler) as client:
            from distributed import as_completed

            size = chunk_size(len(todo), sum(client.nthreads().values()) or workers)
            chunks = [todo[start:start + size] for start in range(0, len(todo), size)]
            futures = client.map(work_chunk, [job] * len(chunks),
                                 [[items[i] for i in chunk] for chunk in chunks], pure=False)
            where = {future.key: chunk for chunk, future in zip(chunks, futures, strict=True)}
            for future in as_completed(futures):
                chunk = where[future.key]
                try:
                    results: list[Outcome] = future.result()
                except Exception as exc:  # the task itself was lost (e.g. KilledWorker)
                    results = [failed_outcome(items[index].source, f"task lost: {one_line(exc)}")
                               for index in chunk]
                future.release()
                for index, outcome in zip(chunk, results, strict=True):
                    outcomes[index] = outcome
                    if on_outcome is not None:
                        on_outcome(outcome)
    done = [o for o in outcomes if o is not None]
    if job.out is not None:
        write_catalog([o.row for o in done], job.out / "catalog.parquet")
        if job.op == "eval":
            write_results_table(done, job.out / "results.parquet")
    return done


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
    if job.out is None or job.force or job.op == "retarget":
        return []  # a retargeted clip depends on the robot, the map and the options too
    previous = read_catalog(job.out / "catalog.parquet")
    found = []
    for index, item in enumerate(items):
        row = previous.get(str(item.source))
        target = job.target(item)
        if row is None or target is None or row["status"] != "ok":
            continue
        try:
            stat = item.source.stat()
        except OSError:
            continue
        if (row["size"], row["mtime_ns"]) == (stat.st_size, stat.st_mtime_ns) \
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
            workers: int = 1, scheduler: str | None = None) -> list[Row]:
    """Catalog every file under ``patterns`` (folders, globs, files) into ``output``."""
    items: list[Item] = expand(patterns)
    outcomes = run_batch("catalog", items, workers=workers, scheduler=scheduler)
    rows = [o.row for o in outcomes]
    write_catalog(rows, output)
    return rows
