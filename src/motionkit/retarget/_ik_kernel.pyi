from typing_extensions import Buffer

BODY_INTS: int
BODY_DOUBLES: int
MAX_BODIES: int
MAX_NV: int
MAX_TASKS: int
MAX_REPEATS: int
DAMPING: float
LIMIT_GAIN: float
MAX_DAMPING: float
SMALL: float

def solve(ints: Buffer, doubles: Buffer, bodies: int, joints: int, motions: int, floating: bool,
          task_bodies: Buffer, weights: Buffer, targets: Buffer, tasks: int, lower: Buffer,
          upper: Buffer, posture: Buffer | None, posture_weight: float, min_drop: float,
          max_repeats: int, adaptive: bool, root_pos: Buffer, root_rot: Buffer, q: Buffer,
          out_pos: Buffer, out_rot: Buffer, out_q: Buffer, out_bodies: Buffer, out_axes: Buffer,
          out_anchors: Buffer) -> int: ...
