"""Mutated corpus files for fuzzing every reader (a seeded loop: the same inputs each run).

Seeds are corpus files (text files cut to their first few kilobytes at a line end), each
paired with the format module that reads it. Mutations are byte flips, inserted YAML/XML/
number tokens, deleted or duplicated spans and truncations, stacked one to three deep. A
``.npz`` seed is most often mutated inside one of its arrays and zipped again (with a
right checksum, so that the readers' own checks are reached, not only the zip's).
"""

from __future__ import annotations

import io
import random
import zipfile
from collections.abc import Iterator
from pathlib import Path

#: (corpus path pattern, format module, suffix, how many bytes of the start to keep)
SEEDS: tuple[tuple[str, str, str, int | None], ...] = (
    ("choreonoid/SR1WalkPattern1.seq", "choreonoid.seq", ".seq", 3000),
    ("choreonoid/SR1WalkPattern3.seq", "choreonoid.seq", ".seq", 3000),
    ("choreonoid/SR1.body", "choreonoid.body", ".body", None),
    ("choreonoid/oracle/merge.body", "choreonoid.body", ".body", None),
    ("dart/skel/test/double_pendulum.skel", "dart.skel", ".skel", None),
    ("dart/skel/soft_cubes.skel", "dart.skel", ".skel", None),
    ("parc/ms/sfu.pkl", "parc.ms", ".pkl", None),
    ("mimickit/g1_walk.pkl", "parc.ms", ".pkl", None),
    ("parc/character/humanoid.xml", "parc.character", ".xml", None),
    ("trajectopy/generated_trajectory.traj", "trajectory.traj", ".traj", 3000),
    ("evo/freiburg1_xyz-groundtruth.txt", "trajectory.tum", ".txt", 3000),
    ("evo/KITTI_00_gt.txt", "trajectory.kitti", ".txt", 3000),
    ("evo/V102_groundtruth.csv", "trajectory.euroc", ".csv", 3000),
    ("rosbag2/topics_and_services.mcap", "rosbag.bag", ".mcap", None),
    ("evo/ROS_example.bag", "rosbag.bag", ".bag", None),
    ("episodes/bags/joint_states_ros1.bag", "rosbag.bag", ".bag", None),
    ("episodes/bags/joint_states_ros2/joint_states_ros2.mcap", "rosbag.bag", ".mcap", None),
    ("containers/amass/amass_smplh_120fps.npz", "containers.amass", ".npz", None),
    ("containers/amass/amass_smplx_60fps.npz", "containers.amass", ".npz", None),
    ("containers/isaaclab/humanoid_run.npz", "containers.amp", ".npz", None),
    ("containers/isaaclab/g1_walk_bm_mujoco_order.npz", "containers.beyondmimic", ".npz", None),
    ("containers/isaaclab/g1_kimodo_walk.csv", "containers.g1csv_kimodo", ".csv", 3000),
    ("containers/isaaclab/g1_walk_lafan_layout.csv", "containers.g1csv_lafan", ".csv", 3000),
    ("containers/c3d/Optotrak.c3d", "c3d.read", ".c3d", None),
    ("containers/c3d/Qualisys.c3d", "c3d.read", ".c3d", None),
    ("containers/c3d/Vicon.c3d", "c3d.read", ".c3d", None),
)
LIST_SEED = (b"motions:\n  - file: $DATA_DIR/walk.seq\n    weight: 2\n  - file: run.seq\n"
             b"    weight: 1\n    name: run\nterrain: {size: [1, 2]}\n")
TOKENS = (b"[", b"]", b"{", b"}", b"&a ", b"*a", b"<<: ", b"- ", b": ", b"\n", b"\x00",
          b"9" * 5000, b"-1", b"1e308", b"nan", b"inf", b"\xff\xfe", b"\xc3", b"'", b'"',
          b"<", b"/>", b"&amp;", b"<!ENTITY x 'y'>", b"\t", b",", b"#", b"!!python/object ",
          b"\r", b"%", b"\x80\x04", b"\x8c\x05numpy", b"R", b"h\x00", b"(", b"t", b"\xff" * 8)


def _start(data: bytes, keep: int | None) -> bytes:
    if keep is None or len(data) <= keep:
        return data
    cut = data.rfind(b"\n", 0, keep)
    return data[:cut + 1] if cut > 0 else data[:keep]


def mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(1 if rng.random() < 0.7 else rng.randint(2, 3)):
        choice = rng.random()
        at = rng.randrange(len(out) + 1)
        if choice < 0.3 and out:
            out[min(at, len(out) - 1)] = rng.randrange(256)
        elif choice < 0.6:
            out[at:at] = rng.choice(TOKENS)
        elif choice < 0.75:
            del out[at:at + rng.randint(1, 64)]
        elif choice < 0.9:
            span = bytes(out[at:at + rng.randint(1, 256)])
            out[at:at] = span * rng.randint(1, 4)
        else:
            del out[at:]
    return bytes(out)


def mutate_archive(data: bytes, rng: random.Random) -> bytes:
    """One member of a zip archive mutated, the archive written again (stored)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = [(info.filename, archive.read(info)) for info in archive.infolist()]
    chosen = rng.randrange(len(members))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for index, (name, body) in enumerate(members):
            archive.writestr(name, mutate(body, rng) if index == chosen else body)
    return out.getvalue()


def inputs(corpus: Path, folder: Path, per_seed: int, seed: int = 12) -> Iterator[tuple[str, str]]:
    """Write mutated files into ``folder``; yield (format module, path) for each."""
    rng = random.Random(seed)
    seeds = [(_start((corpus / name).read_bytes(), keep), module, suffix)
             for name, module, suffix, keep in SEEDS if (corpus / name).is_file()]
    seeds.append((LIST_SEED, "parc.motionlist", ".yaml"))
    for number, (data, module, suffix) in enumerate(seeds):
        count = per_seed if len(data) < 100_000 else max(per_seed // 10, 5)
        for index in range(count):
            path = folder / f"m{number}_{index}{suffix}"
            inside = suffix == ".npz" and rng.random() < 0.7
            path.write_bytes(mutate_archive(data, rng) if inside else mutate(data, rng))
            yield module, str(path)
