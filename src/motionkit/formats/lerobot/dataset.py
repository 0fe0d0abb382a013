"""The ``lerobot`` format: a LeRobot v3.0 dataset folder, one Motion per episode (see
``read`` and ``write`` for the mapping; ``read_episodes`` and ``write_episodes`` take them
all at once; ``Frames`` gives ``LeRobotDataset[i]``'s items, with ``delta_timestamps``)."""

from __future__ import annotations

from typing import Any, cast

from ...model import Motion
from ..registry import Loaded
from .frames import Frames
from .read import claims, contents, read, read_episodes
from .write import HOLDS, losses, write, write_episodes

__all__ = ["HOLDS", "Frames", "claims", "contents", "dataset_contents", "describe", "losses", "read",
           "read_episodes", "write", "write_episodes"]


#: Episodes ``info`` lists one line each before "… N more".
SHOWN_EPISODES = 50


def dataset_contents(obj: Loaded) -> dict[str, object] | None:
    """``info --json``'s structured part: the episodes and features of the dataset an
    episode was read from (its metadata read again: nothing is kept per episode)."""
    own = obj.meta.get("lerobot") if isinstance(obj, Motion) else None
    source = own.get("dataset") if isinstance(own, dict) else None
    return contents(source) if isinstance(source, str) else None


def describe(obj: Loaded) -> list[str]:
    """``info`` lines: which episode was read, every episode (index, length, duration,
    task), every feature (dtype, shape, names) and what was not read."""
    own = obj.meta.get("lerobot") if isinstance(obj, Motion) else None
    found = dataset_contents(obj)
    if not isinstance(own, dict) or found is None:
        return []
    episodes = cast("list[dict[str, Any]]", found["episodes"])
    lines = [f"episode {own.get('episode_index')} of {len(episodes)} read (episode=N reads "
             f"another), {found['fps']} fps"]
    for episode in episodes[:SHOWN_EPISODES]:
        tasks = " | ".join(episode["tasks"])
        lines.append(f"  episode {episode['index']}: {episode['length']} frames, "
                     f"{episode['duration']:.6g} s, task {tasks!r}")
    if len(episodes) > SHOWN_EPISODES:
        lines.append(f"  … {len(episodes) - SHOWN_EPISODES} more episodes")
    skipped = []
    for feature in cast("list[dict[str, Any]]", found["features"]):
        if feature.get("read") is False:
            skipped.append(f"{feature['name']} ({feature['dtype']})")
            continue
        names = feature["names"]
        shown = (": " + ", ".join(names[:8]) + (" …" if len(names) > 8 else "")) if names else ""
        lines.append(f"feature {feature['name']}: {feature['dtype']} {feature['shape']}{shown}")
    if skipped:
        lines.append("not read (listed only): " + ", ".join(skipped))
    return lines
