"""MuJoCo MJCF models: read any model, write one."""
