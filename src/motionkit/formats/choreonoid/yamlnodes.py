"""YAML as Choreonoid reads it: a tree of untyped scalars with line and column marks.

PyYAML's composer gives nodes whose scalars are the raw text, so numbers are converted
the way Choreonoid converts them (``strtod``-like: ``1e-05``, ``7.779e-005``, ``nan``,
``inf``, ``017`` = 17, quoted numbers) instead of by YAML's implicit typing. Only the C
or pure-Python *base* loader is used: it constructs nothing but strings, lists and dicts.
"""

from __future__ import annotations

import os
from typing import Any

import yaml

from ..._limits import Budget, check_yaml, parse_int
from ...errors import FormatError

BaseLoader: Any = getattr(yaml, "CBaseLoader", yaml.BaseLoader)

TRUE_WORDS = frozenset(["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"])
FALSE_WORDS = frozenset(["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"])
_YAML_SPECIALS = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"),
                  ".nan": float("nan")}



def yaml_error(exc: yaml.YAMLError, path: object) -> FormatError:
    """PyYAML's error as one FormatError line, with its line and column where it has them."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(str(exc.problem or exc.context or "YAML syntax error").split())
        return FormatError(f"YAML syntax error: {message}", str(path),
                           mark.line + 1 if mark else None, mark.column + 1 if mark else None)
    return FormatError(f"YAML error: {' '.join(str(exc).split())}", str(path))

class QuotedStr(str):
    """A scalar that was quoted in the source; kept so opaque components are re-emitted alike."""


class Document:
    """A composed YAML document plus the path its errors should name.

    The text's nesting is checked before it is composed (deep nesting crashes the C
    composer); with a ``budget``, every node is charged to it.
    """

    def __init__(self, path: str | os.PathLike[str], text: bytes,
                 budget: Budget | None = None) -> None:
        self.path = path
        try:
            check_yaml(text, path, BaseLoader, budget)
            self.root = yaml.compose(text, Loader=BaseLoader)
        except yaml.YAMLError as exc:
            raise yaml_error(exc, path) from None

    def error(self, node: yaml.Node | None, message: str) -> FormatError:
        """A FormatError located at ``node``."""
        if node is None:
            return FormatError(message, self.path)
        mark = node.start_mark
        return FormatError(message, self.path, mark.line + 1, mark.column + 1)

    def mapping(self, node: yaml.Node, what: str) -> dict[str, yaml.Node]:
        """A mapping node as an ordered dict of key text → value node; duplicate keys are errors."""
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, f"{what} must be a mapping")
        result: dict[str, yaml.Node] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise self.error(key, "mapping keys must be plain text")
            if key.value in result:
                raise self.error(key, f'duplicate key "{key.value}"')
            result[key.value] = value
        return result

    def sequence(self, node: yaml.Node, what: str) -> list[yaml.Node]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, f"{what} must be a list")
        return list(node.value)

    def text(self, node: yaml.Node, what: str) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, f"{what} must be a single value, not a list or mapping")
        return str(node.value)

    def number(self, node: yaml.Node, what: str) -> float:
        """A number as Choreonoid's ``strtod`` reads it (whole text must be a number)."""
        value = parse_number(self.text(node, what))
        if value is None:
            raise self.error(node, f'{what} must be a number, not "{node.value}"')
        return value

    def integer(self, node: yaml.Node, what: str) -> int:
        text = self.text(node, what).strip()
        value = parse_int(text)
        if value is None:
            raise self.error(node, f'{what} must be an integer of at most 18 digits, '
                             f'not "{text[:40]}"')
        return value

    def boolean(self, node: yaml.Node, what: str) -> bool:
        text = self.text(node, what).strip()
        if text in TRUE_WORDS:
            return True
        if text in FALSE_WORDS:
            return False
        raise self.error(node, f'{what} must be a boolean value (true/false), not "{text}"')

    def plain(self, node: yaml.Node) -> object:
        """The node as plain Python data (str / list / dict), quoted scalars as QuotedStr."""
        if isinstance(node, yaml.ScalarNode):
            return QuotedStr(node.value) if node.style in ("'", '"') else str(node.value)
        if isinstance(node, yaml.SequenceNode):
            return [self.plain(item) for item in node.value]
        return {str(key.value): self.plain(value) for key, value in node.value}


def parse_number(text: str) -> float | None:
    """Parse a number the way Choreonoid does, or return None.

    Accepts decimal and exponent forms (also 3-digit exponents), ``nan``/``inf``,
    leading zeros as decimal, C hex floats and YAML's ``.inf``/``.nan``. Rejects
    Python-only spellings such as digit underscores.
    """
    text = text.strip()
    if not text or "_" in text or not text.isascii():
        return None
    try:
        return float(text)
    except ValueError:
        pass
    special = _YAML_SPECIALS.get(text.lower())
    if special is not None:
        return special
    if "0x" in text.lower():
        try:
            return float.fromhex(text)
        except ValueError:
            return None
    return None
