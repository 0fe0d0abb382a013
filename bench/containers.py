"""Reading character-motion containers at 100,000+ frames, against the code users run today.

Run: ``.venv/bin/python bench/containers.py [frames] [rounds]``; its section goes to
bench/RESULTS.md with ``make bench``. Files are generated here (nothing licensed):

* AMASS SMPL+H (156 wide) through the corpus SMPL stand-in: motionkit.read with the
  character (ProtoMotions' mapping, vectorised) against the per-frame NumPy + SciPy loop
  that does the same mapping frame by frame (``Rotation.from_rotvec`` per frame, the
  re-framing by C, the reorder by name), as ProtoMotions' converter is written per motion;
* C3D: the corpus Vicon file's frames repeated past 100,000 (header count saturated, as
  real long files are), motionkit.read against ezc3d and c3d where installed;
* Isaac Lab AMP: motionkit.read against what Isaac Lab's ``MotionLoader.__init__`` does
  (``np.load``, then one float32 tensor per array: ``torch.tensor`` where torch is
  installed, else a float32 NumPy copy, the same memory copy on the CPU). The loader has
  no per-frame conversion (its sampling is vectorised), so there is no 10× to win: the
  goal recorded is motionkit's overhead, at most 2× that load.

CPU seconds of this process (wall beside), best of ``rounds`` interleaved rounds.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _report import Report, Timing, best, interleaved, timed
from scipy.spatial.transform import Rotation

import motionkit as mk
from motionkit.formats.containers import amass

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "containers"


def make_amass(path: Path, frames: int) -> None:
    rng = np.random.default_rng(0)
    np.savez(path, poses=rng.normal(scale=0.3, size=(frames, 156)),
             trans=rng.normal(size=(frames, 3)), betas=np.zeros(16),
             gender=np.array(b"female"), mocap_framerate=np.array(120.0))


def amass_per_frame(path: Path, standin: Path) -> object:
    """The mapping one frame at a time (NumPy + SciPy), as per-motion converter loops run."""
    data = np.load(path)
    poses, trans = data["poses"], data["trans"]
    char = mk.read(standin)
    names = [body.name for body in char.bodies]
    layout = amass.LAYOUTS["smplh"]
    index = [layout.index(name) if name in layout else -1 for name in names]
    reframe = Rotation.from_quat([-0.5, -0.5, -0.5, 0.5])
    out = np.empty((len(poses), len(names), 4))
    for frame in range(len(poses)):
        rot = Rotation.from_rotvec(poses[frame].reshape(-1, 3))
        quats = rot.as_quat()
        local = np.array([quats[i] if i >= 0 else [0, 0, 0, 1] for i in index])
        local = (reframe.inv() * Rotation.from_quat(local) * reframe).as_quat()
        local[0] = (rot[0] * reframe).as_quat()
        out[frame] = local
    return out, trans


def make_c3d_short(path: Path) -> int:
    """The Vicon file's frames repeated to 64,960 (112 × 580): within the header's 16-bit
    count (and POINT:FRAMES, TRIAL:ACTUAL_END_FIELD saying the same), so that every reader
    reads them all."""
    data = bytearray((CORPUS / "c3d" / "Vicon.c3d").read_bytes())
    start = (int.from_bytes(data[16:18], "little") - 1) * 512
    total = 112 * 580
    data[8:10] = total.to_bytes(2, "little")
    name = data.find(b"ACTUAL_END_FIELD", (data[0] - 1) * 512)
    at = name + len("ACTUAL_END_FIELD") + 2
    values = at + 2 + data[at + 1]
    data[values:values + 4] = total.to_bytes(2, "little") + b"\0\0"
    frames_at = data.find(b"\x06\x03FRAMES", (data[0] - 1) * 512) + 2 + 6 + 2  # POINT:FRAMES
    assert data[frames_at:frames_at + 2] == b"\x02\x00"  # int16, no dimensions
    data[frames_at + 2:frames_at + 4] = total.to_bytes(2, "little")
    path.write_bytes(bytes(data[:start]) + bytes(data[start:]) * 112)
    return total


def make_c3d(path: Path, frames: int) -> int:
    """The Vicon file with its frames repeated to at least ``frames``: the header's 16-bit
    count full, the 32-bit ``TRIAL:ACTUAL_END_FIELD`` telling the real count (as long
    recordings are written)."""
    data = bytearray((CORPUS / "c3d" / "Vicon.c3d").read_bytes())
    start = (int.from_bytes(data[16:18], "little") - 1) * 512
    body = bytes(data[start:])
    repeats = -(-frames // 580)
    total = repeats * 580
    data[8:10] = (0xFFFF).to_bytes(2, "little")
    name = data.find(b"ACTUAL_END_FIELD", (data[0] - 1) * 512)
    at = name + len("ACTUAL_END_FIELD") + 2  # then type, ndims, dims, values
    values = at + 2 + data[at + 1]
    data[values:values + 4] = (total % 65536).to_bytes(2, "little") + \
        (total // 65536).to_bytes(2, "little")
    path.write_bytes(bytes(data[:start]) + body * repeats)
    return total


def make_amp(path: Path, frames: int) -> None:
    source = np.load(CORPUS / "isaaclab" / "humanoid_run.npz")
    reps = -(-frames // 82)
    arrays = {key: (np.tile(value, (reps,) + (1,) * (value.ndim - 1))
                    if key not in ("fps", "dof_names", "body_names") else value)
              for key, value in source.items()}
    np.savez(path, **arrays)


def _motion_loader(report: Report) -> Callable[[Path], object]:
    """Isaac Lab's MotionLoader.__init__ without the class: np.load, names as lists, one
    float32 tensor per numeric array."""
    keys = ("dof_positions", "dof_velocities", "body_positions", "body_rotations",
            "body_linear_velocities", "body_angular_velocities")
    if importlib.util.find_spec("torch"):
        import torch
        report.peer("torch", f"{torch.__version__} torch.tensor(array, dtype=float32), CPU")

        def tensor(array: np.ndarray) -> object:
            return torch.tensor(array, dtype=torch.float32)
    else:
        report.note("torch is not installed: the loader's tensors are float32 NumPy copies "
                    "(torch.tensor on the CPU copies the same bytes).")

        def tensor(array: np.ndarray) -> object:
            return np.array(array, dtype=np.float32)

    def load(path: Path) -> object:
        data = np.load(path)
        return (data["dof_names"].tolist(), data["body_names"].tolist(),
                [tensor(data[key]) for key in keys], 1.0 / data["fps"])
    return load


def _c3d_readers(report: Report, path: Path,
                 count: int) -> tuple[dict[str, Callable[[], Timing]], list[str]]:
    """motionkit and the peers that are installed and read all ``count`` frames."""
    readers: dict[str, Callable[[], Timing]] = {
        "motionkit.read": lambda: timed(lambda: mk.read(path))}
    peers = []
    if importlib.util.find_spec("ezc3d"):
        import ezc3d
        report.peer("ezc3d", f"{getattr(ezc3d, '__version__', '1.7.2')} ezc3d.c3d(path)")
        got = ezc3d.c3d(str(path))["data"]["points"].shape[2]
        if got == count:
            readers["ezc3d"] = lambda: timed(lambda: ezc3d.c3d(str(path)))
            peers.append("ezc3d")
        else:
            report.note(f"ezc3d reads {got} of the {count} frames (it takes POINT:FRAMES, an int16 that "
                        "cannot hold this count): not timed there.")
    if importlib.util.find_spec("c3d"):
        import c3d
        report.peer("c3d", "0.6.0 Reader(handle).read_frames(), every frame kept")

        def with_c3d() -> object:
            with open(path, "rb") as handle:
                return list(c3d.Reader(handle).read_frames(copy=True))
        readers["c3d"] = lambda: timed(with_c3d)
        peers.append("c3d")
    return readers, peers


def rows(report: Report, work: str, runs: dict[str, list[Timing]], ours: str,
         theirs: list[str], goal: float | None) -> None:
    mine = best(runs[ours])
    for name in theirs:
        other = best(runs[name])
        ratio = other.cpu / mine.cpu
        report.row(f"{work}: {ours} vs {name}", f"CPU {mine.cpu:.3f} s vs {other.cpu:.3f} s "
                   f"= {ratio:.1f}× (wall {mine.wall:.3f} s vs {other.wall:.3f} s)",
                   f"≥ {goal:g}×" if goal else "none", ratio >= goal if goal else None)


def main() -> None:
    frames = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    report = Report("containers", "AMASS, C3D and AMP reading at 100k+ frames")
    standin = CORPUS / "amass" / "smpl_topology_standin.xml"
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        make_amass(base / "a.npz", frames)
        amass_runs = interleaved({
            "motionkit.read": lambda: timed(lambda: mk.read(base / "a.npz", character=standin)),
            "per-frame NumPy+SciPy": lambda: timed(lambda: amass_per_frame(base / "a.npz",
                                                                           standin))}, rounds)
        rows(report, f"AMASS {frames} frames through the SMPL stand-in", amass_runs,
             "motionkit.read", ["per-frame NumPy+SciPy"], 10)
        files = {"within the 16-bit count": base / "v1.c3d",
                 "past it (TRIAL:ACTUAL_END_FIELD)": base / "v2.c3d"}
        counts = [make_c3d_short(files["within the 16-bit count"]),
                  make_c3d(files["past it (TRIAL:ACTUAL_END_FIELD)"], frames)]
        for (label, path), count in zip(files.items(), counts, strict=True):
            readers, peers = _c3d_readers(report, path, count)
            c3d_runs = interleaved(readers, rounds)
            rows(report, f"C3D {count} frames × 51 markers + 38 analog, {label}", c3d_runs,
                 "motionkit.read", peers, 10)
            if not peers:
                report.row(f"C3D {count} frames: motionkit.read",
                           f"{best(c3d_runs['motionkit.read']).cpu:.3f} s", "≥ 10× ezc3d / c3d",
                           None)
        make_amp(base / "m.npz", frames)
        loader = _motion_loader(report)
        amp_runs = interleaved({
            "motionkit.read": lambda: timed(lambda: mk.read(base / "m.npz")),
            "MotionLoader's load": lambda: timed(lambda: loader(base / "m.npz"))}, rounds)
        mine, theirs = best(amp_runs["motionkit.read"]), best(amp_runs["MotionLoader's load"])
        report.row(f"AMP {frames}+ frames: motionkit.read vs MotionLoader's load",
                   f"CPU {mine.cpu:.3f} s vs {theirs.cpu:.3f} s = {mine.cpu / theirs.cpu:.2f}× "
                   f"its time (wall {mine.wall:.3f} s vs {theirs.wall:.3f} s)",
                   "≤ 2× its time", mine.cpu <= 2 * theirs.cpu)
    report.note("AMP: the loader is np.load and a tensor copy; motionkit adds the checks "
                "(finite numbers, shapes, names), the float64 tracks and the w x y z → "
                "x y z w reorder, so the goal is an overhead bound, not a speed-up.")
    report.finish()


if __name__ == "__main__":
    main()
