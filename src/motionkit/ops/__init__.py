"""Operations on motions: resampling, and many tracks on one clock (more to come: crop,
concatenate, velocities)."""

from .resample import METHODS, choreonoid_import, resample, resample_track, sample
from .sync import action_from_state, pieces, sync, with_action

__all__ = ["METHODS", "action_from_state", "choreonoid_import", "pieces", "resample",
           "resample_track", "sample", "sync", "with_action"]
