"""PARC motion lists: ``motions: [{file: path, weight: w}, ...]`` in YAML.

Paths may contain ``$VAR`` / ``${VAR}`` (PARC's ``$DATA_DIR``), taken from the
environment (or from ``variables=``). A relative path is looked for as PARC and MimicKit
open it, from the working directory (their repository root), then from the list's folder
and each folder above it; the one place that has it is used (two different files are an
error), and where none has it the entry keeps the list-folder path and the places tried,
for the error when the motion is loaded.
Weights must be >= 0 and are normalised to sum 1. Other top-level keys (PARC's old
``terrain:``) and other entry keys (``name`` …) are kept in ``extras``.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ..._io import atomic_write, read_bytes
from ..._limits import Budget, check_yaml
from ...errors import FormatError
from ...model.motionlist import MotionEntry, MotionList, is_there

#: Largest motion list read (YAML is parsed in memory).
MAX_BYTES = 32 * 1024 * 1024
_VARIABLE = re.compile(r"\$(\w+)|\$\{(\w+)\}")


def sniff(head: bytes) -> bool:
    """A YAML document with a top-level ``motions:`` key."""
    return re.search(rb"(?m)^motions\s*:", head) is not None


def _expand(text: str, variables: Mapping[str, str], path: Any, line: int | None) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in variables:
            raise FormatError(f"variable ${name[:40]} in {text[:80]!r} is not set", path, line)
        return variables[name]

    return _VARIABLE.sub(replace, text)


#: Most YAML aliases accepted in one list.
MAX_ALIASES = 100
#: Work (YAML nodes, pairs copied by merge keys) any list may cause, however small.
LIST_WORK_FLOOR = 100_000


class _Loader(yaml.SafeLoader):
    """Safe loader that remembers the line of every mapping and limits aliases and the
    pairs merge keys (``<<``) copy, so a few lines of merges cannot double without end."""

    aliases = 0
    budget: Budget | None = None

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise yaml.YAMLError(f"more than {MAX_ALIASES} aliases")
        return super().compose_node(parent, index)

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        super().flatten_mapping(node)
        if self.budget is not None:
            self.budget.charge(len(node.value), node.start_mark.line + 1)


def _mapping_with_line(loader: _Loader, node: yaml.MappingNode) -> dict[Any, Any]:
    value = loader.construct_mapping(node, deep=True)
    value["__line__"] = node.start_mark.line + 1
    return value


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_with_line)
# Dates stay text: a date-like value is no reason to fail, and nothing here is a date.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def read(path: str | os.PathLike[str], variables: Mapping[str, str] | None = None) -> MotionList:
    """Read a motion list; variables default to the environment."""
    data = read_bytes(path)
    if len(data) > MAX_BYTES:
        raise FormatError(f"motion list larger than {MAX_BYTES} bytes", path)
    try:
        return _read(data, path, variables)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise FormatError(f"YAML error: {exc.problem}", path,
                          mark.line + 1 if mark else None,
                          mark.column + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise FormatError(f"YAML error: {str(exc)[:200]}", path) from None
    except RecursionError:
        raise FormatError("YAML nested too deeply", path) from None
    except (ValueError, TypeError, OverflowError, MemoryError) as exc:
        raise FormatError(f"bad value ({type(exc).__name__}: {str(exc)[:200]})", path) from None


def _read(data: bytes, path: Any, variables: Mapping[str, str] | None) -> MotionList:
    budget = Budget("motion list work", path, len(data), floor=LIST_WORK_FLOOR)
    check_yaml(data, path, budget=budget)
    loader = _Loader(data)  # a SafeLoader
    loader.budget = budget
    try:
        document = loader.get_single_data()
    finally:
        loader.dispose()
    if not isinstance(document, dict) or not isinstance(document.get("motions"), list):
        raise FormatError("a motion list needs a top-level 'motions:' list", path)
    env = dict(os.environ) if variables is None else dict(variables)
    base = Path(path).resolve().parent
    entries: list[MotionEntry] = []
    for item in document["motions"]:
        line = item.get("__line__") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(item.get("file"), str):
            raise FormatError("each motion needs a 'file:' string", path, line)
        weight = _weight(item.get("weight", 1.0), path, line)
        target = _home(_expand(item["file"], env, path, line), path, line)
        extras = {k: v for k, v in item.items() if k not in ("file", "weight", "__line__")}
        entries.append(_locate(target, base, item["file"], weight, extras, path, line))
    total = sum(entry.weight for entry in entries)
    if not entries or not (0 < total < math.inf):
        raise FormatError("a motion list needs at least one motion with weight > 0, and "
                          "weights with a finite sum", path)
    for entry in entries:
        entry.weight /= total
    seen: dict[int, Any] = {}
    extras = {k: _strip_lines(v, seen) for k, v in document.items()
              if k not in ("motions", "__line__")}
    for entry in entries:
        entry.extras = {k: _strip_lines(v, seen) for k, v in entry.extras.items()}
    return MotionList(entries, extras)


def _locate(target: Path, base: Path, source: str, weight: float, extras: dict[str, Any],
            path: Any, line: int | None) -> MotionEntry:
    """The entry for ``target``: absolute as is; relative, looked for from the working
    directory, then the list's folder and the folders above it."""
    if target.is_absolute():
        return MotionEntry(target, weight, source, extras)
    places = [(Path.cwd(), "the working directory"), (base, "the list's folder")]
    places += [(folder, f"{up} folder(s) above the list") for up, folder in enumerate(base.parents, 1)]
    found: dict[Path, tuple[Path, str]] = {}
    for folder, label in places:
        candidate = folder / target
        if is_there(candidate):
            found.setdefault(candidate.resolve(), (candidate, label))
    if len(found) > 1:
        where = "; ".join(f"{label} ({candidate})" for candidate, label in found.values())
        raise FormatError(f"motion file {source!r} is ambiguous: found in {where}", path, line)
    tried = tuple(dict.fromkeys(folder for folder, _ in places))
    if found:
        candidate, label = next(iter(found.values()))
        return MotionEntry(candidate, weight, source, extras, label, tried)
    return MotionEntry(base / target, weight, source, extras, "", tried)


def _weight(value: Any, path: Any, line: int | None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormatError(f"weight must be a number >= 0, got a {type(value).__name__}",
                          path, line)
    try:
        weight = float(value)
    except OverflowError:
        weight = math.inf
    if not (math.isfinite(weight) and weight >= 0):
        raise FormatError(f"weight must be a finite number >= 0, got {weight:g}", path, line)
    return weight


def _home(text: str, path: Any, line: int | None) -> Path:
    """``text`` as a path; only ``~`` and ``~/…`` mean the home folder (not ``~user``)."""
    if "\0" in text:
        raise FormatError("a motion path contains a NUL character", path, line)
    if text != "~" and not text.startswith("~/"):
        return Path(text)
    try:
        home = Path.home()
    except (RuntimeError, KeyError, OSError):
        raise FormatError("'~' in a motion path, but the home folder is unknown", path,
                          line) from None
    return home / text[2:]


def _strip_lines(value: Any, seen: dict[int, Any]) -> Any:
    """Drop the ``__line__`` bookkeeping, keeping shared (aliased) values shared."""
    if id(value) in seen:
        return seen[id(value)]
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        seen[id(value)] = out
        out.update((k, _strip_lines(v, seen)) for k, v in value.items() if k != "__line__")
        return out
    if isinstance(value, list):
        items: list[Any] = []
        seen[id(value)] = items
        items.extend(_strip_lines(v, seen) for v in value)
        return items
    return value


#: What ``write`` takes.
WRITES = (MotionList,)


def write(path: str | os.PathLike[str], obj: MotionList) -> None:
    """Write a motion list (files as given in ``source``, weights as stored)."""
    document: dict[str, Any] = {
        "motions": [{"file": entry.source or str(entry.path), "weight": float(entry.weight),
                     **entry.extras} for entry in obj.entries],
        **obj.extras,
    }
    with atomic_write(path, "w") as handle:
        yaml.safe_dump(document, handle, sort_keys=False)
