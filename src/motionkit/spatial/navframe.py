"""Navigation frames named by axis letters (``enu``, ``ned``, ``nue`` …) and their map to ENU.

A name lists what the file's x, y and z axes point to: ``e``ast, ``n``orth and ``u``p or
``d``own. Only the navigation (world) frame is re-expressed; body axes are untouched, so an
identity attitude in a NED file stays a body whose x points north and z down.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def nframe_matrix(name: str) -> NDArray[np.float64]:
    """The 3x3 signed permutation taking file axes to East, North, Up.

    Raises ValueError for names that are not a permutation of e, n and u/d.
    """
    letters = name.strip().lower()
    if len(letters) != 3 or sorted(letters.replace("d", "u")) != ["e", "n", "u"]:
        raise ValueError(
            f"navigation frame {name!r} must be a permutation of e, n and u or d (enu, ned …)")
    matrix = np.zeros((3, 3))
    matrix[0, letters.index("e")] = 1.0
    matrix[1, letters.index("n")] = 1.0
    if "u" in letters:
        matrix[2, letters.index("u")] = 1.0
    else:
        matrix[2, letters.index("d")] = -1.0
    return matrix


def is_right_handed(name: str) -> bool:
    """True when the frame is a proper rotation of ENU (can carry attitudes)."""
    return bool(np.linalg.det(nframe_matrix(name)) > 0)
