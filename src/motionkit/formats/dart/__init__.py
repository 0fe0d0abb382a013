"""DART: the ``.skel`` XML world/skeleton format."""
