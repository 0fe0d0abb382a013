"""Operations on motions: resampling, and many tracks on one clock (more to come: crop,
concatenate, velocities)."""

from .resample import METHODS, choreonoid_import, resample, resample_track, sample
from .sync import sync

__all__ = ["METHODS", "choreonoid_import", "resample", "resample_track", "sample", "sync"]
