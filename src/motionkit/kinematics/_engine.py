"""The one FK engine: the compiled kernel where it was built, else the NumPy path, over
frame ranges that threads may share, writing into one output array.

* **Memory**: the output ``(frames, bodies, 7)`` is the only large allocation. The
  compiled kernel writes into it directly; the NumPy path works on :data:`CHUNK` frames
  at a time, so its working arrays stay a fixed size however many frames there are.
* **Threads**: ``threads=None`` (the default) uses one thread below
  :data:`FRAMES_PER_THREAD` frames per thread and otherwise up to the CPUs this process
  may run on; ``threads=1`` keeps everything on the calling thread. The kernel releases
  the GIL, so threads split the frames at full speed; each writes its own rows of the
  output, so the result does not depend on the thread count.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.typing import NDArray

from ..model.skeleton import Skeleton
from ..spatial import quaternion
from . import _compiled
from ._fast import forward_quat

Array = NDArray[np.float64]

#: Frames of one NumPy-path step (its working arrays are about 20 rows of this length).
CHUNK = 4096
#: With ``threads=None``, one more thread for every this many frames.
FRAMES_PER_THREAD = 250_000


def available_cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def thread_count(frames: int, threads: int | None) -> int:
    """Threads for ``frames`` frames: ``threads`` itself, or the automatic choice."""
    if threads is not None:
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        return threads
    return max(1, min(available_cpus(), frames // FRAMES_PER_THREAD))


def _numpy_range(skeleton: Skeleton, coords: Array, root: Array | None, given: Array | None,
                 out: Array, start: int, stop: int) -> None:
    """The NumPy path over frames ``[start, stop)``, :data:`CHUNK` frames at a time."""
    for low in range(start, stop, CHUNK):
        high = min(low + CHUNK, stop)
        rotations = None
        if given is not None:
            rotations = np.ascontiguousarray(
                quaternion.normalize(given[low:high]).transpose(1, 2, 0))
        out[low:high] = forward_quat(skeleton, coords[low:high],
                                     None if root is None else root[low:high], rotations)


def poses_into(skeleton: Skeleton, coords: Array, root: Array | None, given: Array | None,
               out: Array, *, threads: int | None = None, compiled: bool | None = None) -> Array:
    """World poses ``(frames, bodies, 7)`` into ``out`` (C-contiguous float64), returned.

    ``coords`` ``(frames, dofs)``; ``root`` ``(frames, 7)``: the first body's world pose
    (its quaternion normalised here); ``given`` ``(frames, bodies - 1, 4)``: the joint
    rotations of the other bodies, normalised here, in place of their coordinates (whose
    joints then do not translate). ``compiled`` None takes the kernel where it was built;
    False forces the NumPy path (True without the kernel raises RuntimeError).
    """
    kernel = _compiled.KERNEL
    if compiled and kernel is None:
        raise RuntimeError("the compiled FK kernel was not built (see setup.py)")
    frames = coords.shape[0]
    step: Callable[[int, int], None]
    if kernel is not None and compiled is not False:
        plan = _compiled.plan(skeleton)
        root_c = None if root is None else np.ascontiguousarray(root)
        given_c = None if given is None else np.ascontiguousarray(given)

        def step(start: int, stop: int) -> None:
            _compiled.run(kernel, plan, coords, root_c, given_c, out, start, stop)
    else:

        def step(start: int, stop: int) -> None:
            _numpy_range(skeleton, coords, root, given, out, start, stop)

    count = min(thread_count(frames, threads), max(frames, 1))
    if count == 1:
        step(0, frames)
        return out
    bounds = np.linspace(0, frames, count + 1).astype(int).tolist()
    with ThreadPoolExecutor(count) as pool:
        for done in [pool.submit(step, a, b) for a, b in itertools.pairwise(bounds)]:
            done.result()
    return out


def poses(skeleton: Skeleton, coords: Array, root: Array | None = None,
          given: Array | None = None, *, threads: int | None = None,
          compiled: bool | None = None) -> Array:
    """:func:`poses_into` a new array."""
    out = np.empty((coords.shape[0], len(skeleton.bodies), 7))
    return poses_into(skeleton, coords, root, given, out, threads=threads, compiled=compiled)
