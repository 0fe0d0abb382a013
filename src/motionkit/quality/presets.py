"""The constants of each check, by preset. Every one is printed with the result it
decides (``motionkit check`` shows them all).

``protomotions`` is ProtoMotions' motion filter, self-penetration filter and contact rule
(spec containers-and-quality §7, NVlabs/ProtoMotions @607ca7a), on flat ground at z = 0:
the four filter rules in its order (the first failure decides), body origins only,
per-axis velocities, every third frame for self-penetration. ``default`` runs every
check, measures heights above the ground the motion stands on (its terrain where it has
one), uses the model's shapes for the lowest point and the feet, speeds as norms, and
adds foot skating, joint limits, quaternions and timing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

from ..errors import ConversionError, choices

#: Every check, in the order a report lists them.
CHECKS = ("below_ground", "body_speed", "joint_speed", "floating", "joint_limits",
          "foot_skating", "self_penetration", "quaternions", "timing")


@dataclass(frozen=True)
class Preset:
    """The constants of every check (metres, seconds, radians; speeds per second)."""

    name: str
    checks: tuple[str, ...]
    #: ProtoMotions' rule: heights are absolute z above a flat ground, body origins only,
    #: speeds as the largest component, floating against the clip's own lowest point
    protomotions: bool = False
    below_ground: float = -0.05
    body_speed: float = 15.0
    joint_speed: float = 40.0
    float_height: float = 0.2
    float_time: float = 1.0
    skate_height: float = 0.03
    skate_speed: float = 0.3
    skate_distance: float = 0.2
    contact_speed: float = 0.15
    contact_height: float = 0.1
    penetration_depth: float = 0.05
    penetration_soft: float = 0.03
    #: more than this many checked frames above ``penetration_soft`` fail (protomotions)
    penetration_soft_frames: int = 10
    #: or, without a frame count, for more than this long (s)
    penetration_soft_time: float = 1.0
    penetration_stride: int = 1
    #: shape pairs that already overlap at the rest pose are built so, not counted
    skip_rest_overlaps: bool = True
    #: the shape kinds checked for self-penetration (ProtoMotions knows spheres and capsules)
    penetration_shapes: tuple[str, ...] = ("sphere", "capsule", "cylinder", "box")
    limit_tolerance: float = 0.05
    quaternion_tolerance: float = 1e-4
    gap_factor: float = 1.5

    def with_options(self, **options: object) -> Preset:
        """This preset with some constants replaced (None leaves one as it is); every
        value is checked by :func:`_value` (one ConversionError naming the key)."""
        known = {f.name for f in fields(self)} - {"name", "checks", "protomotions",
                                                   "penetration_shapes"}
        for key in options:
            if key not in known:
                raise ConversionError(f"unknown check threshold {key!r} "
                                      f"({choices(key, sorted(known), 'thresholds')})")
        # typed per field by _value; replace() cannot see that through a dict
        changes: dict[str, Any] = {key: _value(key, getattr(self, key), value)
                   for key, value in options.items() if value is not None}
        return replace(self, **changes) if changes else self


#: The constants that may be negative (a depth below the ground); every other number is
#: a length, speed, time, count or ratio, and at least 0.
SIGNED = frozenset({"below_ground"})
#: The integers that must be at least 1 (a stride of 0 checks nothing).
POSITIVE = frozenset({"penetration_stride"})


def _value(key: str, current: object, value: object) -> float | int | bool:
    """``value`` as the type of the constant ``key`` holds (``current``'s): booleans only
    true or false, integers exactly, every number finite and in range."""
    where = f"check threshold {key}={value!r}"
    if isinstance(current, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ConversionError(f"{where}: expected true or false")
    number: float
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConversionError(f"{where}: expected a number")
    try:
        number = float(value)
    except ValueError:
        raise ConversionError(f"{where}: expected a number") from None
    if not math.isfinite(number):
        raise ConversionError(f"{where}: expected a finite number")
    if key not in SIGNED | POSITIVE and number < 0:
        raise ConversionError(f"{where}: expected a number >= 0")
    if isinstance(current, int):
        if not number.is_integer():
            raise ConversionError(f"{where}: expected a whole number")
        if key in POSITIVE and number < 1:
            raise ConversionError(f"{where}: expected a whole number >= 1")
        return int(number)
    return number

DEFAULT = Preset("default", CHECKS)
PROTOMOTIONS = Preset("protomotions", ("below_ground", "body_speed", "joint_speed", "floating",
                                       "self_penetration"),
                      protomotions=True, penetration_stride=3, skip_rest_overlaps=False,
                      penetration_shapes=("sphere", "capsule"))
PRESETS = {preset.name: preset for preset in (DEFAULT, PROTOMOTIONS)}


def preset(name: str | Preset) -> Preset:
    """The preset called ``name`` (a Preset as it is)."""
    if isinstance(name, Preset):
        return name
    if name not in PRESETS:
        raise ConversionError(f"unknown check preset {name!r} ({choices(name, PRESETS, 'presets')})")
    return PRESETS[name]
