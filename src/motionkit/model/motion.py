"""A motion: named tracks plus what gives them meaning (skeleton, terrain, metadata)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping

from ..errors import ConversionError, choices
from .skeleton import Skeleton
from .terrain import Terrain
from .track import Track

#: Track names with a fixed meaning across formats (see DESIGN.md).
STANDARD_TRACKS = (
    "root", "links", "joints", "joint_rotations", "zmp", "contacts", "velocity", "arc_length",
)


class Tracks(MutableMapping[str, Track]):
    """A motion's tracks by name.

    Iteration, ``len`` and ``items()`` give the *stored* tracks. A lookup (``[]``, ``get``,
    ``in``) also finds the *views* derived from them: ``root`` is part 0 of a ``links``
    pose track when no ``root`` is stored. Views share the stored data and are never
    written twice; ``views()`` lists them (``info`` shows them beside the stored tracks).
    A view is made anew on each lookup: to change its labels or attrs, store a track.
    """

    def __init__(self, tracks: Mapping[str, Track] | None = None) -> None:
        self._stored: dict[str, Track] = dict(tracks or {})

    def __getitem__(self, name: str) -> Track:
        track = self._stored.get(name)
        if track is None:
            track = self._view(name)
            if track is None:
                raise KeyError(name)
        return track

    def __contains__(self, name: object) -> bool:
        return name in self._stored or (isinstance(name, str) and self._view(name) is not None)

    def __setitem__(self, name: str, track: Track) -> None:
        self._stored[name] = track

    def __delitem__(self, name: str) -> None:
        del self._stored[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._stored)

    def __len__(self) -> int:
        return len(self._stored)

    def pop(self, name: str, *default: Track | None) -> Track | None:  # type: ignore[override]
        """Remove and return a stored track; a view (or a missing name) gives ``default``
        when one is given, else KeyError (a view is not stored, so it cannot be removed)."""
        if name in self._stored:
            return self._stored.pop(name)
        if default:
            return default[0]
        raise KeyError(name)

    def views(self) -> dict[str, Track]:
        """The derived tracks a lookup finds but iteration does not give."""
        root = self._view("root")
        return {"root": root} if root is not None else {}

    def is_stored(self, name: str) -> bool:
        """True when a track called ``name`` is stored (not only found as a view)."""
        return name in self._stored

    def is_view(self, name: str) -> bool:
        """True when ``name`` is found only as a view of a stored track."""
        return name not in self._stored and self._view(name) is not None

    def _view(self, name: str) -> Track | None:
        if name != "root" or "root" in self._stored:
            return None
        links = self._stored.get("links")
        if links is None or links.kind != "pose" or links.data.ndim != 3 or not links.part_count:
            return None
        return Track("root", "pose", links.data[:, 0, :], links.timeline)

    def __repr__(self) -> str:
        return f"Tracks({', '.join(self._stored)})"


class Motion:
    """Tracks by name, an optional skeleton and terrain, and metadata.

    ``meta`` holds ``name``, ``loop_mode``, ``epsg``, ``source_format`` and, under the
    format's own key (e.g. ``meta["choreonoid"]``), extras kept for round trips.
    """

    def __init__(self, tracks: Mapping[str, Track] | None = None,
                 skeleton: Skeleton | None = None, terrain: Terrain | None = None,
                 meta: dict[str, object] | None = None) -> None:
        self.tracks = Tracks(tracks)
        self.skeleton = skeleton
        self.terrain = terrain
        self.meta: dict[str, object] = {} if meta is None else meta

    @property
    def tracks(self) -> Tracks:
        return self._tracks

    @tracks.setter
    def tracks(self, tracks: Mapping[str, Track]) -> None:
        self._tracks = tracks if isinstance(tracks, Tracks) else Tracks(tracks)

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
        """The root pose track: ``root``, stored or viewed from part 0 of ``links``."""
        return self.tracks.get("root")

    def with_root_link(self, link: str) -> Motion:
        """This motion with the pose of the link called ``link`` as its root and no
        ``links`` track (what a writer of one trajectory is asked for with ``link=``)."""
        links = self.tracks.get("links")
        if links is None or links.data.ndim != 3 or not links.labels or link not in links.labels:
            known = (choices(link, links.labels or [], "links") if links is not None
                     else "no links track")
            raise ConversionError(f"no link named {link!r} ({known})")
        tracks = {name: track for name, track in self.tracks.items() if name not in ("links", "root")}
        tracks["root"] = Track("root", "pose", links.data[:, links.labels.index(link), :],
                               links.timeline)
        return Motion(tracks, self.skeleton, self.terrain, dict(self.meta))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}{list(t.data.shape)}" for n, t in self.tracks.items())
        return f"Motion({inner})"
