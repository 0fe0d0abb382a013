"""EPSG reprojection and local ENU frames through pyproj (the optional ``geo`` extra).

pyproj is imported only when one of these functions runs, so ``import motionkit`` does not
pay for it. Coordinates follow the authority's axis order (EPSG 4326: latitude, longitude,
height), as trajectopy's files do.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ConversionError, MotionkitError


def _pyproj() -> Any:
    try:
        import pyproj
    except ImportError:
        raise MotionkitError(
            "EPSG reprojection needs pyproj: pip install 'motionkit[geo]'") from None
    return pyproj


def _crs(code: int) -> Any:
    pyproj = _pyproj()
    if not code:
        raise ConversionError("EPSG 0 is a local frame with unknown datum; it cannot be "
                              "reprojected")
    try:
        return pyproj.CRS.from_epsg(int(code))
    except pyproj.exceptions.CRSError:
        raise ConversionError(f"unknown EPSG code {code}") from None


def reproject(xyz: ArrayLike, src_epsg: int, dst_epsg: int) -> NDArray[np.float64]:
    """Positions (n, 3) from one EPSG code to another (authority axis order)."""
    points = np.asarray(xyz, dtype=np.float64)
    transformer = _pyproj().Transformer.from_crs(_crs(src_epsg), _crs(dst_epsg))
    x, y, z = transformer.transform(points[:, 0], points[:, 1], points[:, 2])
    return np.column_stack([x, y, z])


def to_local_enu(
    xyz: ArrayLike, epsg: int, origin: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Positions (n, 3) in ``epsg`` to a local East-North-Up frame.

    The origin (latitude, longitude, height on WGS84) defaults to the mean position.
    Returns the ENU positions and the origin used.
    """
    geocentric = reproject(xyz, epsg, 4978)
    if origin is None:
        mean = geocentric.mean(axis=0, keepdims=True)
        origin_lla = reproject(mean, 4978, 4979)[0]
    else:
        origin_lla = np.asarray(origin, dtype=np.float64)
    origin_ecef = reproject(origin_lla[None, :], 4979, 4978)[0]
    lat, lon = np.radians(origin_lla[0]), np.radians(origin_lla[1])
    rotation = np.array([
        [-np.sin(lon), np.cos(lon), 0.0],
        [-np.sin(lat) * np.cos(lon), -np.sin(lat) * np.sin(lon), np.cos(lat)],
        [np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)],
    ])
    return (geocentric - origin_ecef) @ rotation.T, origin_lla
