"""The primitive shapes' meshes (viewer and glTF): closed, wound outwards (every face's
normal points away from the shape's centre), with the volume of the shape they stand for."""

from __future__ import annotations

import numpy as np
import pytest

from motionkit.model.geometry import mesh
from motionkit.model.skeleton import Shape

SHAPES = [
    (Shape("box", {"size": (0.2, 0.4, 0.6)}), 0.2 * 0.4 * 0.6),
    (Shape("sphere", {"radius": 0.1}), 4 / 3 * np.pi * 0.1**3),
    (Shape("ellipsoid", {"size": (0.2, 0.4, 0.6)}), 4 / 3 * np.pi * 0.1 * 0.2 * 0.3),
    (Shape("capsule", {"radius": 0.05, "height": 0.3}),
     np.pi * 0.05**2 * 0.3 + 4 / 3 * np.pi * 0.05**3),
    (Shape("cylinder", {"radius": 0.05, "height": 0.3}), np.pi * 0.05**2 * 0.3),
    (Shape("cone", {"radius": 0.05, "height": 0.3}), np.pi * 0.05**2 * 0.3 / 3),
]


@pytest.mark.parametrize(("shape", "volume"), SHAPES, ids=lambda v: getattr(v, "kind", ""))
def test_every_face_looks_outwards_and_the_volume_is_the_shapes(shape: Shape,
                                                                volume: float) -> None:
    made = mesh(shape)
    assert made is not None
    vertices, faces = made[0].astype(np.float64), made[1]
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    normals = np.cross(b - a, c - a)
    centres = (a + b + c) / 3
    assert (np.einsum("ij,ij->i", normals, centres) > 0).all()  # convex, centred at 0
    signed = np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6
    assert signed == pytest.approx(volume, rel=0.12)  # 20 segments around: a little less
    edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    assert (counts == 2).all()  # closed: every edge shared by two faces
