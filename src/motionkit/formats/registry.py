"""Which module reads and writes which file: by name, by extension, by content.

Each format lives in its own module under ``motionkit.formats`` and exposes
``read(path, **options)``, optionally ``write(path, obj, **options)``, optionally
``sniff(head: bytes) -> bool`` (used when an extension is shared by several formats)
and the option names it accepts as ``READ_OPTIONS`` / ``WRITE_OPTIONS``. Modules are
imported only when a file of theirs is touched, so ``import motionkit`` stays fast.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ..errors import FormatError, MotionkitError

SNIFF_BYTES = 65536


@dataclass(frozen=True)
class FormatInfo:
    """One registered format."""

    name: str
    description: str
    extensions: tuple[str, ...]
    module: str  # relative to motionkit.formats

    def load(self) -> ModuleType:
        """Import the format's module (lazily)."""
        try:
            return importlib.import_module(f"motionkit.formats.{self.module}")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("motionkit."):
                raise MotionkitError(f"format {self.name!r} is not available yet") from None
            raise MotionkitError(
                f"format {self.name!r} needs the package {exc.name!r}; install it with pip"
            ) from None

    def can_read(self) -> bool:
        return hasattr(self.load(), "read")

    def can_write(self) -> bool:
        return hasattr(self.load(), "write")


# Order matters where extensions are shared: the first format whose sniff accepts the
# content wins when reading, and the first that can write wins when writing.
FORMATS: tuple[FormatInfo, ...] = (
    FormatInfo("seq", "Choreonoid body motion (YAML, versions 1-4)", (".seq", ".yaml", ".yml"),
               "choreonoid.seq"),
    FormatInfo("body", "Choreonoid body model (YAML)", (".body",), "choreonoid.body"),
    FormatInfo("parc", "PARC motion pickle (MS container or legacy)", (".pkl", ".ms"), "parc.ms"),
    FormatInfo("parc-character", "PARC character model (MJCF subset)", (".xml",),
               "parc.character"),
    FormatInfo("motionlist", "PARC motion list (YAML)", (".yaml", ".yml"), "parc.motionlist"),
    FormatInfo("skel", "DART skeleton/world (XML)", (".skel",), "dart.skel"),
    FormatInfo("traj", "trajectopy ASCII trajectory", (".traj", ".txt", ".csv"),
               "trajectory.traj"),
    FormatInfo("tum", "TUM RGB-D trajectory", (".tum", ".txt"), "trajectory.tum"),
    FormatInfo("kitti", "KITTI odometry poses", (".kitti", ".txt"), "trajectory.kitti"),
    FormatInfo("euroc", "EuRoC / ASL ground truth CSV", (".csv",), "trajectory.euroc"),
    FormatInfo("rosbag", "ROS1 bag, ROS2 bag folder or MCAP", (".bag", ".mcap", ".db3"),
               "rosbag.bag"),
)

_BY_NAME = {info.name: info for info in FORMATS}


def formats() -> tuple[FormatInfo, ...]:
    """Every registered format, in sniffing order."""
    return FORMATS


def by_name(name: str) -> FormatInfo:
    """The format called ``name`` (case-insensitive); a clear error for unknown names."""
    info = _BY_NAME.get(name.lower().lstrip("."))
    if info is None:
        for candidate in FORMATS:  # an extension works as a name too: --to yaml
            if "." + name.lower().lstrip(".") in candidate.extensions:
                return candidate
        known = ", ".join(sorted(_BY_NAME))
        raise MotionkitError(f"unknown format {name!r}; known formats: {known}")
    return info


def _extension(path: Path) -> str:
    return path.suffix.lower()


def _head(path: Path) -> bytes:
    if path.is_dir():
        return b""
    try:
        with open(path, "rb") as handle:
            return handle.read(SNIFF_BYTES)
    except FileNotFoundError:
        raise FormatError("no such file", path) from None
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", path) from None


def for_reading(path: str | os.PathLike[str], format: str | None = None) -> FormatInfo:
    """The format to read ``path`` with: explicit name, else extension, else content."""
    if format:
        return by_name(format)
    target = Path(path)
    if target.is_dir() or is_bag_address(path):
        return by_name("rosbag")
    candidates = [info for info in FORMATS if _extension(target) in info.extensions]
    if len(candidates) == 1:
        return candidates[0]
    head = _head(target)
    for info in candidates or list(FORMATS):
        try:
            module = info.load()
        except MotionkitError:
            continue
        sniff = getattr(module, "sniff", None)
        if sniff is not None and sniff(head):
            return info
    if not candidates:
        raise FormatError(
            f"unknown file type {target.suffix or '(no extension)'!r}; name the format "
            f"(format=... or --from)", target)
    names = ", ".join(info.name for info in candidates)
    raise FormatError(f"content matches none of the formats for {target.suffix!r} ({names})",
                      target)


def is_bag_address(path: str | os.PathLike[str]) -> bool:
    """True for ``run.bag:/topic`` or ``run.bag:tf:map->base_link`` (a bag plus a selector)."""
    text = os.fspath(path)
    if Path(text).exists() or ":" not in text:
        return False
    base = text.split(":", 1)[0]
    return Path(base).exists() and (Path(base).is_dir() or Path(base).suffix.lower() in
                                    (".bag", ".mcap", ".db3"))


def for_writing(path: str | os.PathLike[str], format: str | None = None) -> FormatInfo:
    """The format to write ``path`` with: explicit name, else the first writer for its extension."""
    if format:
        return by_name(format)
    target = Path(path)
    for info in FORMATS:
        if _extension(target) in info.extensions:
            try:
                if info.can_write():
                    return info
            except MotionkitError:
                continue
    raise MotionkitError(
        f"cannot tell the output format from {target.name!r}; name it (format=... or --to)")
