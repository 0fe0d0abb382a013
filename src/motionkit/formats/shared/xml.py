"""A small, safe XML tree with line numbers, built on expat.

The standard ElementTree loses line numbers, which every ``.skel`` error should carry.
Entity declarations and external entities are refused outright (nothing is expanded or
fetched), like defusedxml does; only XML's five predefined entities are understood.

DART reads ``.skel`` with tinyxml2, which accepts comments that XML forbids (``<!-- a
--->``, ``--`` inside a comment). :func:`blank_comments` turns comment bodies into spaces
before expat sees the bytes, delimiting comments exactly as tinyxml2 does; it never
creates markup, keeps every line break, and leaves entities to expat's refusal.
:func:`tolerate` goes on to what MuJoCo's tinyxml2 also reads (a misplaced declaration, the
declared encoding, ``&`` and ``<`` as text), for the MJCF parser.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

from ...errors import FormatError, warn


@dataclass(eq=False)
class Node:
    """One element: tag, attributes, children, 1-based line and column, and its content
    as ``(kind, text)`` items (kind: text, cdata, comment or element) for :attr:`text`."""

    tag: str
    attrib: dict[str, str]
    line: int
    column: int
    children: list[Node] = field(default_factory=list)
    content: list[list[str]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The element's text as DART takes it (tinyxml2 ``GetText``): whitespace-only runs
        are no text, leading comments are skipped, and the value is the first remaining
        item if it is text or CDATA (untrimmed), else empty — so ``2<!--c-->3`` is ``2``."""
        for item in self.content:
            if len(item) > 2:  # chunks joined once, on first read
                item[1:] = ["".join(item[1:])]
            kind, text = item
            if kind == "comment" or (kind == "text" and not text.strip(" \t\n\r")):
                continue
            return text if kind in ("text", "cdata") else ""
        return ""

    def add(self, kind: str, text: str = "") -> None:
        """Append content; consecutive character data of one kind is one item (its chunks
        are kept apart until :attr:`text` joins them: adding to a growing string is
        quadratic, seconds on a mesh's megabyte of numbers)."""
        if kind in ("text", "cdata") and self.content and self.content[-1][0] == kind:
            self.content[-1].append(text)
        else:
            self.content.append([kind, text])

    def find(self, tag: str) -> Node | None:
        """The first direct child called ``tag`` (DART reads the first occurrence)."""
        for child in self.children:
            if child.tag == tag:
                return child
        return None

    def findall(self, tag: str) -> Iterator[Node]:
        """Every direct child called ``tag``, in document order."""
        return (child for child in self.children if child.tag == tag)


#: Every byte to a space but the line breaks (blanked markup keeps its lines).
_BLANK = bytes(c if c in (0x0A, 0x0D) else 0x20 for c in range(256))


def blank_comments(data: bytes) -> tuple[bytes, int | None]:
    """``data`` with every comment body blanked (CR/LF kept), and the line of the first
    comment that XML itself would refuse (None if all are well-formed)."""
    out = bytearray(data)
    bad_line: int | None = None
    i = 0
    while True:
        i = data.find(b"<", i)
        if i < 0:
            break
        if data.startswith(b"<?", i):
            end = data.find(b"?>", i + 2)
            i = end + 2 if end >= 0 else len(data)
        elif data.startswith(b"<!--", i):
            end = data.find(b"-->", i + 4)
            if end < 0:
                break  # unterminated: expat and DART both refuse it
            body = data[i + 4:end]
            if bad_line is None and (b"--" in body or body.endswith(b"-") or
                                     not body.isascii()):
                bad_line = data.count(b"\n", 0, i) + 1
            out[i + 4:end] = body.translate(_BLANK)
            i = end + 3
        elif data.startswith(b"<![CDATA[", i):
            end = data.find(b"]]>", i + 9)
            i = end + 3 if end >= 0 else len(data)
        elif data.startswith(b"<!", i):
            end = data.find(b">", i + 2)
            i = end + 1 if end >= 0 else len(data)
        else:
            i = _tag_end(data, i + 1)
    return bytes(out), bad_line


#: An ``&`` that starts no reference XML defines without a DTD (the five predefined
#: entities, character references): tinyxml2 keeps it as text, so it becomes ``&amp;``.
_BARE_AMPERSAND = re.compile(rb"&(?!(?:#[0-9]+|#x[0-9a-fA-F]+|lt|gt|amp|quot|apos);)")
_QUOTED = re.compile(rb'"[^"]*"|\'[^\']*\'')
_BOM = b"\xef\xbb\xbf"
_DECLARATION = re.compile(rb"<\?xml[ \t\r\n]")
_DECLARED = re.compile(rb"""(?:\xef\xbb\xbf)?<\?xml[^>]*?encoding\s*=\s*["']([^"']{1,100})["']""")


_WIDE = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
         (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def wide(data: bytes) -> str | None:
    """``"UTF-16"`` or ``"UTF-32"`` when ``data`` is text in one (its byte order mark, or
    NUL bytes around the first ``<``), which tinyxml2 cannot read; else None."""
    for mark, name in _WIDE:
        if data.startswith(mark):
            return name
    head = data[:4]
    if b"\x00" not in head:
        return None
    return "UTF-32" if head.count(b"\x00") == 3 else "UTF-16"


def tolerate(data: bytes) -> tuple[bytes, str | None, list[str]]:
    """``data`` made well-formed where tinyxml2 (MuJoCo's parser) reads it anyway, the
    encoding to parse it in (None: as it declares), and what was repaired.

    * comments as :func:`blank_comments` gives them (``--`` inside, ``--->``, any bytes);
    * an XML declaration after leading whitespace or later in the file is blanked;
    * tinyxml2 never reads the declared encoding: valid UTF-8 is parsed as UTF-8 whatever
      the declaration says (other bytes keep the declared encoding, so an unknown one is
      still refused);
    * ``&`` that starts no predefined entity or character reference, and ``<`` inside an
      attribute value, are escaped, so they stay the literal text tinyxml2 keeps. In a
      file with a DTD nothing is escaped: its entities stay refused, never expanded.

    Lines are kept; an escaped character moves the columns after it on its line. The
    result is at most five times the size of ``data``. UTF-16 or UTF-32 text (:func:`wide`),
    which tinyxml2 cannot read, is returned unchanged: the byte scans would garble it."""
    if wide(data):
        return data, None, []
    data, bad_comment = blank_comments(data)
    notes = [f"line {bad_comment}: a comment that XML forbids"] if bad_comment else []
    out = _markup(data, notes)
    encoding = _encoding(out, notes)
    return out, encoding, notes


def _markup(data: bytes, notes: list[str]) -> bytes:
    """``data`` (comments blanked) with misplaced declarations blanked and stray ``&`` and
    ``<`` escaped (:func:`tolerate`), noting what was done in ``notes``."""
    start = len(_BOM) if data.startswith(_BOM) else 0
    chunks: list[bytes] = [data[:start]]
    doctype = b"<!DOCTYPE" in data
    escaped = declarations = 0
    i = at = start
    while (i := data.find(b"<", i)) >= 0:
        if data.startswith(b"<?", i):
            end = data.find(b"?>", i + 2)
            end = end + 2 if end >= 0 else len(data)
            if i > start and _DECLARATION.match(data, i):
                escaped += _text(chunks, data[at:i], doctype)
                chunks.append(data[i:end].translate(_BLANK))
                if not declarations:  # the first one's line only: counting lines from the
                    # start for each would be quadratic in their number
                    line = data.count(b"\n", 0, i) + 1
                    notes.append(f"line {line}: an XML declaration not at the start of "
                                 "the file")
                declarations += 1
                at = end
            i = end
        elif data.startswith(b"<!--", i) or data.startswith(b"<![CDATA[", i):
            end = data.find(b"-->" if data[i + 2] == 0x2D else b"]]>", i + 4)
            end = end + 3 if end >= 0 else len(data)
            escaped += _text(chunks, data[at:i], doctype)
            chunks.append(data[i:end])
            i = at = end
        elif data.startswith(b"<!", i):
            end = data.find(b">", i + 2)
            i = end + 1 if end >= 0 else len(data)
        else:
            end = _tag_end(data, i + 1)
            escaped += _text(chunks, data[at:i], doctype)
            tag = data[i:end]
            if not doctype and (b"&" in tag or tag.count(b"<") > 1):
                fixed = _QUOTED.sub(lambda m: _BARE_AMPERSAND.sub(b"&amp;", m.group()).replace(
                    b"<", b"&lt;"), tag)
                escaped += fixed != tag
                tag = fixed
            chunks.append(tag)
            i = at = end
    escaped += _text(chunks, data[at:], doctype)
    if declarations > 1:
        notes.append(f"{declarations - 1:,} more XML declarations not at the start")
    if escaped:
        notes.append("'&' or '<' written as text")
    return b"".join(chunks)


def _encoding(data: bytes, notes: list[str]) -> str | None:
    """"utf-8" when ``data`` is valid UTF-8 (tinyxml2 reads nothing else), noting a declared
    encoding that would read it differently; else None (the declaration decides)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    declared = _DECLARED.match(data)
    if declared:
        name = declared.group(1).decode("ascii", "replace")
        try:
            same = data.decode(name) == text
        except (LookupError, UnicodeDecodeError):
            same = False
        if not same:
            notes.append(f"the declared encoding {name[:40]!r} ignored (the bytes are UTF-8)")
    return "utf-8"


def _text(chunks: list[bytes], text: bytes, doctype: bool) -> int:
    """Append character data with its bare ``&`` escaped (1 if one was)."""
    if doctype or b"&" not in text:
        chunks.append(text)
        return 0
    fixed = _BARE_AMPERSAND.sub(b"&amp;", text)
    chunks.append(fixed)
    return int(fixed != text)


_TAG_BODY = re.compile(rb"""(?:[^"'>]+|"[^"]*"|'[^']*')*""")


def _tag_end(data: bytes, i: int) -> int:
    """The index after the ``>`` that closes the tag starting before ``i`` (quotes skipped;
    an unclosed tag or quote runs to the end)."""
    match = _TAG_BODY.match(data, i)
    end = match.end() if match else i
    return end + 1 if data[end:end + 1] == b">" else len(data)


def parse(data: bytes, path: str | os.PathLike[str]) -> Node:
    """Parse ``data`` into a tree of :class:`Node`; any XML problem is a FormatError.

    Comments that only tinyxml2 accepts are blanked first, with one warning.
    """
    data, bad_line = blank_comments(data)
    if bad_line is not None:
        warn(f"{os.fspath(path)}:{bad_line}: a comment is not well-formed XML (e.g. it ends "
             "with '--->'); accepted, as DART (tinyxml2) does")
    builder = _TreeBuilder(path)
    try:
        builder.parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise FormatError(f"malformed XML: {expat.ErrorString(exc.code)}", path, exc.lineno,
                          exc.offset + 1) from None
    except LookupError as exc:  # an encoding declaration Python does not know
        raise FormatError(f"unknown XML encoding ({str(exc)[:80]})", path, 1) from None
    if not builder.roots:
        raise FormatError("empty XML document", path)
    return builder.roots[0]


class _TreeBuilder:
    """An expat parser whose handlers build the :class:`Node` tree (every element keeps its
    line and column) and refuse entity declarations and external entities."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self.stack: list[Node] = []
        self.roots: list[Node] = []
        self.mode = "text"  # "cdata" inside a CDATA section
        parser = self.parser = expat.ParserCreate()
        parser.StartElementHandler = self.start
        parser.EndElementHandler = self.end
        parser.CharacterDataHandler = self.chars
        parser.CommentHandler = self.comment
        parser.StartCdataSectionHandler = self.cdata_start
        parser.EndCdataSectionHandler = self.cdata_end
        parser.EntityDeclHandler = self.refuse_entity
        parser.UnparsedEntityDeclHandler = self.refuse_entity
        parser.ExternalEntityRefHandler = self.refuse_external
        parser.SkippedEntityHandler = self.refuse_external
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.buffer_text = True  # character data in few calls (flushed before any event)

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        parser = self.parser
        node = Node(tag, attrib, parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)
        if self.stack:
            self.stack[-1].children.append(node)
            self.stack[-1].add("element")
        else:
            self.roots.append(node)
        self.stack.append(node)

    def end(self, tag: str) -> None:
        self.stack.pop()

    def chars(self, text: str) -> None:
        if self.stack:
            self.stack[-1].add(self.mode, text)

    def comment(self, text: str) -> None:
        if self.stack:
            self.stack[-1].add("comment")

    def cdata_start(self) -> None:
        self.mode = "cdata"
        if self.stack:
            self.stack[-1].content.append(["cdata", ""])  # a CDATA section is a node of its own

    def cdata_end(self) -> None:
        self.mode = "text"

    def refuse_entity(self, *args: Any) -> None:
        raise self._refusal("XML entity declarations are not allowed (nothing is expanded)")

    def refuse_external(self, *args: Any) -> int:
        raise self._refusal("external XML entities are not allowed (nothing is fetched)")

    def _refusal(self, message: str) -> FormatError:
        return FormatError(message, self.path, self.parser.CurrentLineNumber,
                           self.parser.CurrentColumnNumber + 1)
