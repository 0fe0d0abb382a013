"""Motion quality checks and contact labels (``motionkit check``).

``check(motion, skeleton)`` measures every check of a preset on a motion, over the
ground it stands on (a flat plane, or its terrain sampled PARC's way), and labels foot
contacts; :mod:`.presets` holds every constant (``protomotions`` reproduces ProtoMotions'
filters). A core package: it imports no format.
"""

from __future__ import annotations

from .check import check, contact_track, contact_velocity, local_angular_velocity
from .ground import Ground
from .presets import DEFAULT, PRESETS, PROTOMOTIONS, Preset
from .report import CheckReport, CheckResult

__all__ = ["DEFAULT", "PRESETS", "PROTOMOTIONS", "CheckReport", "CheckResult", "Ground", "Preset",
           "check", "contact_track", "contact_velocity", "local_angular_velocity"]
