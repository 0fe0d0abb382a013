"""Draw the pictures the documentation shows (``docs/img/``) from data generated here, so anyone can
regenerate them: ``.venv/bin/python examples/doc_images.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import motionkit as mk
from motionkit.plot import save
from motionkit.spatial.quaternion import from_rpy, multiply, rotate

IMAGES = Path(__file__).resolve().parents[1] / "docs" / "img"


def loop(seconds: float = 60.0, rate: float = 50.0) -> tuple[mk.Motion, mk.Motion]:
    """A figure-of-eight 'ground truth' and a drifting, noisy 'estimate' of it."""
    t = np.arange(0.0, seconds, 1 / rate)
    xyz = np.column_stack([10 * np.sin(0.2 * t), 6 * np.sin(0.4 * t), 0.5 * np.sin(0.1 * t)])
    yaw = np.unwrap(np.arctan2(np.gradient(xyz[:, 1]), np.gradient(xyz[:, 0])))
    quat = from_rpy(np.column_stack([0.05 * np.sin(t), 0.05 * np.cos(t), yaw]))
    rng = np.random.default_rng(3)
    drift = from_rpy(np.column_stack([np.zeros_like(t), np.zeros_like(t), 0.002 * t]))
    est_xyz = rotate(drift, xyz) * 1.01 + rng.normal(0, 0.01, xyz.shape)
    timeline = mk.Timeline.uniform(rate, len(t))
    truth = mk.Motion({"root": mk.Track("root", "pose", np.column_stack([xyz, quat]), timeline)},
                      meta={"name": "ground truth"})
    estimate = mk.Motion({"root": mk.Track("root", "pose", np.column_stack(
        [est_xyz, multiply(drift, quat)]), timeline)}, meta={"name": "estimate"})
    return truth, estimate


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    figure = mk.plot(*loop())
    print(f"wrote {save(figure, IMAGES / 'plot-trajectories.png', dpi=70)}")


if __name__ == "__main__":
    main()
