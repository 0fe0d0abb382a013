"""File helpers shared by every format: atomic writes and safe whole-file reads."""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal, overload

from .errors import FormatError

PathLike = str | os.PathLike[str]


@overload
def atomic_write(
    path: PathLike, mode: Literal["wb"] = "wb"
) -> contextlib.AbstractContextManager[IO[bytes]]: ...
@overload
def atomic_write(path: PathLike, mode: Literal["w"]) -> contextlib.AbstractContextManager[IO[str]]: ...
def atomic_write(path: PathLike, mode: str = "wb") -> contextlib.AbstractContextManager[IO[Any]]:
    """Open a temporary file beside ``path``; rename it into place only on success.

    An exception inside the block removes the temporary file and leaves any existing
    ``path`` untouched, so readers never see a half-written file.
    """
    return _atomic(Path(path), mode)


@contextlib.contextmanager
def _atomic(target: Path, mode: str) -> Iterator[IO[Any]]:
    target = Path(os.path.realpath(target))  # write through a symlink, never replace it
    try:
        permissions: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        permissions = None
    handle_fd, tmp = _create_beside(target)
    try:
        encoding, newline = (None, None) if "b" in mode else ("utf-8", "\n")
        with os.fdopen(handle_fd, mode, encoding=encoding, newline=newline) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if permissions is not None:
            os.chmod(tmp, permissions)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _create_beside(target: Path) -> tuple[int, str]:
    """A new, exclusive temporary file in the target's folder, with the umask's permissions."""
    folder = target.parent
    for _ in range(100):
        tmp = folder / f".{target.name}.{secrets.token_hex(4)}.part"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), str(tmp)
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file in {folder}")


def open_binary(path: PathLike) -> io.BufferedReader:
    """Open a file for reading, turning OS errors into a FormatError that names the file."""
    try:
        return open(path, "rb")
    except IsADirectoryError:
        raise FormatError("is a folder, not a file", path) from None
    except FileNotFoundError:
        raise FormatError("no such file", path) from None
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", path) from None


def read_bytes(path: PathLike) -> bytes:
    """Read a whole file (OS errors become a FormatError that names the file)."""
    with open_binary(path) as handle:
        try:
            return handle.read()
        except OSError as exc:
            raise FormatError(f"cannot read: {exc.strerror or exc}", path) from None
