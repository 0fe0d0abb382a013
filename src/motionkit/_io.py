"""File helpers shared by every format: atomic writes and safe whole-file reads."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal, overload

from .errors import ConversionError, FormatError, MotionkitError

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
    ``path`` untouched, so readers never see a half-written file. A symlink at ``path`` is
    replaced by the new file, never written through; a FIFO, device or folder there is
    refused (ConversionError); an OS error such as a full disk is a MotionkitError naming
    ``path``; temporaries left by killed writers are removed.
    """
    return _atomic(Path(path), mode)


#: Temporary files are ``.<target name>.<writer pid>.<random>.motionkit-tmp`` beside the
#: target, so a later write can recognise (and remove) what a killed writer left.
TMP_SUFFIX = ".motionkit-tmp"
#: When this process started writing files (module import): older temporaries whose
#: writer is gone are stale.
_STARTED = time.time()
_KIND = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
         stat.S_IFDIR: "a folder", stat.S_IFSOCK: "a socket"}


@contextlib.contextmanager
def _atomic(target: Path, mode: str) -> Iterator[IO[Any]]:
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        permissions: int | None = None
    except OSError as exc:
        raise _write_error(target, exc) from None
    else:
        if stat.S_ISLNK(info.st_mode):
            # the new file replaces the link itself: a link someone else left (in a shared
            # folder, say) never aims a write at a file of their choosing
            permissions = None
        elif not stat.S_ISREG(info.st_mode):
            kind = _KIND.get(stat.S_IFMT(info.st_mode), "a special file")
            raise ConversionError(f"{target}: is {kind}, not a regular file; refused "
                                  "(it would be replaced)")
        else:
            permissions = stat.S_IMODE(info.st_mode)
    remove_stale(target)
    try:
        handle_fd, tmp = _create_beside(target)
    except OSError as exc:
        raise _write_error(target, exc) from None
    try:
        encoding, newline = (None, None) if "b" in mode else ("utf-8", "\n")
        with os.fdopen(handle_fd, mode, encoding=encoding, newline=newline) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if permissions is not None:
            os.chmod(tmp, permissions)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # a full disk, a lost mount …: name the target
            raise _write_error(target, exc) from None
        raise


def _write_error(target: Path, exc: OSError) -> MotionkitError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return MotionkitError(f"cannot write {target}: {exc.strerror} (the disk or quota is "
                              "full); the old file, if any, is unchanged")
    return MotionkitError(f"cannot write {target}: {exc.strerror or exc}")


def _create_beside(target: Path) -> tuple[int, str]:
    """A new, exclusive temporary file in the target's folder, with the umask's permissions."""
    folder = target.parent
    for _ in range(100):
        tmp = folder / f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}{TMP_SUFFIX}"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), str(tmp)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"cannot create a temporary file in {folder}")


def remove_stale(target: Path, folders: bool = False) -> None:
    """Remove temporaries of ``target`` a killed writer left: older than this process and
    written by a process that is gone (a live writer's is never touched); files, or with
    ``folders`` the temporary folders of a folder writer (a dataset)."""
    prefix = f".{target.name}."
    try:
        names = [name for name in os.listdir(target.parent)
                 if name.startswith(prefix) and name.endswith(TMP_SUFFIX)]
    except OSError:
        return
    for name in names:
        pid_text = name[len(prefix):-len(TMP_SUFFIX)].split(".")[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        path = target.parent / name
        with contextlib.suppress(OSError):
            info = os.lstat(path)
            if info.st_mtime >= _STARTED:
                continue
            if folders and stat.S_ISDIR(info.st_mode):
                shutil.rmtree(path)
            elif not folders and stat.S_ISREG(info.st_mode):
                os.unlink(path)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def open_binary(path: PathLike) -> io.BufferedReader:
    """Open a regular file for reading (:func:`open_regular`: a FIFO, a device or a folder
    is one FormatError that names the file, never a hang or an endless read)."""
    return open_regular(path)


def read_bytes(path: PathLike, limit: int | None = None) -> bytes:
    """Read a whole regular file (:func:`open_regular`; OS errors become a FormatError
    that names the file).

    With ``limit``, a file of more than ``limit`` bytes is refused, and at most
    ``limit + 1`` bytes are read whatever the size said.
    """
    with open_regular(path, limit) as handle:
        try:
            data = handle.read() if limit is None else handle.read(limit + 1)
        except OSError as exc:
            raise FormatError(f"cannot read: {exc.strerror or exc}", path) from None
    if limit is not None and len(data) > limit:  # grew since fstat
        raise FormatError(f"larger than {limit:,} bytes; not read", path)
    return data


def open_regular(path: PathLike, limit: int | None = None) -> io.BufferedReader:
    """Open a regular file for reading (else a FormatError): opened without blocking and
    checked on its descriptor, so that a FIFO cannot hang the read nor a link to
    ``/dev/zero`` fill the memory; with ``limit``, one larger than ``limit`` bytes is
    refused."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise FormatError("no such file", path) from None
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", path) from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            kind = _KIND.get(stat.S_IFMT(info.st_mode), "a special file")
            raise FormatError(f"is {kind}, not a regular file; not read", path)
        if limit is not None and info.st_size > limit:
            raise FormatError(f"larger than {limit:,} bytes; not read", path)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def file_identity(path: PathLike) -> tuple[object, ...] | None:
    """What names one version of a file: its real path, device, inode, size and mtime
    (None when it cannot be looked up)."""
    try:
        real = os.path.realpath(path)
        info = os.stat(real)
    except (OSError, ValueError):
        return None
    return (real, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def sha256(path: Path) -> tuple[int, str]:
    """Size and SHA-256 (hex) of a file, read in blocks."""
    import hashlib  # here: a read that hashes nothing need not import it

    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()
