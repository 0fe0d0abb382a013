"""YAML as Choreonoid's ``YAMLReader`` builds it for ``.body`` files, with bounded work.

libyaml's events (PyYAML's C parser, which keeps its own explicit stack, so no depth can
crash it) are composed here into a small tree in which every scalar stays its raw text:

* duplicate keys: the later value wins, with a warning naming both lines;
* ``<<`` merge keys: merged entries never overwrite a key of the mapping, earlier sources
  win over later ones, and the ``<<`` entry itself stays in the mapping (Choreonoid does
  the same, and it matters where keys are node types);
* anchors: defining one twice is an error, an alias to an undefined anchor is an error,
  and an alias to a node that is still open (a self-reference) is an error, so the tree
  has no cycles; an alias inserts the same node object, as in Choreonoid;
* a YAML resource also sees the anchors of the main file (``YAMLReader::importAnchors``):
  its own anchors come first, and one of the same name is not a duplicate;
* nesting deeper than :data:`MAX_DEPTH` is refused while composing, and every walk of
  the tree spends a :class:`Budget` tied to the file size, so aliases and merge keys
  cannot make a small file expand into unbounded work.

Numbers follow the two conversions Choreonoid uses: :func:`to_double` (``strtod``'s
longest prefix, for extracted values) and :func:`strict_double` (the whole text).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

import yaml

from ...errors import FormatError, warn
from .yamlnodes import FALSE_WORDS, TRUE_WORDS, BaseLoader, yaml_error

#: Deepest nesting of collections accepted (real models stay below 20).
MAX_DEPTH = 200
#: Node visits allowed per byte of the file (plus a fixed allowance), across all walks.
BUDGET_PER_BYTE = 64
BUDGET_BASE = 20_000

_FLOAT = re.compile(
    r"\s*[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    r"|(?i:infinity|inf|nan(?:\([0-9A-Za-z_]*\))?)"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_INT = re.compile(r"\s*[+-]?[0-9]+")


@dataclass(eq=False)
class Node:
    """A composed YAML node with its 1-based line and column."""

    line: int
    column: int


@dataclass(eq=False)
class Scalar(Node):
    """A scalar: always its raw text (Choreonoid ignores tags and quoting)."""

    text: str = ""


@dataclass(eq=False)
class Listing(Node):
    """A YAML sequence."""

    items: list[Node] = field(default_factory=list)


@dataclass(eq=False)
class Mapping(Node):
    """A YAML mapping; ``entries`` keeps insertion order, consumers pop what they read."""

    entries: dict[str, Node] = field(default_factory=dict)


class Budget:
    """Work left for one file and everything it includes; spent per node visited."""

    def __init__(self, path: str | os.PathLike[str], size: int) -> None:
        self.path = path
        self.limit = BUDGET_BASE + BUDGET_PER_BYTE * size
        self.left = self.limit
        self.said: set[str] = set()

    def first_time(self, key: str) -> bool:
        """True the first time ``key`` is seen in this load (one warning per cause)."""
        if key in self.said:
            return False
        self.said.add(key)
        return True

    def grow(self, size: int) -> None:
        """Allow the work of one more included file of ``size`` bytes."""
        self.limit += BUDGET_PER_BYTE * size
        self.left += BUDGET_PER_BYTE * size

    def spend(self, node: Node, count: int = 1) -> None:
        """Count ``count`` visits; a FormatError once the budget is used up."""
        self.left -= count
        if self.left < 0:
            raise FormatError(f"the model expands beyond its work budget of {self.limit} node "
                              "visits (YAML aliases or merge keys repeated too often?)",
                              self.path, node.line, node.column)


def error(path: str | os.PathLike[str], node: Node | None, message: str) -> FormatError:
    """A FormatError located at ``node``."""
    if node is None:
        return FormatError(message, path)
    return FormatError(message, path, node.line, node.column)


def compose(path: str | os.PathLike[str], text: bytes,
            imported: dict[str, Node] | None = None) -> tuple[Node | None, dict[str, Node]]:
    """The first document of ``text`` (the whole stream must parse; None if empty) and its
    anchors by name (a YAML resource's ``node:`` names one); aliases not defined in
    ``text`` may name one of ``imported`` (the main file's anchors, for a YAML resource)."""
    composer = _Composer(path, imported or {})
    try:
        for event in yaml.parse(text, Loader=BaseLoader):
            composer.feed(event)
    except yaml.YAMLError as exc:
        raise yaml_error(exc, path) from None
    return composer.first, composer.anchors


class _Composer:
    """Builds nodes from parser events with an explicit stack (no recursion)."""

    def __init__(self, path: str | os.PathLike[str], imported: dict[str, Node]) -> None:
        self.path = path
        self.imported = imported  # complete trees of another file: never open here
        self.anchors: dict[str, Node] = {}
        self.open_anchors: set[str] = set()
        self.stack: list[tuple[Node, str | None, Scalar | None]] = []
        self.documents = 0
        self.first: Node | None = None
        self.written: dict[int, dict[str, int]] = {}  # mapping id → explicit key → its line

    def feed(self, event: yaml.Event) -> None:
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            return
        if self.documents > 1:  # later documents are only checked for syntax
            return
        mark = event.start_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        if isinstance(event, yaml.AliasEvent):
            name = str(event.anchor)
            if name in self.open_anchors:
                raise FormatError(f'alias "*{name}" refers to a node that contains it '
                                  "(a recursive alias)", self.path, line, column)
            target = self.anchors.get(name, self.imported.get(name))
            if target is None:
                raise FormatError(f'alias "*{name}" names no anchor defined before it'
                                  + (" (nor one of the main file)" if self.imported else ""),
                                  self.path, line, column)
            self._add(target)
        elif isinstance(event, yaml.ScalarEvent):
            node = Scalar(line, column, str(event.value))
            self._anchor(event, node)
            self._add(node)
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(self.stack) >= MAX_DEPTH:
                raise FormatError(f"YAML nesting deeper than {MAX_DEPTH} levels", self.path,
                                  line, column)
            collection: Node = (Listing(line, column) if isinstance(
                event, yaml.SequenceStartEvent) else Mapping(line, column))
            anchor = str(event.anchor) if event.anchor is not None else None
            if anchor is not None:
                self._check_anchor(anchor, line, column)
                self.open_anchors.add(anchor)
            self.stack.append((collection, anchor, None))
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            collection, anchor, _ = self.stack.pop()
            self.written.pop(id(collection), None)
            if anchor is not None:
                self.open_anchors.discard(anchor)
                self.anchors[anchor] = collection
            self._add(collection)

    def _check_anchor(self, name: str, line: int, column: int) -> None:
        if name in self.anchors or name in self.open_anchors:
            raise FormatError(f'anchor "&{name}" is defined twice', self.path, line, column)

    def _anchor(self, event: yaml.ScalarEvent, node: Node) -> None:
        if event.anchor is not None:
            self._check_anchor(str(event.anchor), node.line, node.column)
            self.anchors[str(event.anchor)] = node

    def _add(self, node: Node) -> None:
        if not self.stack:
            if self.first is None and self.documents == 1:
                self.first = node
            return
        parent, anchor, key = self.stack[-1]
        if isinstance(parent, Listing):
            parent.items.append(node)
            return
        if not isinstance(parent, Mapping):
            return
        if key is None:
            if not isinstance(node, Scalar) or node.text == "":
                raise FormatError("a mapping key must be a non-empty scalar", self.path,
                                  node.line, node.column)
            self.stack[-1] = (parent, anchor, node)
            return
        self.stack[-1] = (parent, anchor, None)
        if key.text == "<<":
            self._merge(parent, node)
        else:
            written = self.written.setdefault(id(parent), {})
            if key.text in written:
                warn(f"{os.fspath(self.path)}:{key.line}: duplicate key \"{key.text}\" (first "
                     f"at line {written[key.text]}); the later value wins, as in Choreonoid")
            written[key.text] = key.line
        parent.entries[key.text] = node

    def _merge(self, target: Mapping, value: Node) -> None:
        sources = value.items if isinstance(value, Listing) else [value]
        for source in sources:
            if not isinstance(source, Mapping):
                raise FormatError('the value of a merge key "<<" must be a mapping or a '
                                  "listing of mappings", self.path, source.line, source.column)
            for name, entry in source.entries.items():
                target.entries.setdefault(name, entry)


def to_double(path: str | os.PathLike[str], node: Node, budget: Budget) -> float:
    """A number as Choreonoid extracts it: ``strtod``'s longest prefix (``2.5 kg`` = 2.5)."""
    budget.spend(node)
    if not isinstance(node, Scalar):
        raise error(path, node, "a number is expected here, not a listing or mapping")
    match = _FLOAT.match(node.text)
    if match is None:
        raise error(path, node, f'the value "{node.text}" must be a floating point number')
    return _float(match.group())


def strict_double(node: Node) -> float | None:
    """A number only if the whole text is one (``read(double)``), else None."""
    if not isinstance(node, Scalar):
        return None
    match = _FLOAT.match(node.text)
    if match is None or node.text[match.end():].strip():
        return None
    return _float(match.group())


def _float(text: str) -> float:
    text = text.strip()
    body = text.lstrip("+-")
    sign = -1.0 if text.startswith("-") else 1.0
    if body[:2].lower() == "0x":
        try:
            return sign * float.fromhex(body if "p" in body.lower() else body + "p0")
        except OverflowError:  # strtod gives ±HUGE_VAL
            return sign * math.inf
    if body[:3].lower() == "nan":
        return math.nan
    return sign * float(body)


def to_int(path: str | os.PathLike[str], node: Node) -> int:
    """An integer as ``strtol`` reads it (``3.9`` = 3)."""
    if not isinstance(node, Scalar):
        raise error(path, node, "an integer is expected here, not a listing or mapping")
    match = _INT.match(node.text)
    if match is None:
        raise error(path, node, f'the value "{node.text}" must be an integer')
    value = _bounded(match.group())
    if value is None:
        raise error(path, node, f'the integer "{node.text.strip()[:40]}" is out of range')
    return value


def strict_int(node: Node) -> int | None:
    """An integer only if the whole text is one, else None."""
    if not isinstance(node, Scalar):
        return None
    match = _INT.match(node.text)
    if match is None or node.text[match.end():].strip():
        return None
    return _bounded(match.group())


def _bounded(digits: str) -> int | None:
    """The integer of ``digits`` if it fits Choreonoid's 32-bit int, else None."""
    text = digits.strip().lstrip("+-").lstrip("0") or "0"
    if len(text) > 10:
        return None
    value = int(digits)
    return value if -2**31 <= value < 2**31 else None


def to_bool(node: Node) -> bool | None:
    """True/False for Choreonoid's boolean words, None for anything else."""
    if isinstance(node, Scalar):
        if node.text in TRUE_WORDS:
            return True
        if node.text in FALSE_WORDS:
            return False
    return None


def text(path: str | os.PathLike[str], node: Node) -> str:
    """A scalar's text; a listing or mapping is an error."""
    if not isinstance(node, Scalar):
        raise error(path, node, "a single value is expected here, not a listing or mapping")
    return node.text


def plain(node: Node, budget: Budget) -> object:
    """The node as plain Python data (str / list / dict), each visit spending ``budget``."""
    budget.spend(node)
    if isinstance(node, Scalar):
        return node.text
    if isinstance(node, Listing):
        return [plain(item, budget) for item in node.items]
    if not isinstance(node, Mapping):
        return None
    return {key: plain(value, budget) for key, value in node.entries.items() if key != "<<"}
