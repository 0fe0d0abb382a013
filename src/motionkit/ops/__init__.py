"""Operations on motions: resampling (more to come: crop, concatenate, velocities)."""

from .resample import METHODS, choreonoid_import, resample, resample_track, sample

__all__ = ["METHODS", "choreonoid_import", "resample", "resample_track", "sample"]
