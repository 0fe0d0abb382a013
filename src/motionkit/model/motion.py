"""A motion: named tracks plus what gives them meaning (skeleton, terrain, metadata)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .track import Track

#: Track names with a fixed meaning across formats (see DESIGN.md).
STANDARD_TRACKS = (
    "root", "links", "joints", "joint_rotations", "zmp", "contacts", "velocity", "arc_length",
)


@dataclass(eq=False)
class Motion:
    """Tracks by name, an optional skeleton and terrain, and metadata.

    ``meta`` holds ``name``, ``loop_mode``, ``epsg``, ``source_format`` and, under the
    format's own key (e.g. ``meta["choreonoid"]``), extras kept for round trips.
    """

    tracks: dict[str, Track] = field(default_factory=dict)
    skeleton: Any = None
    terrain: Any = None
    meta: dict[str, Any] = field(default_factory=dict)

    def add(self, track: Track) -> Track:
        """Add (or replace) a track under its own name and return it."""
        self.tracks[track.name] = track
        return track

    @property
    def main_track(self) -> Track | None:
        """The track that stands for the motion's timeline: root, links, joints, or the first."""
        for name in ("root", "links", "joints"):
            if name in self.tracks:
                return self.tracks[name]
        return next(iter(self.tracks.values()), None)

    @property
    def frames(self) -> int:
        main = self.main_track
        return main.frames if main else 0

    @property
    def duration(self) -> float:
        """The longest track duration in seconds."""
        return max((t.timeline.duration for t in self.tracks.values()), default=0.0)

    def root_pose(self) -> Track | None:
        """The root pose track, derived from part 0 of ``links`` when there is no ``root``."""
        if "root" in self.tracks:
            return self.tracks["root"]
        links = self.tracks.get("links")
        if links is None or links.data.ndim != 3:
            return None
        label = links.labels[0] if links.labels else None
        return Track("root", "pose", links.data[:, 0, :], links.timeline,
                     attrs={"link": label} if label else {})

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}{list(t.data.shape)}" for n, t in self.tracks.items())
        return f"Motion({inner})"
