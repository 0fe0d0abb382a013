"""Pickling exactly as PARC's own (NumPy 1.x, protocol 4) environment does.

NumPy 2 names its array rebuilders ``numpy._core.…``, which NumPy 1.x cannot import
(PARC issue #6). This pickler writes them under their NumPy 1.x names
(``numpy.core.multiarray._reconstruct`` / ``scalar``), which both NumPy generations
load, so files we write open in PARC's recommended environment and a numpy-only file
re-written from its decoded contents is identical byte for byte.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

#: NumPy 2 module names and the NumPy 1 spelling written instead.
_OLD_MODULES = {
    "numpy._core.multiarray": "numpy.core.multiarray",
    "numpy._core.numeric": "numpy.core.numeric",
}
PROTOCOL = 4
_PurePickler: Any = getattr(pickle, "_Pickler")  # noqa: B009 (private, untyped in typeshed)


class _Numpy1Pickler(_PurePickler):
    """The pure-Python pickler (its framing equals the C pickler's) with renamed globals."""

    def save_global(self, obj: Any, name: str | None = None) -> None:
        module = getattr(obj, "__module__", None)
        if module in _OLD_MODULES:
            qualname = name or obj.__qualname__
            if obj in self.memo:
                self.write(self.get(self.memo[id(obj)][0]))
                return
            self.save(_OLD_MODULES[module])
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
            self.memoize(obj)
            return
        super().save_global(obj, name)


def dumps(obj: Any) -> bytes:
    """Protocol-4 pickle of ``obj`` with NumPy 1.x global names."""
    buffer = io.BytesIO()
    _Numpy1Pickler(buffer, protocol=PROTOCOL).dump(obj)
    return buffer.getvalue()
