"""MkDocs hook: what the pages state about formats and commands, taken from the code at
build time, so the site never lists an option the code does not take.

A page line ``<!-- format: NAME -->`` becomes a table of that format's extensions, what it
reads and writes, and its reader and writer options with their defaults (the parameters of
the module's ``read`` and ``write``); ``<!-- formats -->`` becomes
one row per registered format. ``<!-- cli -->`` becomes every command's ``--help`` text, as
click prints it, under a heading per command (the group is walked through
``list_commands``/``get_command``, so lazily loaded commands are found under the names the
group gives them).

The docstrings cross-reference in Sphinx's roles (``:class:`~motionkit.model.Motion```), which
Markdown leaves as ``:class:`` before the code: the pages show the name alone, as Sphinx does.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator

import click

from motionkit.cli import cli
from motionkit.formats import registry

_MARK = re.compile(r"^<!-- (format: ([\w-]+)|formats|cli) -->$", re.MULTILINE)
_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc):<code>(~?)([^<]*)</code>")
#: The width of the help text on the page (click wraps to it).
_WIDTH = 100


def on_page_markdown(markdown: str, **_: object) -> str:
    """Expand the marks of one page."""
    return _MARK.sub(_expand, markdown)


def on_page_content(html: str, **_: object) -> str:
    """Sphinx roles in the rendered docstrings: the name alone (``~`` keeps its last part)."""
    def name(match: re.Match[str]) -> str:
        target = match.group(2)
        return f"<code>{target.rsplit('.', 1)[-1] if match.group(1) else target}</code>"

    return _ROLE.sub(name, html)


def _expand(match: re.Match[str]) -> str:
    if match.group(1) == "cli":
        return "\n\n".join(_help(cli, "motionkit", None))
    return _all() if match.group(2) is None else _one(match.group(2))


def _help(command: click.Command, name: str, parent: click.Context | None) -> Iterator[str]:
    """A heading and the ``--help`` text of ``command``, then of each of its subcommands."""
    ctx = click.Context(command, info_name=name, parent=parent, terminal_width=_WIDTH,
                        max_content_width=_WIDTH, **command.context_settings)
    yield f"## {ctx.command_path}\n\n```text\n{command.get_help(ctx)}\n```"
    if isinstance(command, click.Group):
        for child in command.list_commands(ctx):
            sub = command.get_command(ctx, child)
            if sub is not None and not sub.hidden:
                yield from _help(sub, child, ctx)


def _options(function: Callable[..., object] | None, skip: int) -> str:
    """``name=default`` for every keyword a reader or writer takes, or a dash."""
    if function is None:
        return "–"
    parameters = list(inspect.signature(function).parameters.values())[skip:]
    shown = [f"`{p.name}`" if p.default is inspect.Parameter.empty else f"`{p.name}={p.default!r}`"
             for p in parameters if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    return ", ".join(shown) or "none"


def _writer_options(info: registry.Format) -> str:
    """The writer's own options with defaults, then those the registry adds (``lossy``, …)."""
    write = info.load().write
    own = _options(write, 2)
    added = sorted(info.write_options() - set(inspect.signature(write).parameters))
    return ", ".join([*([own] if own != "none" else []), *(f"`{name}`" for name in added)])


def _one(name: str) -> str:
    info = registry.by_name(name)
    module = info.load()
    writes = "–"
    if info.can_write():
        writes = ", ".join(f"`{kind.__name__}`" for kind in info.writes())
        if not info.writes_by_extension:
            writes += f" (only when named: `--to {info.name}`)"
    rows = [
        ("name (`--from`, `--to`, `format=`)", f"`{info.name}`"),
        ("what", info.description),
        ("extensions", ", ".join(f"`{ext}`" for ext in info.extensions)),
        ("writes", writes),
        ("reader options", _options(getattr(module, "read", None), 1)),
        ("writer options", _writer_options(info) if info.can_write() else "–"),
    ]
    return "\n".join(["| | |", "| --- | --- |", *(f"| {key} | {value} |" for key, value in rows)])


def _all() -> str:
    lines = ["| name | what | extensions | writes |", "| --- | --- | --- | --- |"]
    for info in registry.formats():
        page = f"[`{info.name}`]({info.name}.md)"
        writes = ("yes" if info.writes_by_extension else "when named") if info.can_write() else "–"
        lines.append(f"| {page} | {info.description} | {', '.join(info.extensions)} | {writes} |")
    return "\n".join(lines)
