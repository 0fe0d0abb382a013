"""What the MimicKit and GMR tests share: an exp-map decoder of their own and MuJoCo models
of the corpus characters."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np


def quaternions(exp_map: np.ndarray) -> np.ndarray:
    """Exp-maps to x y z w quaternions with w >= 0, written out here (not motionkit's)."""
    angle = np.linalg.norm(exp_map, axis=1, keepdims=True)
    axis = np.divide(exp_map, angle, out=np.zeros_like(exp_map), where=angle > 0)
    q = np.concatenate([axis * np.sin(angle / 2), np.cos(angle / 2)], axis=1)
    return np.where(q[:, 3:] < 0, -q, q)


def mujoco_model(mujoco: Any, path: Path) -> Any:
    """The model without what MuJoCo cannot load here: mesh geoms and assets (the meshes are
    not in the corpus), the humanoid's floor (its material is undefined)."""
    root = ET.fromstring(path.read_text())
    for parent in root.iter():
        for child in list(parent):
            if child.tag in ("mesh", "texture", "material") or (
                    child.tag == "geom" and (child.get("mesh") or child.get("name") == "floor")):
                parent.remove(child)
    return mujoco.MjModel.from_xml_string(ET.tostring(root, encoding="unicode"))
