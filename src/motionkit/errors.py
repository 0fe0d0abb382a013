"""The one exception family motionkit raises, and its warning class."""

from __future__ import annotations

import difflib
import os
import sys
import warnings
from collections.abc import Iterable


class MotionkitError(Exception):
    """Base class of every error motionkit raises on purpose."""


class FormatError(MotionkitError):
    """A file is broken or is not what its format promises.

    Carries the path and, where the format has lines, the 1-based line and column.
    """

    def __init__(
        self,
        message: str,
        path: str | os.PathLike[str] | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.message = message
        self.path = os.fspath(path) if path is not None else None
        self.line = line
        self.column = column
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"


class ConversionError(MotionkitError):
    """A conversion or write was refused, usually because data would be lost."""


class MotionkitWarning(UserWarning):
    """Something was accepted but deserves attention (kept data, tolerated variants)."""


def warn(message: str) -> None:
    """Issue a MotionkitWarning attributed to the first caller outside motionkit (the
    user's line), however deep in the library it arises."""
    frame = sys._getframe(1)
    level = 2  # warnings.warn's stacklevel of warn's caller
    while frame.f_back is not None and _inside(frame.f_globals.get("__name__", "")):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, MotionkitWarning, stacklevel=level)


def _inside(module: str) -> bool:
    return module == "motionkit" or module.startswith("motionkit.")


# -- how hints name options ---------------------------------------------------------------
#: Set (to "cli") by the ``motionkit`` command while it runs, and inherited by the worker
#: and sandbox processes it starts: hints then give command-line spellings.
HINTS_ENV = "MOTIONKIT_HINTS"


def for_cli() -> bool:
    """True while the ``motionkit`` command runs (hints are read on a command line)."""
    return os.environ.get(HINTS_ENV) == "cli"


def option_hint(name: str, value: object, side: str = "read") -> str:
    """How to pass option ``name`` for whoever reads the message: ``dedupe=True`` in
    Python, ``-R dedupe=true`` (a reader's) or ``-O dedupe=true`` (a writer's) on the
    command line, ``--lossy`` for lossy. ``side`` "command" names one of convert's own
    options (``--model MODEL``; ``model=...`` in Python) and "reader-only" a reader's
    option that convert gives to the reader alone (``-R times=FILE``;
    ``read_options={'times': 'FILE'}``). The one place that decides a hint's spelling."""
    if not for_cli():
        if side == "command":
            return f"{name}=..."
        if side == "reader-only":
            return f"read_options={{{name!r}: {value!r}}}"
        return f"{name}={value!r}"
    if side == "command":
        return f"--{name.replace('_', '-')} {value}"
    if name == "lossy" and value is True:
        return "--lossy"
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return f"{'-O' if side == 'write' else '-R'} {name}={text}"


def format_hint(name: str, side: str = "read") -> str:
    """How to name format ``name``: ``format='tum'`` in Python, ``--from tum`` (reading) or
    ``--to tum`` (writing) on the command line."""
    if not for_cli():
        return f"format={name!r}"
    return f"{'--to' if side == 'write' else '--from'} {name}"


def choices(name: str, known: Iterable[str], what: str = "known", shown: int = 12) -> str:
    """The text that follows a name not found: the close matches first (``did you mean
    'RLEG_ANKLE_R'?``, from difflib, case ignored), then up to ``shown`` of the ``known``
    names, so a typo is answered even where the list is long. The one helper every name
    lookup uses (bodies, joints, links, tracks, topics, formats, options)."""
    names = list(dict.fromkeys(str(n) for n in known))
    if not names:
        return f"{what}: none"
    listing = ", ".join(names[:shown]) + (f", … ({len(names)} in all)" if len(names) > shown
                                          else "")
    return f"{did_you_mean(name, names)}{what}: {listing}"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``did you mean 'tum'? `` for the known names closest to ``name`` (difflib, case
    ignored: names that differ only in case, ``Hip`` and ``hip``, are both given), or ""
    when none is close."""
    names = list(dict.fromkeys(str(n) for n in known))
    folded = list(dict.fromkeys(n.lower() for n in names))
    matches = difflib.get_close_matches(name.lower(), folded, n=3, cutoff=0.6)
    close = [n for match in matches for n in names if n.lower() == match]
    return f"did you mean {' or '.join(repr(n) for n in close)}? " if close else ""
