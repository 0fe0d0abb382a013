"""The first layer of the safe unpickler: a walk over a pickle's opcodes that builds
nothing and refuses what could make decoding allocate far more than the file's size,
nest without bound or run long (see :mod:`.safepickle` for the layers after it).

The limits and the opcode table (from :mod:`pickletools`) live here and are handed to the
compiled walk (``_pickle_scan.c``, built at install), which :func:`scan` is, so that a
hostile stream of one-byte opcodes costs nanoseconds per opcode. :func:`scan_reference`
is the same walk written in Python, which states the rules readably; the tests hold the
two to the same offset and the same message on every input. Where no compiler was at
hand the Python walk is used.
"""

from __future__ import annotations

import pickletools
import struct
from array import array
from typing import Any, Protocol

from ...._accel import compiled

#: Most values the unpickler stack may hold at once, and most open MARKs.
MAX_STACK = 100_000
MAX_MARKS = 1_000
#: Deepest nesting of values (in the opcode scan and in every walk over decoded data).
MAX_DEPTH = 100
#: Most dictionary/set insertions per pickle (bounds hash-collision work).
MAX_INSERTS = 10_000
#: Bytes of memoized data a pickle may fetch again beyond its own size (so decoding can
#: copy at most about twice the file's data).
MAX_REUSE_SLACK = 1 << 20
#: Longest text argument of the protocol-0 number opcodes (INT, LONG, FLOAT, GET, PUT).
MAX_TEXT_NUMBER = 4_300
#: Memory the lists, dicts and sets a pickle builds may take (at their empty sizes in
#: CPython, ``CONTAINER_COST``): this many times the file's size plus a fixed allowance.
#: An empty set costs 216 bytes for one opcode byte; honest nested lists ~12 per byte.
CONTAINER_FACTOR = 24
CONTAINER_ALLOWANCE = 64 << 20


class PickleProblem(Exception):
    """A pickle breaks a rule (raised by the scan and the shims); the readers turn it into
    a FormatError that names the file."""


_COUNTED = {-2: (1, "<B"), -3: (4, "<i"), -4: (4, "<I"), -5: (8, "<Q")}
_MARKERS = ("mark", "stackslice")
#: What an opcode means to the scan (the compiled walk checks it names them alike).
ROLES = ("plain", "put", "get", "dup", "mark", "fill", "frame", "forbidden", "persid", "stop")
_PLAIN, _PUT, _GET, _DUP, _MARK, _FILL, _FRAME, _FORBIDDEN, _PERSID, _STOP = range(len(ROLES))
_ROLES = {"PUT": _PUT, "BINPUT": _PUT, "LONG_BINPUT": _PUT, "MEMOIZE": _PUT, "GET": _GET,
          "BINGET": _GET, "LONG_BINGET": _GET, "DUP": _DUP, "MARK": _MARK, "FRAME": _FRAME,
          "STOP": _STOP, "EXT1": _FORBIDDEN, "EXT2": _FORBIDDEN, "EXT4": _FORBIDDEN,
          "PERSID": _FORBIDDEN, "BINPERSID": _PERSID}
#: Opcodes that add items to the container below them (its depth grows, not adds up).
_FILL_OPS = ("APPEND", "APPENDS", "SETITEM", "SETITEMS", "ADDITEMS", "BUILD")
#: Dictionary/set insertions: one per opcode, per stack pair, or per stack item.
_INSERTS = {"SETITEM": 1, "SETITEMS": 2, "DICT": 2, "ADDITEMS": 3, "FROZENSET": 3}
_NUMBER_OPS = ("INT", "LONG", "FLOAT", "GET", "PUT")
CONTAINER_COST = {"EMPTY_LIST": 56, "LIST": 56, "EMPTY_DICT": 64, "DICT": 64, "EMPTY_SET": 216,
                  "FROZENSET": 216}


def _build_table() -> list[tuple[Any, ...] | None]:
    table: list[tuple[Any, ...] | None] = [None] * 256
    for op in pickletools.opcodes:
        before = [s.name for s in op.stack_before]
        mark_at = before.index("mark") if "mark" in before else -1
        plain = len([s for s in before if s not in _MARKERS])
        arg = op.arg
        kind = 0 if arg is None else arg.n
        pair = arg is not None and arg.name == "stringnl_noescape_pair"
        role = _FILL if op.name in _FILL_OPS else _ROLES.get(op.name, _PLAIN)
        numeric = op.name in _NUMBER_OPS or pair
        table[ord(op.code.encode("latin-1"))] = (
            op.name, kind, pair, mark_at, plain, len(op.stack_after), role,
            _INSERTS.get(op.name, 0), numeric, CONTAINER_COST.get(op.name, 0))
    return table


_TABLE = _build_table()


# Exempt from the complexity limit (C901): kept as one walk, it is the readable statement
# of the rules the compiled scan (_pickle_scan.c) follows; the tests hold both to the same
# results.
def scan_reference(data: bytes | bytearray, start: int = 0, *, stop: int | None = None, origin: int = 0,  # noqa: C901
                   allow_persistent: bool = False) -> int:
    """Check one pickle's opcodes against the limits; return the offset just past STOP.

    The pickle starts at ``start`` and may not reach past ``stop`` (default: the end of
    ``data``); messages count bytes from ``origin``. Nothing is built and no large
    argument is copied, so this costs time linear in the number of opcodes (a NumPy array
    is a single opcode). Every stack value and memo entry carries the bytes of data it
    holds (length-prefixed and text arguments) and its nesting depth.
    """
    size = len(data) if stop is None else stop
    if start < 0 or size < start or size > len(data) or not 0 <= origin <= start:
        raise ValueError("scan bounds lie outside the data")
    pos = start
    stack: list[int] = []  # per value on the unpickler stack: bytes of data it carries
    depths: list[int] = []  # per value on the stack: how deeply it nests
    marks: list[int] = []
    memo = array("q")  # per memo entry: weight, depth (16 bytes, not a tuple's 64)
    inserts = 0
    reused = 0  # data fetched again from the memo (each fetch may be copied again)
    reuse_limit = size - start + MAX_REUSE_SLACK
    containers = 0  # bytes the containers built so far take
    container_limit = CONTAINER_ALLOWANCE + (size - start) * CONTAINER_FACTOR
    table = _TABLE
    while pos < size:
        entry = table[data[pos]]
        if entry is None:
            raise PickleProblem(f"invalid pickle opcode 0x{data[pos]:02x} at byte "
                               f"{pos - origin}")
        name, kind, pair, mark_at, plain, after, role, counted, numeric, cost = entry
        at = pos - origin  # for messages
        pos += 1
        if role == _FORBIDDEN or (role == _PERSID and not allow_persistent):
            raise PickleProblem(f"forbidden pickle opcode {name} at byte {at}")
        containers += cost
        if containers > container_limit:
            raise PickleProblem(f"pickle's lists, dicts and sets take more than "
                                f"{container_limit} bytes (at byte {at})")
        number = 0
        weight = 0
        if kind > 0:
            if pos + kind > size:
                raise PickleProblem(f"truncated pickle at byte {at}")
            number = int.from_bytes(data[pos:pos + kind], "little")
            pos += kind
        elif kind == -1:
            limit = MAX_TEXT_NUMBER if numeric else size
            for _ in range(2 if pair else 1):
                end = data.find(b"\n", pos, min(size, pos + limit + 1))
                if end < 0:
                    raise PickleProblem(f"unterminated or overlong {name} argument at byte {at}")
                if role in (_PUT, _GET):
                    text = bytes(data[pos:end])
                    if not (0 < len(text) <= 9 and text.isdigit()):
                        raise PickleProblem(f"bad {name} index at byte {at}")
                    number = int(text)
                weight += end - pos
                pos = end + 1
        elif kind < -1:
            width, fmt = _COUNTED[kind]
            if pos + width > size:
                raise PickleProblem(f"truncated pickle at byte {at}")
            (weight,) = struct.unpack_from(fmt, data, pos)
            pos += width
            if weight < 0 or weight > size - pos:
                raise PickleProblem(f"{name} at byte {at} declares {weight} bytes but only "
                                    f"{size - pos} remain")
            pos += weight
        depth = 0
        if role != _PLAIN:
            if role == _FRAME:
                if number > size - pos:
                    raise PickleProblem(f"FRAME at byte {at} is longer than the data")
            elif role == _PUT:
                index = number if name != "MEMOIZE" else len(memo) // 2
                if index > len(memo) // 2:
                    raise PickleProblem(f"memo index {index} out of order at byte {at}")
                if not stack:
                    raise PickleProblem(f"{name} on an empty stack at byte {at}")
                memo[2 * index:2 * index + 2] = array("q", (stack[-1], depths[-1]))
                continue
            elif role == _GET:
                if number >= len(memo) // 2:
                    raise PickleProblem(f"memo index {number} not yet stored at byte {at}")
                weight, depth = memo[2 * number], memo[2 * number + 1]
                reused += weight
            elif role == _DUP and stack:
                reused += stack[-1]
            elif role == _MARK:
                marks.append(len(stack))
                if len(marks) > MAX_MARKS:
                    raise PickleProblem(f"pickle nests deeper than {MAX_MARKS} marks")
                continue
            if reused > reuse_limit:
                raise PickleProblem("pickle re-uses large data more often than its size allows")
        if mark_at >= 0:
            if not marks:
                raise PickleProblem(f"{name} without MARK at byte {at}")
            top = marks.pop()
            if counted == 2:
                inserts += (len(stack) - top) // 2
            elif counted == 3:
                inserts += len(stack) - top
            first = top - mark_at
        else:
            inserts += counted  # SETITEM: 1
            first = len(stack) - plain
        if first < 0 or (marks and first < marks[-1]):
            raise PickleProblem(f"pickle stack underflow at byte {at} ({name})")
        if first < len(stack):
            weight += sum(stack[first:])
            if after:
                if role == _FILL:
                    depth = max(depths[first], max(depths[first + 1:], default=-1) + 1)
                elif role == _DUP:
                    depth = depths[first]
                else:
                    depth = max(depths[first:]) + 1
                if depth > MAX_DEPTH:
                    raise PickleProblem(f"pickle nests deeper than {MAX_DEPTH} levels "
                                        f"(at byte {at})")
            del stack[first:]
            del depths[first:]
        if after:
            stack.append(weight)
            depths.append(depth)
            if after > 1:  # DUP
                stack.append(weight)
                depths.append(depth)
            if len(stack) > MAX_STACK:
                raise PickleProblem(f"pickle holds more than {MAX_STACK} values at once")
        if inserts > MAX_INSERTS:
            raise PickleProblem(f"pickle inserts more than {MAX_INSERTS} dictionary/set items")
        if role == _STOP:
            return pos
    raise PickleProblem("pickle data was truncated (no STOP)")


class Scan(Protocol):
    """The scan's signature (both walks)."""

    def __call__(self, data: bytes | bytearray, start: int = 0, *, stop: int | None = None,
                 origin: int = 0, allow_persistent: bool = False) -> int: ...


def _compiled_scan() -> Scan | None:
    """The compiled walk, told the rules above; None where it was not built."""
    module = compiled("motionkit.formats.shared.pickles._pickle_scan")
    if module is None:
        return None
    module.configure(_TABLE, ROLES, (MAX_STACK, MAX_MARKS, MAX_DEPTH, MAX_INSERTS,
                                     MAX_REUSE_SLACK, MAX_TEXT_NUMBER, CONTAINER_ALLOWANCE,
                                     CONTAINER_FACTOR), PickleProblem)
    walk: Scan = module.scan
    return walk


scan: Scan = _compiled_scan() or scan_reference
#: Whether :func:`scan` is the compiled walk.
COMPILED = scan is not scan_reference
