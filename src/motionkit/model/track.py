"""One time series of a motion: joint values, poses, a vector, quaternions, …"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .timeline import Timeline

TrackKind = Literal["value", "vector3", "pose", "quaternion"]

#: Size of the last axis each kind requires (``value`` takes any size).
KIND_WIDTH: dict[str, int | None] = {"value": None, "vector3": 3, "pose": 7, "quaternion": 4}


@dataclass(eq=False)
class Track:
    """A named series with frames on axis 0.

    ``data`` is ``(frames, dims)`` or ``(frames, parts, dims)``. Poses are
    ``x y z qx qy qz qw``; quaternions ``qx qy qz qw`` (scalar last). ``labels`` name the
    parts (or the columns of a 2-D value track); ``attrs`` keep per-track facts such as
    ``root_relative`` for a Choreonoid ZMP.
    """

    name: str
    kind: TrackKind
    data: NDArray[np.generic]
    timeline: Timeline
    labels: list[str] | None = None
    attrs: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.data = np.asarray(self.data)
        if self.kind not in KIND_WIDTH:
            raise ValueError(f"unknown track kind {self.kind!r}")
        if self.data.ndim not in (1, 2, 3):
            raise ValueError(f"track {self.name!r}: data must have 1 to 3 axes")
        if self.data.ndim == 1:
            self.data = self.data.reshape(-1, 1)
        width = KIND_WIDTH[self.kind]
        if width is not None and self.data.shape[-1] != width:
            raise ValueError(
                f"track {self.name!r}: a {self.kind} track needs {width} numbers per part, "
                f"got shape {self.data.shape}"
            )
        if self.data.shape[0] != self.timeline.count:
            raise ValueError(
                f"track {self.name!r}: {self.data.shape[0]} frames but the timeline has "
                f"{self.timeline.count}"
            )
        if self.labels is not None:
            self.labels = [str(label) for label in self.labels]
            if len(self.labels) != self.part_count:
                raise ValueError(
                    f"track {self.name!r}: {len(self.labels)} labels for {self.part_count} parts"
                )

    @property
    def frames(self) -> int:
        return int(self.data.shape[0])

    @property
    def times(self) -> NDArray[np.float64]:
        """Frame times in float64 seconds (computed on demand for a uniform rate)."""
        return self.timeline.times

    @property
    def part_count(self) -> int:
        """Parts (links, joints, bodies) per frame; columns for a 2-D value track."""
        if self.data.ndim == 3:
            return int(self.data.shape[1])
        return int(self.data.shape[1]) if self.kind == "value" else 1

    def with_data(self, data: NDArray[np.generic], timeline: Timeline | None = None) -> Track:
        """A copy of this track with new data (and optionally a new timeline)."""
        return Track(self.name, self.kind, data, timeline or self.timeline,
                     list(self.labels) if self.labels else None, dict(self.attrs))

    def describe(self) -> dict[str, object]:
        """A JSON-friendly summary: kind, shape, rate or stamped, labels, value range."""
        summary: dict[str, Any] = {"kind": self.kind, "shape": list(self.data.shape)}
        if self.timeline.is_uniform:
            summary["rate"] = self.timeline.rate
        else:
            summary["stamped"] = True
        if self.labels:
            summary["labels"] = list(self.labels)
        if self.data.size and np.issubdtype(self.data.dtype, np.number):
            finite = self.data[np.isfinite(self.data)] if self.data.dtype.kind == "f" else self.data
            if finite.size:
                summary["min"] = float(finite.min())
                summary["max"] = float(finite.max())
        if self.attrs:
            summary["attrs"] = {k: v for k, v in self.attrs.items() if _jsonable(v)}
        return summary


def _jsonable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool, type(None))) or (
        isinstance(value, Sequence) and all(isinstance(v, (str, int, float)) for v in value)
    )
