"""The check options a command takes, refused before any file is read: one line naming
the value, not one failure per file (``check``, ``fix`` and their batch verbs)."""

from __future__ import annotations

from ..model.motion import Motion
from ..model.skeleton import Skeleton
from .check import GroundSpec, resolve_ground
from .presets import Preset
from .presets import preset as find_preset
from .shapes import feet


def check_options(preset: str | Preset = "default", ground: GroundSpec = None,
                  skeleton: Skeleton | None = None, feet_names: tuple[str, ...] | None = None,
                  **thresholds: object) -> Preset:
    """The preset with the ``thresholds`` (``Preset.with_options``), after refusing a
    ``ground`` that is no height nor one of auto, terrain, hf, and foot bodies the
    ``skeleton`` (where given) does not have: a ConversionError each."""
    chosen = find_preset(preset).with_options(**thresholds)
    if ground not in (None, "auto", "terrain", "hf"):
        resolve_ground(Motion(), ground)  # a height, or the one line saying what it must be
    if feet_names and skeleton is not None:
        feet(skeleton, feet_names)
    return chosen
