"""Trajectory text formats: trajectopy ASCII, TUM, KITTI, EuRoC."""
