"""Run inside Blender (``blender -b --factory-startup --python blender_poses.py -- IN OUT FPS
TIMES NUMPY_DIR``): import the glTF file IN with Blender's own importer and write, as JSON to
OUT, every object's world matrix (row-major, Blender's Z up) at each time in TIMES (seconds),
and each bone's of an armature as ``ARMATURE:BONE``.

The scene's fps is set before the import, since the importer places keys at time × fps.
Debian's Blender has no numpy, which its glTF add-on imports: NUMPY_DIR (the folder holding
the test interpreter's numpy, the same Python minor version) is appended to ``sys.path``.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    source, target, fps, times, numpy_dir = sys.argv[sys.argv.index("--") + 1:][:5]
    sys.path.append(numpy_dir)
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = int(fps), 1.0
    bpy.ops.import_scene.gltf(filepath=source)
    found: dict[str, list[list[list[float]]]] = {obj.name: [] for obj in scene.objects}
    for t in json.loads(times):
        frame = float(t) * int(fps)
        scene.frame_set(int(frame), subframe=frame - int(frame))
        for obj in scene.objects:
            found[obj.name].append([list(row) for row in obj.matrix_world])
            for bone in obj.pose.bones if obj.type == "ARMATURE" else ():
                world = obj.matrix_world @ bone.matrix  # its translation: the joint's place
                found.setdefault(f"{obj.name}:{bone.name}", []).append([list(row) for row in world])
    with open(target, "w") as handle:
        json.dump(found, handle)


main()
