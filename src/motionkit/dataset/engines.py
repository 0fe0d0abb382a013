"""Where a batch's tasks run: one small seam, three engines (local processes, Dask, Ray).

A batch hands its work to an :class:`Engine` as tasks (a function and its arguments, a
chunk of files each), then takes each task's result as it completes. The function never
raises for a file's fault (see ``batch.work_chunk``), so an engine only has to say when a
task was lost for good: :class:`Lost`. A worker that dies has its tasks rerun — by Dask
and Ray themselves, by :class:`LocalEngine` on a new pool — so nothing is lost with it;
outputs are written atomically, so a task run twice writes the same bytes twice.

- ``local``: ``concurrent.futures.ProcessPoolExecutor`` (no extra; the default when
  neither Dask nor Ray is installed);
- ``dask``: a local cluster, or the scheduler at ``--scheduler`` (the default when Dask is
  installed, as before);
- ``ray``: a local Ray instance, or the cluster at ``ray://host:10001`` / ``auto``.
"""

from __future__ import annotations

import collections
import contextlib
import importlib.util
import itertools
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures as cf
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Literal, Protocol

from ..errors import MotionkitError
from .catalog import one_line

if TYPE_CHECKING:
    from distributed import Client

EngineName = Literal["local", "dask", "ray"]
ENGINES: tuple[EngineName, ...] = ("local", "dask", "ray")
#: How often one task may be on a worker that dies before it counts as lost (Dask's
#: ``allowed-failures`` is 3 as well; Ray's ``max_retries`` is set to it).
ATTEMPTS = 3


@dataclass(frozen=True)
class Lost:
    """A task no worker could finish (its workers kept dying): why, in one line."""

    reason: str


class Engine(Protocol):
    """Runs tasks on workers; the only thing a batch knows of Dask, Ray or a process pool."""

    #: How many tasks it runs at once (for the size of a task's chunk of files).
    slots: int

    def submit(self, function: Callable[..., object], *args: object) -> int:
        """Start ``function(*args)`` on a worker; the task's number."""
        ...

    def completed(self) -> Iterator[tuple[int, object]]:
        """Each submitted task's number and result (or :class:`Lost`) as it completes."""
        ...

    def cancel(self) -> None:
        """Drop the tasks not yet done (on Ctrl-C or an error in the client)."""
        ...

    def close(self) -> None:
        """Stop what this engine started (a cluster it made; never one it joined)."""
        ...


def default_engine() -> EngineName:
    """Dask when it is installed (as before), else Ray when it is, else local processes."""
    if importlib.util.find_spec("distributed") is not None:
        return "dask"
    if importlib.util.find_spec("ray") is not None:
        return "ray"
    return "local"


def engine_for(engine: EngineName | str | None, address: str | None) -> EngineName:
    """The engine a batch runs on: the one named, else the one its address speaks
    (``ray://…`` and ``auto`` are Ray's, any other address Dask's), else the default."""
    if engine is not None and engine not in ENGINES:
        raise MotionkitError(f"unknown engine {engine!r}; one of {', '.join(ENGINES)}")
    spoken: EngineName | None = None
    if address:
        spoken = "ray" if address == "auto" or address.startswith("ray://") else "dask"
    if engine == "local" and address:
        raise MotionkitError("the local engine runs on this machine: give no --scheduler")
    if engine is not None:
        if spoken == "dask" and engine == "ray" and address and "://" in address:
            raise MotionkitError(f"{address} is a Dask scheduler's address, not Ray's "
                                 "(ray://host:10001, host:6379 or auto)")
        return engine
    return spoken or default_engine()


@contextlib.contextmanager
def open_engine(engine: str | None, workers: int, address: str | None) -> Iterator[Engine]:
    """The engine (see :func:`engine_for`) with ``workers`` local workers, or joined to the
    cluster at ``address``; its unfinished tasks are cancelled on an error, and what it
    started is stopped on exit."""
    name = engine_for(engine, address)
    if workers < 1:
        raise MotionkitError("the number of workers must be at least 1")
    with contextlib.ExitStack() as stack:
        if name == "local":
            opened: Engine = LocalEngine(workers)
        elif name == "dask":
            opened = DaskEngine(stack.enter_context(dask_client(workers, address)))
        else:
            opened = RayEngine(workers, address)
        stack.callback(opened.close)
        try:
            yield opened
        except BaseException:
            opened.cancel()
            raise


# ---------------------------------------------------------------------------- local


def _start_worker(everyone: threading.Barrier) -> None:
    """A local worker's start: Ctrl-C is the command's to answer (one line), not each
    worker's; the batch's modules are imported now, not in its first task; and it waits
    for the other workers, so the pool is whole when the engine is ready (a worker the
    pool would start later would spend the batch's time on its imports)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    importlib.import_module("motionkit.dataset.batch")
    everyone.wait(WORKER_START_SECONDS)


def _ready() -> None:
    """A task that does nothing: the pool has started its workers when it has run."""


class LocalEngine:
    """Worker processes of this machine (``spawn``ed, as Dask's local cluster: no fork of
    a process with threads). At most ``slots`` tasks are on the pool at once. A worker
    that dies breaks the pool, and every task on it fails alike (the pool cannot say which
    one killed it), so no task is charged for a break it shared: those tasks go to a new
    pool and are rerun one at a time, alone on it. A task is charged only for a death
    while it ran alone, and is lost after :data:`ATTEMPTS` of them; the others are done."""

    def __init__(self, workers: int) -> None:
        self.slots = workers
        self._pool = self._new_pool()
        self._tasks: dict[int, tuple[Callable[..., object], tuple[object, ...]]] = {}
        self._running: dict[cf.Future[object], int] = {}
        self._numbers = itertools.count()
        self._waiting: collections.deque[int] = collections.deque()  # not yet on the pool
        #: tasks that were on a broken pool: each runs alone until it completes or is lost
        self._suspects: collections.deque[int] = collections.deque()
        self._deaths: collections.Counter[int] = collections.Counter()  # while alone
        self._isolating = False  # the one task on the pool is a suspect: nothing joins it

    def _new_pool(self) -> cf.ProcessPoolExecutor:
        """A pool whose ``slots`` workers have all started (the pool starts one per task
        submitted until it has them all, so ``slots`` empty tasks start every one)."""
        context = multiprocessing.get_context("spawn")
        pool = cf.ProcessPoolExecutor(self.slots, mp_context=context, initializer=_start_worker,
                                      initargs=(context.Barrier(self.slots),))
        with _interrupts_held():  # a worker spawned now ignores SIGINT from birth
            started = [pool.submit(_ready) for _ in range(self.slots)]
        try:
            for future in started:
                future.result()
        except cf.BrokenExecutor:
            pool.shutdown(wait=False, cancel_futures=True)
            raise MotionkitError(f"the {self.slots} local worker(s) did not start (within "
                                 f"{WORKER_START_SECONDS} s)") from None
        return pool

    def submit(self, function: Callable[..., object], *args: object) -> int:
        number = next(self._numbers)
        self._tasks[number] = (function, args)
        self._waiting.append(number)
        self._fill()
        return number

    def _fill(self) -> None:
        """Put tasks on the pool: a suspect alone once the pool is empty, else waiting
        tasks up to ``slots`` (more would only wait in the pool and share its breaks)."""
        if self._running and self._isolating:
            return
        self._isolating = bool(self._suspects)
        if self._isolating:
            self._start(self._suspects)
            return
        while self._waiting and len(self._running) < self.slots and self._start(self._waiting):
            pass

    def _start(self, queue: collections.deque[int]) -> bool:
        """Put the first task of ``queue`` on the pool; False (it stays first) when the
        pool has broken meanwhile: :meth:`completed` sees the break and starts a new one."""
        number = queue[0]
        function, args = self._tasks[number]
        try:
            with _interrupts_held():  # a worker spawned now ignores SIGINT from birth
                self._running[self._pool.submit(function, *args)] = number
        except cf.BrokenExecutor:
            return False
        queue.popleft()
        return True

    def completed(self) -> Iterator[tuple[int, object]]:
        while self._running or self._waiting or self._suspects:
            if not self._running:  # the pool broke with no task on it (a worker killed idle)
                self._restart()
                self._fill()
                continue
            done, _ = cf.wait(self._running, return_when=cf.FIRST_COMPLETED)
            broken = []
            for future in done:
                number = self._running.pop(future)
                try:
                    result = future.result()
                except cf.BrokenExecutor:  # a worker died: the pool is broken
                    broken.append(number)
                    continue
                self._forget(number)
                yield number, result
            if broken:
                # every task still on the broken pool fails alike; take them all back
                broken += [self._running.pop(future) for future in list(self._running)]
                self._restart()
                if len(broken) == 1:  # alone on the pool: it killed its worker
                    lost = self._charge(broken[0])
                    if lost is not None:
                        yield broken[0], lost
                else:
                    self._suspects.extend(sorted(broken))
            self._fill()

    def _restart(self) -> None:
        self._stop_pool()
        self._pool = self._new_pool()

    def _charge(self, number: int) -> Lost | None:
        """A death of a worker while ``number`` ran alone: Lost after :data:`ATTEMPTS`,
        else the task is rerun alone."""
        self._deaths[number] += 1
        if self._deaths[number] >= ATTEMPTS:
            self._forget(number)
            return Lost(f"a worker died {ATTEMPTS} times running it alone")
        self._suspects.appendleft(number)
        return None

    def _forget(self, number: int) -> None:
        del self._tasks[number]
        self._deaths.pop(number, None)

    def cancel(self) -> None:
        for future in self._running:
            future.cancel()
        self._running.clear()
        self._waiting.clear()
        self._suspects.clear()
        self._stop_pool()

    def _stop_pool(self) -> None:
        """Stop the pool's workers now (a task running on one is abandoned: its outputs are
        atomic). ``terminate_workers`` is Python 3.14's; before, the pool's processes."""
        pool = self._pool
        terminate = getattr(pool, "terminate_workers", None)
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        if terminate is not None:
            terminate()
        for process in processes:
            if process.is_alive():
                process.kill()
        for process in processes:
            process.join(10)

    def close(self) -> None:
        if self._running:
            self.cancel()
        else:
            self._pool.shutdown(wait=True)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT ignored (in the main thread) while a worker may be spawned: it inherits
    SIG_IGN, so a Ctrl-C before its initializer runs cannot print its traceback."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


# ----------------------------------------------------------------------------- dask


class DaskEngine:
    """Tasks on a Dask client's cluster; Dask reruns the tasks of a worker that dies and
    gives up on one (``KilledWorker``) after its ``allowed-failures``."""

    def __init__(self, client: Client) -> None:
        from distributed import as_completed

        self.client = client
        self.slots = sum(client.nthreads().values()) or 1
        self._numbers = itertools.count()
        self._futures: dict[object, int] = {}
        self._pending = as_completed()

    def submit(self, function: Callable[..., object], *args: object) -> int:
        number = next(self._numbers)
        future = self.client.submit(function, *args, pure=False)
        self._futures[future.key] = number
        self._pending.add(future)
        return number

    def completed(self) -> Iterator[tuple[int, object]]:
        for future in self._pending:
            number = self._futures.pop(future.key)
            result: object
            try:
                result = future.result()
            except Exception as exc:  # the task itself was lost (e.g. KilledWorker)
                result = Lost(one_line(exc))
            future.release()
            yield number, result

    def cancel(self) -> None:
        futures = list(self._pending.futures)
        self._pending.clear()
        if futures:
            self.client.cancel(futures)

    def close(self) -> None:
        """The client and a local cluster are closed by :func:`dask_client`."""


@contextlib.contextmanager
def dask_client(workers: int, scheduler: str | None) -> Iterator[Client]:
    """A Dask client: to the cluster at ``scheduler``, else to a new local cluster of
    ``workers`` single-threaded worker processes (closed on exit)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise MotionkitError("the dask engine needs Dask: pip install 'motionkit[dask]' (or "
                             "--engine local)") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise MotionkitError(f"cannot reach the Dask scheduler at {scheduler} ({exc})") from None
        with client:
            yield client
        return
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


#: How long a local cluster's workers may take to start (about 2 s each on a quiet
#: machine) before a batch gives up with one line, rather than wait for ever on a
#: worker that cannot start.
WORKER_START_SECONDS = 120


def _spawned(workers: int) -> None:
    """Return once this process has started ``workers`` worker processes (their Python
    then starts; a few milliseconds each), or after about 60 s."""
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
    import threading
    import warnings

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


# ------------------------------------------------------------------------------ ray


#: Tries at joining a cluster: Ray Client's server may fail to start the side of a new
#: client once ("Initialization failure from server") and start it the next time.
JOIN_ATTEMPTS = 3


def _join(ray: ModuleType, address: str) -> None:
    """``ray.init`` of the cluster at ``address``, tried again after a refused start."""
    for attempt in range(JOIN_ATTEMPTS):
        try:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
            return
        except ConnectionAbortedError:
            if attempt == JOIN_ATTEMPTS - 1:
                raise
            ray.shutdown()
            time.sleep(1.0)


class RayEngine:
    """Tasks as Ray tasks: on a new local Ray instance of ``workers`` CPUs, or on the
    cluster at ``address`` (``ray://host:10001`` through Ray Client, ``auto`` or
    ``host:6379`` from a node of it; a process that has already called ``ray.init`` is
    used as it is). Ray reruns the task of a worker that dies (``max_retries``)."""

    def __init__(self, workers: int, address: str | None) -> None:
        # A Ray of our own listens on 127.0.0.1 alone (Ray swaps 127.0.0.1 for the machine's
        # own address unless it runs as on one machine: a variable it reads on import) and
        # sends no usage statistics; the variables are set only while Ray starts, so no
        # process started later inherits them.
        with _environment({} if address else LOCAL_RAY):
            try:
                import ray
            except ImportError:
                raise MotionkitError("the ray engine needs Ray: pip install 'motionkit[ray]' "
                                     "(or --engine local)") from None
            self._start(ray, workers, address)

    def _start(self, ray: ModuleType, workers: int, address: str | None) -> None:
        """Start a local Ray instance, or join the cluster at ``address``."""
        self._ray = ray
        self._owned = not ray.is_initialized()
        if self._owned:
            try:
                with _interrupt_after_start() as spawning, spawning():
                    if address:
                        _join(ray, address)
                    else:  # ours alone: this many CPUs, no dashboard, a small object store
                        ray.init(num_cpus=workers, include_dashboard=False,
                                 object_store_memory=RAY_OBJECT_STORE_BYTES,
                                 logging_level=logging.ERROR, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
                where = f"the Ray cluster at {address}" if address else "a local Ray instance"
                raise MotionkitError(f"cannot start or reach {where} ({one_line(exc)})") from None
        self.slots = workers if not address else max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._remote: dict[Callable[..., object], object] = {}
        self._refs: dict[object, int] = {}
        self._numbers = itertools.count()

    def submit(self, function: Callable[..., object], *args: object) -> int:
        remote = self._remote.get(function)
        if remote is None:
            remote = self._remote[function] = self._ray.remote(
                num_cpus=1, max_retries=ATTEMPTS, retry_exceptions=False)(function)
        number = next(self._numbers)
        self._refs[remote.remote(*args)] = number  # type: ignore[attr-defined]
        return number

    def completed(self) -> Iterator[tuple[int, object]]:
        ray = self._ray
        while self._refs:
            ready, _ = ray.wait(list(self._refs), num_returns=1)
            for ref in ready:
                number = self._refs.pop(ref)
                result: object
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayError as exc:  # lost: its workers kept dying
                    result = Lost(one_line(exc))
                yield number, result

    def cancel(self) -> None:
        for ref in self._refs:
            with contextlib.suppress(Exception):  # a task already done or gone
                self._ray.cancel(ref, force=True)
        self._refs.clear()

    def close(self) -> None:
        """Stop the local instance this engine started, or leave the cluster it joined
        (never one the caller had joined before)."""
        if self._owned:
            self._ray.shutdown()
            self._owned = False


#: What a local Ray instance is started with (see :class:`RayEngine`).
LOCAL_RAY = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` in the environment (where not set already) for the block only."""
    added = {name: value for name, value in values.items() if name not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


#: The object store of a local Ray instance: tasks carry a job and a chunk of paths
#: and return outcomes (a few KB each), so Ray's default of 30 % of the memory is waste.
RAY_OBJECT_STORE_BYTES = 128 << 20
