"""The format contract and the registry: which module reads and writes which file.

A format is one ``Format`` object: its name, extensions and module (the static part, so
``import motionkit`` stays fast), and — loaded with the module on first use — its
``read``, ``write``, ``sniff``, the options each takes (from their signatures) and what
its writer can hold (``HOLDS``). ``Format.read`` and ``Format.write`` are the only doors:
they check options, apply the loss rule (``formats.loss``) and keep every exception a
reader or writer raises inside motionkit's error family, naming the file.

A format module defines (see docs/adding-a-format.md):

- ``read(path, *, option=default, …) -> Motion | Skeleton | World | MotionList``
- ``write(path, obj, *, option=default, …)``, receiving only what ``HOLDS`` takes
  (``lossy`` and, for writers of one pose track, ``link`` are handled here)
- ``HOLDS: Holds``, or ``holds(**write_options) -> Holds`` where an option changes it
- ``WRITES: tuple[type, ...]``: what objects ``write`` takes (default: Motion)
- optionally ``sniff(head: bytes) -> bool`` (for shared extensions), ``losses(obj,
  **write_options) -> list[str]`` (losses only the writer can see), ``describe(obj) ->
  list[str]`` (lines ``info`` adds), ``claims(path: str) -> bool`` (addresses that are not
  plain files, such as ``run.bag:/topic``), ``hint(head: bytes) -> str | None`` (how to
  read a file no format recognised), ``accepts(path: str) -> bool`` (a full check after
  ``sniff`` said yes: False hands the file to the next format whose sniff accepts it, as
  ``parc-character`` does with MuJoCo models outside the PARC subset), ``survey(path)
  -> list[str]`` (what ``info`` shows of a file ``read`` refuses for holding nothing it
  returns, such as a bag of TF only).

The same list as types: :class:`FormatModule` (``read``) and one protocol per other part
(:class:`Writer`, :class:`Holding`, :class:`HoldingByOptions`, :class:`Writes`,
:class:`Sniffing`, :class:`Losing`, :class:`Describing`, :class:`Claiming`,
:class:`Hinting`, :class:`Accepting`, :class:`Surveying`), through which ``Format`` calls the module.
"""

from __future__ import annotations

import importlib
import inspect
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, cast

from ..errors import (
    ConversionError,
    FormatError,
    MotionkitError,
    choices,
    format_hint,
    option_hint,
    warn,
)
from . import loss

if TYPE_CHECKING:
    from ..model import Motion, MotionList, Skeleton, World

    Loaded: TypeAlias = Motion | Skeleton | World | MotionList
else:
    Loaded = Any

PathLike = str | os.PathLike[str]
SNIFF_BYTES = 65536


# The contract as types. Each optional part is a protocol of its own: ``Format`` looks a
# part up on the module (one set to None counts as absent, as ever), then calls it through
# its protocol. Options differ by format: the ``...`` of read, write, holds and losses.
class FormatModule(Protocol):
    """What every format module defines: ``read(path, *, option=default, …)``."""

    @property
    def read(self) -> Callable[..., Loaded]: ...


class Writer(Protocol):
    """``write(path, obj, *, option=default, …)``, given only what the writer holds."""

    @property
    def write(self) -> Callable[..., None]: ...


class Holding(Protocol):
    """``HOLDS``: what the writer holds, whatever its options."""

    @property
    def HOLDS(self) -> loss.Holds: ...


class HoldingByOptions(Protocol):
    """``holds(**write_options)``: what the writer holds with these options (a module
    defines this or ``HOLDS``)."""

    @property
    def holds(self) -> Callable[..., loss.Holds]: ...


class Writes(Protocol):
    """``WRITES``: the object types ``write`` takes (default: Motion)."""

    @property
    def WRITES(self) -> tuple[type, ...]: ...


class Sniffing(Protocol):
    """``sniff``: recognises the first bytes of its files (for shared extensions)."""

    def sniff(self, head: bytes) -> bool: ...


class Losing(Protocol):
    """``losses(obj, **write_options)``: what only the writer can see it would lose."""

    @property
    def losses(self) -> Callable[..., list[str]]: ...


class Describing(Protocol):
    """``describe``: the lines ``info`` adds for what this format's ``read`` returned."""

    def describe(self, obj: Loaded) -> list[str]: ...


class Containing(Protocol):
    """``dataset_contents``: the structured episodes and features of the dataset what
    ``read`` returned came from (``info --json``, ``catalog``), or None."""

    def dataset_contents(self, obj: Loaded) -> dict[str, object] | None: ...


class Claiming(Protocol):
    """``claims``: addresses of this format that are not plain files (``run.bag:/topic``)."""

    def claims(self, path: str) -> bool: ...


class Hinting(Protocol):
    """``hint``: how to read a file no format recognised (or None)."""

    def hint(self, head: bytes) -> str | None: ...


class Accepting(Protocol):
    """``accepts``: a full check after ``sniff`` said yes; False hands the file on."""

    def accepts(self, path: str) -> bool: ...


class Surveying(Protocol):
    """``survey``: lines about a file that ``read`` refuses for holding nothing it returns."""

    def survey(self, path: str) -> list[str]: ...


@dataclass(frozen=True)
class Format:
    """One registered format: static facts here, the rest from its module on first use."""

    name: str
    description: str
    extensions: tuple[str, ...]
    module: str  # relative to motionkit.formats
    namespace: str | None = None  # its key in Motion.meta for round-trip extras
    #: False: written only when named (format=... / --to), never chosen by the extension
    #: alone (it sniffs before a format that stays the extension's default writer)
    writes_by_extension: bool = True
    #: True: it reads a list of other files (a MotionList), not one motion or model
    lists_files: bool = False

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

    def sniff(self, head: bytes) -> bool:
        """True when the module recognises ``head`` (formats without ``sniff``: False)."""
        module = self._part("sniff")
        return module is not None and bool(cast(Sniffing, module).sniff(head))

    def hint(self, head: bytes) -> str | None:
        """How this format could read a file that no format claimed (or None)."""
        module = self._part("hint")
        return cast(Hinting, module).hint(head) if module is not None else None

    def accepts(self, path: PathLike) -> bool:
        """After ``sniff``: False when the module's own check hands the file on (default True)."""
        module = self._part("accepts")
        return module is None or bool(cast(Accepting, module).accepts(os.fspath(path)))

    def claims(self, path: PathLike) -> bool:
        """True for an address of this format that is not a plain file (``run.bag:/topic``)."""
        module = self._part("claims")
        return module is not None and bool(cast(Claiming, module).claims(os.fspath(path)))

    def survey(self, path: PathLike) -> list[str]:
        """What ``info`` can say of a file ``read`` refused ([] when nothing)."""
        module = self._part("survey")
        return list(cast(Surveying, module).survey(os.fspath(path))) if module is not None else []

    def read_options(self) -> frozenset[str]:
        """The options ``read`` takes (its parameters after the path)."""
        return _parameters(self._reader(), skip=1)

    def reader_options(self, **context: object) -> dict[str, object]:
        """The items of ``context`` (a character, say) that this format's reader takes, None
        values left out: callers pass what they have without naming formats."""
        takes = self.read_options()
        return {name: value for name, value in context.items()
                if value is not None and name in takes}

    def write_options(self) -> frozenset[str]:
        """The options ``write`` takes, with ``lossy`` (and ``link`` for one-pose writers)."""
        own = _parameters(self._writer(), skip=2)
        extra = {"lossy"}
        holds = self._declared_holds({})
        if holds is not None and holds.takes("root") and not holds.takes("links"):
            extra.add("link")
        if holds is not None and not holds.repeated_stamps:
            extra.add("dedupe")
        return own | extra

    def writes(self) -> tuple[type, ...]:
        """The object types ``write`` takes."""
        from ..model import Motion

        module = self._part("WRITES")
        return cast(Writes, module).WRITES if module is not None else (Motion,)

    def holds(self, **options: object) -> loss.Holds:
        """What the writer holds with these options."""
        holds = self._declared_holds(options)
        if holds is None:
            raise MotionkitError(f"format {self.name!r} declares no HOLDS for its writer")
        return holds

    def read(self, path: PathLike, **options: object) -> Loaded:
        """Read ``path``; every error is a FormatError (or another MotionkitError). A motion
        records the format it came from in ``meta["source_format"]``."""
        from ..model import Motion

        reader = self._reader()
        self._check("reading", options, self.read_options())
        try:
            obj: Loaded = reader(path, **options)
        except MotionkitError:
            raise
        except Exception as exc:
            raise _read_error(exc, path) from exc
        _warn_bad_rotations(obj, path)
        if isinstance(obj, Motion):
            obj.meta["source_format"] = self.name  # decided once, here
        return obj

    def write(self, path: PathLike, obj: Loaded, *, lossy: bool = False, **options: object) -> Loaded:
        """Write ``obj`` to ``path``: options checked, anything the format cannot hold
        refused (ConversionError) or, with ``lossy``, dropped with one warning. Returns what
        was written (the motion the writer was given)."""
        writer = self._writer()
        self._check("writing", {"lossy": lossy, **options}, self.write_options())
        link = cast("str | None", options.pop("link", None))  # checked where it is used
        dedupe = bool(options.pop("dedupe", False))
        from ..model import Motion

        if not isinstance(obj, self.writes()):
            takes = " or ".join(kind.__name__ for kind in self.writes())
            hint = ""
            if isinstance(obj, Motion) and obj.skeleton is None:
                hint = " (a motion has no skeleton to write)"
            elif isinstance(obj, Motion):
                hint = " (write the motion's skeleton instead)"
            raise ConversionError(f"{self.name} files hold a {takes}, not a "
                                  f"{type(obj).__name__}{hint}")

        try:
            if isinstance(obj, Motion):
                obj = self.settle(obj, lossy, link, options, dedupe)
            else:
                loss.settle(self._own_losses(obj, options), self.name, lossy)
            writer(path, obj, **options)
        except MotionkitError:
            raise
        except Exception as exc:
            raise _write_error(exc, path) from exc
        return obj

    def holds_whole(self, obj: Loaded, **options: object) -> bool:
        """True when ``write`` would take ``obj`` with these options and lose nothing: the
        loss rule run dry (nothing written, its warnings kept quiet), so a caller can
        prefer this writer only where it holds everything."""
        from ..model import Motion

        options = {k: v for k, v in options.items() if k != "lossy"}
        try:
            self._check("writing", options, self.write_options())
            if not isinstance(obj, self.writes()):
                return False
            link = cast("str | None", options.pop("link", None))
            dedupe = bool(options.pop("dedupe", False))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if isinstance(obj, Motion):
                    self.settle(obj, False, link, options, dedupe)
                else:
                    loss.settle(self._own_losses(obj, options), self.name, False)
        except MotionkitError:
            return False
        return True

    def settle(self, motion: Motion, lossy: bool, link: str | None = None,
               options: dict[str, object] | None = None, dedupe: bool = False) -> Motion:
        """The loss rule for one write: refuse (or warn about) everything the writer cannot
        hold, and return the motion with only what it holds."""
        options = options or {}
        holds = self.holds(**options)
        if not isinstance(motion.meta, dict):
            raise ConversionError(f"motion.meta must be a dict, not a {type(motion.meta).__name__}")
        replaced = []
        if link is not None:
            if motion.tracks.is_stored("root"):
                replaced.append(f"the stored track 'root' (replaced by link {link!r})")
            motion = motion.with_root_link(link)
        if holds.tracks is not None and "root" in holds.tracks and holds.root_required \
                and "root" not in motion.tracks:
            names = ", ".join(motion.tracks) or "none"
            poses = [name for name, track in motion.tracks.items() if track.kind == "pose"]
            how = (f"one of its pose tracks is a trajectory: address a bag topic as "
                   f"BAG:/{poses[0].lstrip('/')}" if poses else
                   f"a body model derives one: {option_hint('model', 'MODEL', 'command')}")
            raise ConversionError(
                f"{self.name} needs a root pose (a 'root' track or 'links'); this motion has "
                f"tracks: {names} ({how})")
        loss.refuse_bad_rotations(motion, holds, self.name)
        motion = loss.dedupe_stamps(motion, holds, self.name, dedupe)
        namespaces = frozenset(f.namespace for f in FORMATS if f.namespace)
        lost = replaced + loss.lost_items(motion, holds, namespaces) + self._own_losses(motion, options)
        loss.settle(lost, self.name, lossy)
        return loss.keep_held(motion, holds, namespaces)

    def describe(self, obj: Loaded) -> list[str]:
        """Lines only this format knows to show about ``obj`` (``info``)."""
        module = self._part("describe")
        return cast(Describing, module).describe(obj) if module is not None else []

    def dataset_contents(self, obj: Loaded) -> dict[str, object] | None:
        """The episodes and features of the dataset ``obj`` was read from, where the
        format has several episodes per source (else None)."""
        module = self._part("dataset_contents")
        return cast(Containing, module).dataset_contents(obj) if module is not None else None

    # -- helpers ----------------------------------------------------------------------
    def _part(self, name: str) -> ModuleType | None:
        """The module when it defines the part ``name`` (not as None), else None."""
        module = self.load()
        return module if getattr(module, name, None) is not None else None

    def _reader(self) -> Callable[..., Loaded]:
        module = self._part("read")
        if module is None:
            raise MotionkitError(f"format {self.name!r} cannot be read")
        return cast(FormatModule, module).read

    def _writer(self) -> Callable[..., None]:
        module = self._part("write")
        if module is None:
            raise MotionkitError(f"format {self.name!r} cannot be written")
        return cast(Writer, module).write

    def _declared_holds(self, options: dict[str, object]) -> loss.Holds | None:
        module = self._part("holds")
        if module is not None:
            function = cast(HoldingByOptions, module).holds
            known = _parameters(function, skip=0)
            return function(**{k: v for k, v in options.items() if k in known})
        module = self._part("HOLDS")
        return cast(Holding, module).HOLDS if module is not None else None

    def _own_losses(self, obj: Loaded, options: dict[str, object]) -> list[str]:
        module = self._part("losses")
        return list(cast(Losing, module).losses(obj, **options)) if module is not None else []

    def _check(self, doing: str, options: dict[str, object], allowed: frozenset[str]) -> None:
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise MotionkitError(f"{doing} {self.name} does not take option(s) "
                                 f"{', '.join(unknown)} "
                                 f"({choices(unknown[0], sorted(allowed), 'known', 40)})")


def _warn_bad_rotations(obj: object, path: PathLike) -> None:
    """A warning per track of a read motion with zero, non-finite or non-unit quaternions."""
    from ..model import Motion

    if not isinstance(obj, Motion):
        return
    for name, track in obj.tracks.items():
        found = loss.bad_rotations(track)
        if found is not None:
            warn(f"{os.fspath(path)}: track {name!r} has {found[0]} frame(s) with a zero, "
                 f"non-finite or non-unit quaternion, the first is frame {found[1]}")


def _parameters(function: Callable[..., object], skip: int) -> frozenset[str]:
    params = list(inspect.signature(function).parameters.values())[skip:]
    return frozenset(p.name for p in params
                     if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def _one_line(exc: BaseException) -> str:
    return " ".join((str(exc) or type(exc).__name__).split())[:300]


def _read_error(exc: Exception, path: PathLike) -> FormatError:
    """A reader's stray exception as a FormatError naming the file."""
    if isinstance(exc, FileNotFoundError):
        return FormatError("no such file", path)
    if isinstance(exc, OSError):
        return FormatError(f"cannot read: {exc.strerror or _one_line(exc)}", path)
    if isinstance(exc, RecursionError):
        return FormatError("nested too deeply to read", path)
    if isinstance(exc, MemoryError):
        return FormatError("needs more memory than is available", path)
    return FormatError(f"cannot be read ({type(exc).__name__}: {_one_line(exc)})", path)


def _write_error(exc: Exception, path: PathLike) -> MotionkitError:
    """A writer's stray exception as a MotionkitError naming the target."""
    if isinstance(exc, OSError):
        return MotionkitError(f"{os.fspath(path)}: cannot write: {exc.strerror or _one_line(exc)}")
    return ConversionError(f"{os.fspath(path)}: cannot be written "
                           f"({type(exc).__name__}: {_one_line(exc)})")


# Order matters where extensions are shared: the first format whose sniff accepts the
# content wins when reading, and the first that can write wins when writing.
FORMATS: tuple[Format, ...] = (
    Format("seq", "Choreonoid body motion (YAML, versions 1-4)", (".seq", ".yaml", ".yml"),
           "choreonoid.seq", "choreonoid"),
    Format("body", "Choreonoid body model (YAML)", (".body",), "choreonoid.body"),
    Format("mimickit", "MimicKit motion pickle", (".pkl",), "mimickit.motion", "mimickit",
           writes_by_extension=False),
    Format("gmr", "GMR robot motion pickle", (".pkl",), "mimickit.gmr", "gmr",
           writes_by_extension=False),
    Format("parc", "PARC motion pickle (MS container or legacy)", (".pkl", ".ms"), "parc.ms",
           "parc"),
    Format("parc-character", "PARC character model (MJCF subset)", (".xml",), "parc.character"),
    Format("mjcf", "MuJoCo MJCF model (any: read when parc-character refuses, or named)",
           (".xml",), "mujoco.mjcf"),
    Format("motionlist", "PARC motion list (YAML)", (".yaml", ".yml"), "parc.motionlist",
           lists_files=True),
    Format("skel", "DART skeleton/world (XML)", (".skel",), "dart.skel"),
    Format("urdf", "URDF robot model", (".urdf",), "urdf"),
    Format("traj", "trajectopy ASCII trajectory", (".traj", ".txt", ".csv"), "trajectory.traj",
           "traj"),
    Format("tum", "TUM RGB-D trajectory", (".tum", ".txt"), "trajectory.tum", "tum"),
    Format("kitti", "KITTI odometry poses", (".kitti", ".txt"), "trajectory.kitti", "kitti"),
    Format("euroc", "EuRoC / ASL ground truth CSV", (".csv",), "trajectory.euroc", "euroc"),
    Format("bvh", "BVH character motion (Biovision Hierarchy)", (".bvh",), "bvh", "bvh"),
    Format("glb", "glTF 2.0 binary: animated bodies and shapes (Blender, three.js)", (".glb",),
           "gltf.binary", "gltf"),
    Format("gltf", "glTF 2.0 JSON, buffer embedded: animated bodies and shapes", (".gltf",),
           "gltf.text", "gltf"),
    Format("rosbag", "ROS1 bag, ROS2 bag folder or MCAP", (".bag", ".mcap", ".db3"),
           "rosbag.bag", "rosbag"),
    Format("lerobot", "LeRobot v3.0 dataset (a folder)", (), "lerobot.dataset", "lerobot",
           writes_by_extension=False),
    Format("hdf5", "robomimic or Isaac Lab episode file (HDF5)", (".hdf5", ".h5"),
           "hdf5.episodes", "hdf5"),
    Format("amass", "AMASS SMPL+H / SMPL-X motion (.npz)", (".npz",), "containers.amass",
           "amass", writes_by_extension=False),
    Format("isaaclab-amp", "Isaac Lab AMP motion (.npz, MotionLoader)", (".npz",),
           "containers.amp", "isaaclab_amp", writes_by_extension=False),
    Format("c3d", "C3D motion capture (markers, analog channels)", (".c3d",), "c3d.read"),
    Format("beyondmimic", "BeyondMimic / mjlab motion (.npz; names or robot + order)",
           (".npz",), "containers.beyondmimic", "beyondmimic", writes_by_extension=False),
    # G1 CSVs: read and written only when named (--from/--to; no sniff: the quaternion order
    # cannot be told); a .csv no format claims gets g1csv's hint naming the dialects
    Format("g1csv", "Unitree G1 motion CSV (36 columns; quat=wxyz|xyzw required)",
           (".csv", ".g1csv"), "containers.g1csv", "g1csv", writes_by_extension=False),
    Format("g1csv-lafan", "G1 CSV, Unitree LAFAN1 retarget dialect (quaternion xyzw)",
           (".csv", ".g1csv"), "containers.g1csv_lafan", "g1csv", writes_by_extension=False),
    Format("g1csv-kimodo", "G1 CSV, Kimodo generator dialect (quaternion wxyz)",
           (".csv", ".g1csv"), "containers.g1csv_kimodo", "g1csv", writes_by_extension=False),
    Format("g1csv-seed", "G1 CSV, BONES-SEED dialect (header, cm, Euler degrees)",
           (".csv", ".g1csv"), "containers.g1csv_seed", "g1csv", writes_by_extension=False),
)

_BY_NAME = {info.name: info for info in FORMATS}
#: Formats whose modules define ``claims`` for addresses that are not plain files.
_ADDRESSED = ("lerobot", "rosbag")  # a dataset folder before any bag folder


def episode_folder(path: PathLike) -> bool:
    """True for a folder that a format reads as a dataset of several episodes (a LeRobot
    dataset): a catalog or a batch takes it whole, never its files one by one."""
    return os.path.isdir(path) and any(
        _BY_NAME[name].claims(path) and _BY_NAME[name]._part("dataset_contents") is not None
        for name in _ADDRESSED)


def formats() -> tuple[Format, ...]:
    """Every registered format, in sniffing order."""
    return FORMATS


def by_name(name: str) -> Format:
    """The format called ``name`` (case-insensitive); a clear error for unknown names."""
    info = _BY_NAME.get(name.lower().lstrip("."))
    if info is None:
        for candidate in FORMATS:  # an extension works as a name too: --to yaml
            if "." + name.lower().lstrip(".") in candidate.extensions:
                return candidate
        raise MotionkitError(f"unknown format {name!r}; "
                             f"{choices(name.lower(), sorted(_BY_NAME), 'known formats', 40)}")
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


def _may_be_address(path: Path) -> bool:
    """A folder, or a text with ``:`` that names no file (``run.bag:/topic``)."""
    return path.is_dir() or (":" in os.fspath(path) and not path.exists())


def for_reading(path: PathLike, format: str | None = None) -> Format:
    """The format to read ``path`` with: explicit name, else an address a format claims,
    else the extension, else the content. When no format of the extension recognises the
    content, the error names a format that does (TUM rows in a ``.csv``) or gives a
    format's hint."""
    if format:
        return by_name(format)
    target = Path(path)
    if _may_be_address(target):  # only then load the modules that claim addresses
        for name in _ADDRESSED:
            if _BY_NAME[name].claims(path):
                return _BY_NAME[name]
    candidates = [info for info in FORMATS if _extension(target) in info.extensions]
    if len(candidates) == 1:
        return candidates[0]
    head = _head(target)
    for info in candidates or list(FORMATS):
        try:
            if info.sniff(head) and info.accepts(target):
                return info
        except MotionkitError:
            continue
    if not candidates:
        raise FormatError(
            f"unknown file type {target.suffix or '(no extension)'!r}; name the format "
            f"({format_hint('FORMAT')})", target)
    others = [info for info in FORMATS if info not in candidates and _quiet_sniff(info, head)]
    names = ", ".join(info.name for info in candidates)
    hints = [f"its content reads as {info.name} ({info.description}): name it with "
             f"{format_hint(info.name)}" for info in others[:1]]
    hints += [text for info in candidates + [f for f in FORMATS if f not in candidates]
              if (text := _quiet_hint(info, head))]
    raise FormatError(f"content matches none of the formats for {target.suffix!r} ({names})"
                      + (f"; {hints[0]}" if hints else ""), target)


def _quiet_sniff(info: Format, head: bytes) -> bool:
    try:
        return info.sniff(head)
    except MotionkitError:
        return False


def _quiet_hint(info: Format, head: bytes) -> str | None:
    try:
        return info.hint(head)
    except MotionkitError:
        return None


def writers_for(path: PathLike, format: str | None = None, *,
                like: str | None = None) -> list[Format]:
    """The writers to try for ``path``, preferred first: the named format alone; else
    ``like`` (the format the object was read from) when it writes this extension, then
    the extension's first writer (the fallback, always last)."""
    if format:
        return [by_name(format)]
    target = Path(path)

    def fits(info: Format) -> bool:
        return (_extension(target) in info.extensions and info.writes_by_extension
                and _writable(info))

    first = next((info for info in FORMATS if fits(info)), None)
    if first is None:
        raise MotionkitError(
            f"cannot tell the output format from {target.name!r}; name it "
            f"({format_hint('FORMAT', 'write')})")
    same = _BY_NAME.get(like) if like else None
    return [same, first] if same is not None and same is not first and fits(same) else [first]


def _writable(info: Format) -> bool:
    try:
        return info.can_write()
    except MotionkitError:
        return False


def for_writing(path: PathLike, format: str | None = None, *, like: str | None = None,
                obj: Loaded | None = None, options: dict[str, object] | None = None,
                ) -> Format:
    """The format to write ``path`` with: explicit name, else ``like`` (the format ``obj``
    was read from) when it writes this extension and holds ``obj`` whole with
    ``options``, else the extension's first writer. The source's format wins only where
    nothing is lost: KITTI poses read with a times file go to ``.txt`` as traj, with
    their stamps, not as KITTI without them."""
    found = writers_for(path, format, like=like)
    for info in found[:-1]:
        if obj is not None and info.holds_whole(obj, **(options or {})):
            return info
    return found[-1]


def sharing(path: PathLike, chosen: Format) -> list[Format]:
    """The other formats that write ``path``'s extension (so a caller can say which was
    chosen and how to name another)."""
    suffix = _extension(Path(path))
    return [info for info in FORMATS if info is not chosen and suffix in info.extensions
            and info.writes_by_extension]
