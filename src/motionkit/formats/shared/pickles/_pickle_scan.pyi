from typing import Any

def scan(data: bytes | bytearray, start: int = 0, *, stop: int | None = None, origin: int = 0,
         allow_persistent: bool = False) -> int: ...
def configure(table: list[tuple[Any, ...] | None], roles: tuple[str, ...],
              limits: tuple[int, int, int, int, int, int, int, int],
              problem: type[Exception]) -> None: ...
