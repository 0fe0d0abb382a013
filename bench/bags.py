"""Robot logs: a generated ROS2 MCAP bag (JointState 100 Hz, TF 30 Hz, a header-less
Float64MultiArray command 50 Hz, as in the corpus) read and put on one 30 Hz clock.

Run: ``.venv/bin/python bench/bags.py [--mb 1000]``. The bag (default about 1 GB, the
issue's size) is written once into a temporary folder with rosbags' own writer and kept
there between runs; each measurement is a fresh process (``timed_process``) running
``mk.read`` of the three-topic address and ``motionkit.ops.sync`` at 30 Hz, and the
JointState topic alone. The goal is the issue's: at least 1 GB per minute on 2 cores
(users ask for at most 5 min/GB).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
from _report import Report, best, interleaved, span, timed_process

T0 = 1_700_000_000 * 10**9
NAMES = [f"panda_joint{i}" for i in range(1, 8)]
#: Bytes per 10 ms of log in this layout (one JointState, half a command, a third of a TF).
BYTES_PER_TICK = 515
ADDRESS = ":/joint_states,/tf:world->base_link,/cmd"
WORK = {
    "three topics, read + sync 30 Hz":
        f"import motionkit as mk; mk.ops.sync(mk.read(PATH + {ADDRESS!r}), 30)",
    "JointState topic, read": "import motionkit as mk; mk.read(PATH + ':/joint_states')",
}


def generate(path: Path, megabytes: float) -> Path:
    """The bag, written once: every value closed form, like the corpus's."""
    if (path / "metadata.yaml").exists():
        return path
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    types = store.types

    def header(ns: int, frame: str = "") -> object:
        stamp = types["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9)
        return types["std_msgs/msg/Header"](stamp=stamp, frame_id=frame)

    ticks = int(megabytes * 1e6 / BYTES_PER_TICK)
    layout = types["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0)
    vector, quat = types["geometry_msgs/msg/Vector3"], types["geometry_msgs/msg/Quaternion"]
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        joints = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState",
                                       typestore=store)
        tf = writer.add_connection("/tf", "tf2_msgs/msg/TFMessage", typestore=store)
        cmd = writer.add_connection("/cmd", "std_msgs/msg/Float64MultiArray", typestore=store)
        for k in range(ticks):
            ns = T0 + k * 10_000_000
            t = k / 100
            q = 0.1 * np.arange(1, 8) * np.sin(math.pi * t + 0.3 * np.arange(7))
            state = types["sensor_msgs/msg/JointState"](header=header(ns), name=NAMES,
                                                        position=q, velocity=q * 2, effort=q * 3)
            writer.write(joints, ns + 2_000_000, store.serialize_cdr(state, joints.msgtype))
            if k % 2 == 0:
                command = types["std_msgs/msg/Float64MultiArray"](layout=layout, data=q)
                writer.write(cmd, ns + 5_000_000, store.serialize_cdr(command, cmd.msgtype))
            if k % 3 == 0:
                transform = types["geometry_msgs/msg/TransformStamped"](
                    header=header(ns, "world"), child_frame_id="base_link",
                    transform=types["geometry_msgs/msg/Transform"](
                        translation=vector(x=0.1 * t, y=0.0, z=0.5),
                        rotation=quat(x=0.0, y=0.0, z=math.sin(0.1 * t), w=math.cos(0.1 * t))))
                message = types["tf2_msgs/msg/TFMessage"](transforms=[transform])
                writer.write(tf, ns + 2_000_000, store.serialize_cdr(message, tf.msgtype))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1000.0, help="bag size to generate")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    folder = args.workdir or Path(tempfile.gettempdir()) / "motionkit-bench"
    folder.mkdir(parents=True, exist_ok=True)
    bag = generate(folder / f"joint_log_{args.mb:g}mb", args.mb)
    size = sum(item.stat().st_size for item in bag.iterdir())
    report = Report("bags", f"a {size / 1e9:.2f} GB ROS2 MCAP robot log (JointState, TF, "
                    "command) read and synchronised")
    candidates = {name: (lambda code=code: timed_process(
        [sys.executable, "-c", f"PATH = {str(bag)!r}; {code}"])) for name, code in WORK.items()}
    runs = interleaved(candidates, args.rounds)
    rows = []
    for name, found in runs.items():
        top = best(found)
        rows.append([name, f"{top.cpu:.1f}", span([r.wall for r in found], 1),
                     f"{size / 1e9 / top.wall * 60:.2f}", f"{max(r.peak_mb for r in found):.0f}"])
    report.table(["work", "CPU s (best)", "wall s (all rounds)", "GB/min (best wall)",
                  "peak MB"], rows)
    rates = [size / 1e9 / r.wall * 60 for r in runs["three topics, read + sync 30 Hz"]]
    report.row("bag → one 30 Hz clock (read + sync)", span(rates, unit=" GB/min"),
               "≥ 1 GB/min", min(rates) >= 1.0)
    report.finish()


if __name__ == "__main__":
    main()
