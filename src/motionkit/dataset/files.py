"""Which files a batch works on, and where each one's output goes (the input tree, mirrored)."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from stat import S_ISREG

from ..errors import MotionkitError

_MAGIC = frozenset("*?[")


@dataclass(frozen=True)
class Item:
    """One input file and its path relative to the folder its pattern starts from."""

    source: Path
    relative: PurePosixPath

    def target(self, out: Path, suffix: str | None = None) -> Path:
        """The output path under ``out`` (same relative path; ``suffix`` replaces the extension)."""
        relative = self.relative if suffix is None else self.relative.with_suffix(suffix)
        return out.joinpath(*relative.parts)


def _base(pattern: str) -> Path:
    """The folder a glob pattern starts from: its leading parts without wildcards."""
    parts = Path(pattern).parts
    fixed = []
    for part in parts:
        if _MAGIC & set(part):
            break
        fixed.append(part)
    return Path(*fixed) if fixed else Path(".")


def _episode_folder(path: Path) -> bool:
    from ..formats.registry import episode_folder

    return episode_folder(path)


def _files(folder: Path) -> list[Path]:
    """The files under ``folder``; a dataset folder inside it stands for its own files."""
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        datasets = [name for name in dirs if _episode_folder(here / name)]
        found.extend(here / name for name in datasets)
        dirs[:] = [name for name in dirs if name not in datasets]
        found.extend(here / name for name in files if (here / name).is_file())
    return found


def expand(patterns: list[str] | tuple[str, ...]) -> list[Item]:
    """Files matched by ``patterns`` (globs with ``**``, folders taken whole, plain files).

    Each file is listed once, in pattern order, then sorted within its pattern.
    A pattern that matches nothing is a MotionkitError (a typo should not look like an
    empty dataset)."""
    items: list[Item] = []
    seen: set[str] = set()
    for pattern in patterns:
        path = Path(pattern)
        if path.is_dir() and _episode_folder(path):  # a dataset folder is one item
            base, found = path.parent, [path]
        elif path.is_dir():
            base, found = path, _files(path)
        elif path.is_file():
            base, found = path.parent, [path]
        else:
            base = _base(pattern)
            found = [Path(p) for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)]
        if not found:
            raise MotionkitError(f"{pattern!r} matches no file")
        for file in sorted(found):
            key = os.path.realpath(file)
            if key in seen or (file.name.startswith(".") and file.name.endswith(".part")):
                continue
            seen.add(key)
            relative = PurePosixPath(os.path.normpath(file.relative_to(base)).replace(os.sep, "/"))
            if relative.is_absolute() or ".." in relative.parts:  # the output must stay in --out
                raise MotionkitError(f"{pattern!r} reaches {str(file)!r} outside the folder it "
                                     "starts from; give a pattern without '..'")
            items.append(Item(file.absolute(), relative))
    return items


#: The most entries :func:`stamp` looks at in a folder; a larger one has no stamp (it is
#: read and redone on every run rather than walked without end).
STAMP_ENTRIES = 100_000


def stamp(source: Path) -> tuple[int, int] | None:
    """``source``'s size and when it last changed (``st_mtime_ns``); for a folder (a
    dataset), its files' total size and the newest time of it and everything in it: a
    file rewritten inside changes no folder's own time. None when it cannot be told
    (gone, unreadable, over :data:`STAMP_ENTRIES` entries): then it counts as changed."""
    try:
        own = source.stat()
        if not source.is_dir():
            return own.st_size, own.st_mtime_ns
        size, newest, seen = 0, own.st_mtime_ns, 0
        for root, dirs, names in os.walk(source, onerror=_raise):
            seen += len(dirs) + len(names)
            if seen > STAMP_ENTRIES:
                return None
            for name in dirs:
                newest = max(newest, os.stat(os.path.join(root, name)).st_mtime_ns)
            for name in names:  # a link is followed, as the folder's hash does
                entry = os.stat(os.path.join(root, name))
                newest = max(newest, entry.st_mtime_ns)
                size += entry.st_size if S_ISREG(entry.st_mode) else 0
        return size, newest
    except OSError:
        return None


def _raise(error: OSError) -> None:
    raise error


def up_to_date(source: Path, target: Path) -> bool:
    """True when ``target`` exists and was written after ``source`` last changed (for a
    folder: after any file in it did, see :func:`stamp`)."""
    changed = stamp(source)
    try:
        return changed is not None and target.stat().st_mtime_ns >= changed[1]
    except OSError:
        return False
