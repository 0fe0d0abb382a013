"""Pieces shared by the commands: option parsing, progress display, object summaries."""

from __future__ import annotations

import contextlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import click

from ..errors import MotionkitError

T = TypeVar("T")

# C0 and C1 controls, DEL, and the Unicode line/paragraph separators and bidirectional
# overrides: text from a file must not move the cursor, set a title, or start a line.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clean(text: object) -> str:
    """``text`` as one safe line: control characters become visible escapes (``\\n``,
    ``\\x1b``), so nothing a file holds can forge a line or drive the terminal."""
    return _CONTROL.sub(_escape, str(text))


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char)
    if named:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def refuse_source_as_output(out: str, *inputs: str | None, replaceable: str | None = None,
                            in_place: bool = False) -> None:
    """A ConversionError when ``out`` is one of the inputs (a link to one, another spelling
    of its path, or the bag of a ``run.bag:/topic`` address included): a command never
    replaces what it reads. ``replaceable`` is the input a command's ``--in-place`` may
    replace, and ``in_place`` says the user asked for it; never when that input is a part
    of ``out`` (a topic of a bag), which the written file would not reproduce."""
    import os

    from ..errors import ConversionError

    for source in inputs:
        base = _file_of(source) if source else None
        if base and os.path.exists(out) and os.path.samefile(base, out):
            whole = base == source  # not a part of it, such as a topic of a bag
            if in_place and source == replaceable and whole:
                continue
            how = ("; pass --in-place to replace it" if whole else
                   f"; {clean(source)} is one part of {clean(base)}, which the written file "
                   "would replace whole (its other parts lost)") if source == replaceable else ""
            raise ConversionError(f"{clean(out)} is an input of this command ({clean(source)}); "
                                  f"write elsewhere{how}")


def written_line(target: str) -> Callable[[], str]:
    """Called before writing ``target``: the line to print after it, ``wrote X``,
    ``replaced X``, or, where ``target`` was a link (replaced by the file, never written
    through), ``replaced the link X (the link's target Y unchanged)``."""
    import os

    existed = os.path.lexists(target)
    link = os.readlink(target) if os.path.islink(target) else None

    def line() -> str:
        kept = f" (the link's target {clean(link)} unchanged)" if link is not None else ""
        done = "replaced the link" if link is not None else "replaced" if existed else "wrote"
        return f"{done} {clean(target)}{kept}"

    return line


def _file_of(source: str) -> str | None:
    """The file an input names: itself, or the part before ``:`` of an address such as
    ``run.bag:/topic`` (None when neither exists)."""
    import os

    if os.path.exists(source):
        return source
    base = source.split(":", 1)[0]
    return base if ":" in source and base and os.path.exists(base) else None


def read_option(func: Callable[..., None]) -> Callable[..., None]:
    """``-R KEY=VALUE``: an option for the reader (hints on the command line say ``-R``)."""
    return click.option("-R", "--read-option", "read_options", multiple=True,
                        metavar="KEY=VALUE",
                        help="A reader option, e.g. -R dedupe=true -R sort=true "
                             "(see motionkit formats).")(func)


def parse_options(pairs: Iterable[str]) -> dict[str, Any]:
    """``-O key=value`` pairs; values are JSON when they parse as JSON (numbers, true), else text."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise MotionkitError(f"option {pair!r} is not KEY=VALUE")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


@contextlib.contextmanager
def busy(label: str, after: float = 1.0) -> Iterator[None]:
    """Show an elapsed-time line on a terminal's stderr when work takes more than ``after`` s."""
    if not sys.stderr.isatty():
        yield
        return
    done = threading.Event()
    start = time.monotonic()

    def tick() -> None:
        if done.wait(after):
            return
        while not done.wait(0.2):
            sys.stderr.write(f"\r{label} … {time.monotonic() - start:.1f} s")
            sys.stderr.flush()
        sys.stderr.write("\r\033[K")

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def progress(items: list[T], label: str) -> Iterable[T]:
    """A progress bar on stderr over many items, shown only when the work passes a second."""
    if len(items) < 2:
        return items
    from tqdm import tqdm

    bar: Iterable[T] = tqdm(items, desc=label, unit="file", delay=1.0, file=sys.stderr, leave=False)
    return bar


def echo_json(value: object) -> None:
    click.echo(json.dumps(value, indent=2, default=str))
