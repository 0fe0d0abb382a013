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
from typing import TYPE_CHECKING, Any

#: NumPy 2 module names and the NumPy 1 spelling written instead.
_OLD_MODULES = {
    "numpy._core.multiarray": "numpy.core.multiarray",
    "numpy._core.numeric": "numpy.core.numeric",
}
PROTOCOL = 4

if TYPE_CHECKING:
    class _PurePickler(pickle._Pickler):
        """The undocumented members of the pure-Python pickler used here (typeshed has
        the class but not these)."""

        memo: dict[int, tuple[int, object]]

        def save(self, obj: object, save_persistent_id: bool = True) -> None: ...
        def save_global(self, obj: Any, name: str | None = None) -> None: ...
        def memoize(self, obj: object) -> None: ...
        def write(self, data: bytes) -> None: ...
        def get(self, index: int) -> bytes: ...
else:
    _PurePickler = pickle._Pickler


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


def dumps(obj: object) -> bytes:
    """Protocol-4 pickle of ``obj`` with NumPy 1.x global names."""
    buffer = io.BytesIO()
    _Numpy1Pickler(buffer, protocol=PROTOCOL).dump(obj)
    return buffer.getvalue()
