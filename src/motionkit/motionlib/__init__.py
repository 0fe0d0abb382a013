"""Frame sampling for training loops (PARC ``MotionLib`` semantics, NumPy; torch optional)."""

from .library import MotionFrames, MotionLib

__all__ = ["MotionFrames", "MotionLib"]
