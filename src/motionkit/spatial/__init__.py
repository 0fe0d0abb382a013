"""Rotation and frame helpers shared by every format (quaternions are x, y, z, w)."""
