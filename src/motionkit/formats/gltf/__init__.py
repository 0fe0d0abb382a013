"""Animated glTF 2.0 (``.glb``, ``.gltf``): motions out to Blender, three.js and every glTF
viewer, one node per body (``specs/gltf-export.md``), and back in for the files motionkit
wrote. Several motions go into one scene with :func:`write_scene`."""

from ._read import read_motion
from .write import write_scene

__all__ = ["read_motion", "write_scene"]
