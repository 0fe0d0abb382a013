"""The front door: read, write and convert any registered format."""

from __future__ import annotations

import os
from typing import Any

from .errors import ConversionError, MotionkitError
from .formats import registry

PathLike = str | os.PathLike[str]


def _check_options(module: Any, attribute: str, options: dict[str, Any], what: str) -> None:
    allowed: frozenset[str] = getattr(module, attribute, frozenset())
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        known = ", ".join(sorted(allowed)) or "none"
        raise MotionkitError(f"{what} does not take option(s) {', '.join(unknown)} (known: {known})")


def read(path: PathLike, format: str | None = None, **options: Any) -> Any:
    """Read a motion, trajectory, skeleton or world from ``path``.

    The format comes from ``format``, else the extension, else the content. Options are
    format-specific (see each format's ``READ_OPTIONS``).
    """
    info = registry.for_reading(path, format)
    module = info.load()
    if not hasattr(module, "read"):
        raise MotionkitError(f"format {info.name!r} cannot be read")
    _check_options(module, "READ_OPTIONS", options, f"reading {info.name}")
    return module.read(path, **options)


def write(path: PathLike, obj: Any, format: str | None = None, **options: Any) -> None:
    """Write ``obj`` to ``path`` atomically; refuses (ConversionError) what would be lost."""
    info = registry.for_writing(path, format)
    module = info.load()
    if not hasattr(module, "write"):
        raise MotionkitError(f"format {info.name!r} cannot be written")
    _check_options(module, "WRITE_OPTIONS", options, f"writing {info.name}")
    module.write(path, obj, **options)


def convert(
    src: PathLike,
    dst: PathLike,
    *,
    from_format: str | None = None,
    to_format: str | None = None,
    rate: float | None = None,
    method: str = "auto",
    lossy: bool = False,
    **options: Any,
) -> Any:
    """Read ``src``, optionally resample to ``rate`` Hz, write ``dst``; return what was written.

    Each extra option goes to the reader, the writer, or both, whichever accepts it.
    """
    reader = registry.for_reading(src, from_format).load()
    writer = registry.for_writing(dst, to_format).load()
    read_allowed = set(getattr(reader, "READ_OPTIONS", ()))
    write_allowed = set(getattr(writer, "WRITE_OPTIONS", ()))
    unknown = sorted(set(options) - read_allowed - write_allowed)
    if unknown:
        raise MotionkitError(f"convert does not take option(s) {', '.join(unknown)}")
    obj = reader.read(src, **{k: v for k, v in options.items() if k in read_allowed})
    if rate is not None:
        from .model import Motion
        from .ops import resample

        if not isinstance(obj, Motion):
            raise ConversionError("--rate applies to motions only")
        obj = resample(obj, rate, method=method)
    write_options = {k: v for k, v in options.items() if k in write_allowed}
    if lossy:
        if "lossy" not in write_allowed:
            raise MotionkitError("the target format takes no 'lossy' option")
        write_options["lossy"] = True
    writer.write(dst, obj, **write_options)
    return obj
