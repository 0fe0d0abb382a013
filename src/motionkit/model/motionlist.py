"""A weighted list of motion files (PARC's motion lists), as the readers give it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(eq=False)
class MotionEntry:
    """One motion of a list: its resolved path, normalised weight, and other keys."""

    path: Path
    weight: float
    source: str
    extras: dict[str, object] = field(default_factory=dict)
    #: Where a relative ``source`` was found ("the working directory", "the list's folder",
    #: "N folder(s) above the list"), "" when it is absolute or was found nowhere.
    found_in: str = ""
    #: The folders a relative ``source`` was looked for in.
    tried: tuple[Path, ...] = ()

    def missing(self) -> str:
        """The one-line reason an entry's file is not there, naming every place looked in."""
        if not self.tried:
            return f"motion file {self.source!r} does not exist"
        places = ", ".join(str(folder) for folder in self.tried[:6])
        more = f" and {len(self.tried) - 6} folders above" if len(self.tried) > 6 else ""
        return f"motion file {self.source!r} is in none of: {places}{more}"


@dataclass(eq=False)
class MotionList:
    """A weighted list of motion files."""

    entries: list[MotionEntry]
    extras: dict[str, object] = field(default_factory=dict)

    @property
    def paths(self) -> list[Path]:
        return [entry.path for entry in self.entries]

    @property
    def weights(self) -> list[float]:
        return [entry.weight for entry in self.entries]


def is_there(path: Path) -> bool:
    """True for an existing file; a name the system refuses (too long, say) is not there."""
    try:
        return path.is_file()
    except OSError:
        return False
