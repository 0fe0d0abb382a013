"""Everything a retargeting needs but the source motion, by file name: what ``motionkit
retarget`` and ``motionkit batch retarget`` take, one rule for both. The robot and the maps
are read once per process (a batch worker retargets many clips onto one robot)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .. import api
from ..errors import ConversionError
from ..model import Motion
from ..model.skeleton import Skeleton
from .maps import BodyMap, read_map, same_names
from .run import Options, Retargeted, retarget
from .source import read_frame_fix, read_rename


@dataclass(frozen=True)
class Plan:
    """A robot model, a body map (a GMR ik_config, or ``by_name``), the source's adapters
    (a name map, a frame fix) and the options."""

    robot: str
    map_path: str | None = None
    by_name: bool = False
    rename: str | None = None
    frame_fix: str | None = None
    options: Options = field(default_factory=Options)

    def __post_init__(self) -> None:
        if (self.map_path is None) == (not self.by_name):
            raise ConversionError("give the body map: a GMR ik_config, or by name")

    def inputs(self) -> list[str]:
        """The files it reads (none may be an output)."""
        return [p for p in (self.robot, self.map_path, self.rename, self.frame_fix) if p]

    def run(self, source: Motion,
            progress: Callable[[Iterable[int]], Iterable[int]] | None = None) -> Retargeted:
        """``source`` retargeted onto the robot."""
        robot = _robot(*_key(self.robot))
        rename = read_rename(self.rename) if self.rename else None
        if self.map_path is not None:
            body_map = _map(*_key(self.map_path))
        else:
            if source.skeleton is None:
                raise ConversionError("a map by name needs the source's skeleton "
                                      "(a robot motion: give its character)")
            body_map = same_names([(rename or {}).get(b.name, b.name)
                                   for b in source.skeleton.bodies],
                                  [b.name for b in robot.bodies])
        return retarget(source, robot, body_map, rename=rename,
                        fix=read_frame_fix(self.frame_fix) if self.frame_fix else None,
                        options=self.options, progress=progress)


def _key(path: str) -> tuple[str, int, int]:
    """A file's real path and version (size, mtime): a cache key that sees a change."""
    real = os.path.realpath(path)
    stat = os.stat(real)
    return real, stat.st_size, stat.st_mtime_ns


@functools.lru_cache(maxsize=4)
def _robot(path: str, size: int, mtime: int) -> Skeleton:
    return api.read_skeleton(path)


@functools.lru_cache(maxsize=4)
def _map(path: str, size: int, mtime: int) -> BodyMap:
    return read_map(path)


def write_robot_motion(out: str | os.PathLike[str], motion: Motion, to_format: str | None,
                       plan: Plan, lossy: bool) -> None:
    """Write a retargeted motion; formats that name their robot by its model (GMR,
    MimicKit) get the plan's robot, a bag gets JointState (and the root on ``/tf``)."""
    import warnings

    from ..errors import MotionkitWarning
    from ..formats import registry

    fmt = registry.for_writing(out, to_format)
    options = fmt.write_options()
    extra: dict[str, object] = {"character": plan.robot} if "character" in options else {}
    if "message" in options:  # a bag: joint values, not a pose topic
        extra["message"] = "JointState"
    with warnings.catch_warnings():
        warnings.simplefilter("always", MotionkitWarning)
        fmt.write(out, motion, lossy=lossy, **extra)
