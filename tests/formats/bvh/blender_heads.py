"""Run inside Blender (``blender -b --factory-startup --python blender_heads.py -- IN OUT N``):
import the BVH file IN with Blender's own importer and write, as JSON to OUT, each
bone's world head position at each of the file's N frames.

Debian's Blender 3.4.1 runs Python 3.11, where ``open(path, 'rU')`` (the mode its BVH
importer passes) raises ValueError: the U flag is gone from Python. The importer's module
gets an ``open`` of its own that drops the flag; nothing else of it is changed.
"""

from __future__ import annotations

import builtins
import json
import sys
from typing import Any


def _open_without_u(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
    return builtins.open(file, mode.replace("U", ""), *args, **kwargs)


def main() -> None:
    import bpy
    from io_anim_bvh import import_bvh

    source, target, count = sys.argv[sys.argv.index("--") + 1:][:3]
    import_bvh.open = _open_without_u  # the module's name lookup finds this before builtins
    # defaults of Blender's File > Import > BVH: Y up in the file, -Z forward, scale 1
    bpy.ops.import_anim.bvh(filepath=source, rotate_mode="NATIVE", frame_start=1)
    armature = bpy.context.view_layer.objects.active
    scene = bpy.context.scene
    frames = range(1, int(count) + 1)
    heads: dict[str, list[list[float]]] = {bone.name: [] for bone in armature.pose.bones}
    for frame in frames:
        scene.frame_set(frame)
        for bone in armature.pose.bones:
            heads[bone.name].append(list(armature.matrix_world @ bone.head))
    with builtins.open(target, "w") as handle:
        json.dump({"frames": len(frames), "heads": heads}, handle)


main()
