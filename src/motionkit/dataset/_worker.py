"""Preloaded by each worker of the local cluster (``engines.dask_client``): Ctrl-C on a terminal
reaches the whole process group, and only the command should answer it — one line, then
the cluster is closed — so a worker ignores SIGINT, and so do the sandbox children it
starts (they inherit it)."""

from __future__ import annotations

import signal


def dask_setup(worker: object) -> None:
    """Dask's preload hook, run in the worker process's main thread as it starts."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
