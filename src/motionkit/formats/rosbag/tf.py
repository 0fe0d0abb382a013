"""A small TF buffer of our own: time series of parent->child transforms and chain lookups.

No ``tf2``: transforms from ``/tf`` and ``/tf_static`` are stored per edge, a lookup walks
the frame tree from the target's parent frame to the child frame (edges used backwards are
inverted), interpolating each dynamic edge linearly (position) and by slerp (rotation).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ...errors import FormatError
from ...spatial.quaternion import conjugate, multiply, rotate, slerp
from ..shared.poses import normalized_quaternions


@dataclass
class _Edge:
    static: bool
    stamps: list[int] = field(default_factory=list)
    poses: list[tuple[float, ...]] = field(default_factory=list)

    def arrays(self, name: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Stamps and poses sorted by time, quaternions scaled to unit length; a zero or
        non-finite quaternion is a FormatError naming the edge ``name`` and its stamp."""
        stamps = np.asarray(self.stamps, dtype=np.int64)
        order = np.argsort(stamps, kind="stable")
        stamps = stamps[order]
        poses = np.asarray(self.poses, dtype=np.float64).reshape(-1, 7)[order]
        try:
            normalized_quaternions(poses[:, 3:], None, lambda row: row)
        except FormatError as exc:
            assert exc.line is not None
            raise FormatError(f"TF {name}: zero or invalid quaternion at stamp "
                              f"{stamps[exc.line]} ns") from None
        return stamps, poses


class TfBuffer:
    """Edges parent->child, each a series of (stamp ns, x y z qx qy qz qw)."""

    def __init__(self) -> None:
        self.edges: dict[tuple[str, str], _Edge] = {}

    def add(self, parent: str, child: str, stamp_ns: int, pose: tuple[float, ...],
            static: bool) -> None:
        """Record one transform (frame names without a leading ``/``)."""
        key = (parent.lstrip("/"), child.lstrip("/"))
        edge = self.edges.get(key)
        if edge is None:
            edge = self.edges[key] = _Edge(static)
        edge.static = edge.static and static
        edge.stamps.append(stamp_ns)
        edge.poses.append(pose)

    def frames(self) -> list[str]:
        """All frame names seen."""
        return sorted({name for key in self.edges for name in key})

    def _path(self, parent: str, child: str) -> list[tuple[str, str, bool]]:
        """Edges from ``parent`` to ``child`` as (edge parent, edge child, forward)."""
        links: dict[str, list[tuple[str, tuple[str, str, bool]]]] = {}
        for a, b in self.edges:
            links.setdefault(a, []).append((b, (a, b, True)))
            links.setdefault(b, []).append((a, (a, b, False)))
        previous: dict[str, tuple[str, tuple[str, str, bool]] | None] = {parent: None}
        queue = deque([parent])
        while queue:
            node = queue.popleft()
            if node == child:
                break
            for nxt, step in links.get(node, []):
                if nxt not in previous:
                    previous[nxt] = (node, step)
                    queue.append(nxt)
        if child not in previous:
            known = ", ".join(self.frames()) or "none"
            raise FormatError(f"no TF chain from {parent!r} to {child!r} (frames: {known})")
        steps: list[tuple[str, str, bool]] = []
        node = child
        while previous[node] is not None:
            before, step = previous[node]  # type: ignore[misc]
            steps.append(step)
            node = before
        return steps[::-1]

    def is_static(self, parent: str, child: str) -> bool:
        """True when every edge of the chain from ``parent`` to ``child`` is static."""
        path = self._path(parent.lstrip("/"), child.lstrip("/"))
        return all(self.edges[(a, b)].static for a, b, _ in path)

    def lookup(self, parent: str, child: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Poses of ``child`` in ``parent`` (n, 7) at every stamp of the chain's dynamic
        edges that falls in the time span all of them cover (a FormatError naming each
        edge's span when there is none)."""
        parent, child = parent.lstrip("/"), child.lstrip("/")
        series = []
        for a, b, forward in self._path(parent, child):
            edge = self.edges[(a, b)]
            series.append((f"{a}->{b}", edge.static, *edge.arrays(f"{a}->{b}"), forward))
        dynamic = [(name, times) for name, static, times, _, _ in series if not static]
        if dynamic:
            lo = max(int(times[0]) for _, times in dynamic)
            hi = min(int(times[-1]) for _, times in dynamic)
            if lo > hi:
                spans = ", ".join(f"{name} {times[0]}..{times[-1]} ns" for name, times in dynamic)
                raise FormatError(f"no time covered by every dynamic TF edge from {parent!r} "
                                  f"to {child!r} ({spans})")
            stamps = np.unique(np.concatenate([times for _, times in dynamic]))
            stamps = stamps[(stamps >= lo) & (stamps <= hi)]
        else:
            stamps = np.zeros(1, dtype=np.int64)
        pose = np.zeros((stamps.size, 7))
        pose[:, 6] = 1.0
        for _, static, times, poses, forward in series:
            step = _sample(static, times, poses, stamps)
            if not forward:
                step = _invert(step)
            pose = _compose(pose, step)
        return stamps, pose


def _sample(static: bool, times: NDArray[np.int64], poses: NDArray[np.float64],
            stamps: NDArray[np.int64]) -> NDArray[np.float64]:
    """An edge's poses (sorted ``times``) at ``stamps``: the last one if static or single,
    else interpolated (linear position, slerp rotation), held at the ends."""
    if static or times.size == 1:
        held: NDArray[np.float64] = np.broadcast_to(poses[-1], (stamps.size, 7)).copy()
        return held
    upper = np.clip(np.searchsorted(times, stamps, side="left"), 1, times.size - 1)
    lower = upper - 1
    span = (times[upper] - times[lower]).astype(np.float64)
    frac = np.clip((stamps - times[lower]) / np.where(span > 0, span, 1.0), 0.0, 1.0)
    out = np.empty((stamps.size, 7))
    out[:, :3] = poses[lower, :3] + frac[:, None] * (poses[upper, :3] - poses[lower, :3])
    out[:, 3:] = slerp(poses[lower, 3:], poses[upper, 3:], frac)
    return out


def _invert(pose: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.empty_like(pose)
    out[:, 3:] = conjugate(pose[:, 3:])
    out[:, :3] = -rotate(out[:, 3:], pose[:, :3])
    return out


def _compose(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.empty_like(a)
    out[:, :3] = a[:, :3] + rotate(a[:, 3:], b[:, :3])
    out[:, 3:] = multiply(a[:, 3:], b[:, 3:])
    return out
