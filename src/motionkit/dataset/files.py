"""Which files a batch works on, and where each one's output goes (the input tree, mirrored)."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

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


def up_to_date(source: Path, target: Path) -> bool:
    """True when ``target`` exists and was written after ``source`` last changed."""
    try:
        return target.stat().st_mtime_ns >= source.stat().st_mtime_ns
    except OSError:
        return False
