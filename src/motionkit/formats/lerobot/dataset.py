"""The ``lerobot`` format: a LeRobot v3.0 dataset folder, one Motion per episode (see
``read`` and ``write`` for the mapping; ``read_episodes`` and ``write_episodes`` take them
all at once)."""

from __future__ import annotations

from ...model import Motion
from ..registry import Loaded
from .read import claims, read, read_episodes
from .write import HOLDS, losses, write, write_episodes

__all__ = ["HOLDS", "claims", "describe", "losses", "read", "read_episodes", "write",
           "write_episodes"]


def describe(obj: Loaded) -> list[str]:
    """``info`` lines: which episode of how many, the features, what was not read (the task
    and robot type are metadata, which ``info`` shows anyway)."""
    own = obj.meta.get("lerobot") if isinstance(obj, Motion) else None
    if not isinstance(own, dict):
        return []
    lines = [f"episode {own.get('episode_index')} of {own.get('total_episodes')} "
             f"(episode=N reads another), {own.get('fps')} fps"]
    features = own.get("features")
    if isinstance(features, dict):
        lines.append("features: " + ", ".join(f"{name} {spec[1]}×{spec[0]}"
                                              for name, spec in features.items()))
    skipped = own.get("not_read")
    if isinstance(skipped, dict) and skipped:
        lines.append("not read (listed only): " + ", ".join(f"{name} ({dtype})"
                                                            for name, dtype in skipped.items()))
    return lines
