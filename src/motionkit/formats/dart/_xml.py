"""A small, safe XML tree with line numbers, built on expat.

The standard ElementTree loses line numbers, which every ``.skel`` error should carry.
Entity declarations and external entities are refused outright (nothing is expanded or
fetched), like defusedxml does; only XML's five predefined entities are understood.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

from ...errors import FormatError


@dataclass(eq=False)
class Node:
    """One element: tag, attributes, text (untrimmed), children, 1-based line and column."""

    tag: str
    attrib: dict[str, str]
    line: int
    column: int
    children: list[Node] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def find(self, tag: str) -> Node | None:
        """The first direct child called ``tag`` (DART reads the first occurrence)."""
        for child in self.children:
            if child.tag == tag:
                return child
        return None

    def findall(self, tag: str) -> Iterator[Node]:
        """Every direct child called ``tag``, in document order."""
        return (child for child in self.children if child.tag == tag)


def parse(data: bytes, path: str | os.PathLike[str]) -> Node:
    """Parse ``data`` into a tree of :class:`Node`; any XML problem is a FormatError."""
    parser = expat.ParserCreate()
    stack: list[Node] = []
    roots: list[Node] = []

    def start(tag: str, attrib: dict[str, str]) -> None:
        node = Node(tag, attrib, parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)
        if stack:
            stack[-1].children.append(node)
        else:
            roots.append(node)
        stack.append(node)

    def end(tag: str) -> None:
        stack.pop()

    def chars(text: str) -> None:
        if stack:
            stack[-1].parts.append(text)

    def refuse_entity(*args: Any) -> None:
        raise FormatError("XML entity declarations are not allowed (nothing is expanded)", path,
                          parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)

    def refuse_external(*args: Any) -> int:
        raise FormatError("external XML entities are not allowed (nothing is fetched)", path,
                          parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.EntityDeclHandler = refuse_entity
    parser.UnparsedEntityDeclHandler = refuse_entity
    parser.ExternalEntityRefHandler = refuse_external
    parser.SkippedEntityHandler = refuse_external
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise FormatError(f"malformed XML: {expat.ErrorString(exc.code)}", path, exc.lineno,
                          exc.offset + 1) from None
    except LookupError as exc:  # an encoding declaration Python does not know
        raise FormatError(f"unknown XML encoding ({str(exc)[:80]})", path, 1) from None
    if not roots:
        raise FormatError("empty XML document", path)
    return roots[0]
