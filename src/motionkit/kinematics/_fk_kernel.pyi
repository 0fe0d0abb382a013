from typing_extensions import Buffer

INT_WIDTH: int
DOUBLE_WIDTH: int

def run(ints: Buffer, consts: Buffer, bodies: int, q: Buffer, dofs: int, stride: int,
        root: Buffer | None, given: Buffer | None, out: Buffer, start: int, stop: int) -> None: ...
