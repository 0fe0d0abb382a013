"""The neutral in-memory model every reader returns and every writer takes."""

from .character import Character
from .motion import STANDARD_TRACKS, Motion
from .motionlist import MotionEntry, MotionList
from .skeleton import Body, Joint, Skeleton, World
from .terrain import Terrain
from .timeline import Timeline
from .track import KIND_WIDTH, Track, TrackKind

__all__ = ["KIND_WIDTH", "STANDARD_TRACKS", "Body", "Character", "Joint", "Motion", "MotionEntry",
           "MotionList", "Skeleton", "Terrain", "Timeline", "Track", "TrackKind", "World"]
