"""Writing files whole or not at all: everything the package writes goes through here.

A file is written to a temporary name in its own folder and renamed onto its name once
complete (``os.replace``, atomic on one file system), so a full disk, a read-only folder or a
crash never leaves a partial or empty file under the name. A failure removes the temporary
file and raises :class:`OutputError` naming the path and the cause (the CLI exits 2).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from iosched.errors import OutputError


def _new_file(folder: Path, prefix: str, suffix: str) -> Path:
    """A new empty file in ``folder`` under a random name, of mode 0666 less the umask (as ``open(..., "w")``
    would make it: ``tempfile.mkstemp`` makes 0600, which left every result in a shared folder unreadable
    to the group whatever the umask). Never through a symlink, never over an existing file."""
    for _ in range(100):
        path = folder / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666))
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, f"no free temporary name in {folder}")


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffixes, so writers that go by the extension still
    do); renamed onto ``path`` when the block ends without an error, removed otherwise. The file gets
    the mode a plain write would (0666 less the umask)."""
    target = Path(path)
    folder = target.parent
    try:
        tmp = _new_file(folder, f".{target.name}.", ".tmp" + "".join(target.suffixes))
    except OSError as e:
        raise OutputError(f"cannot write {str(target)!r}: {e.strerror or e}") from None
    try:
        yield tmp
        os.replace(tmp, target)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"cannot write {str(target)!r}: {e.strerror or e}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str) -> Path:
    """``text`` (UTF-8) into ``path``, whole or not at all."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def save_figure(fig, path: str | Path, dpi: int = 120) -> Path:
    """A matplotlib figure into ``path`` (the format from its extension), whole or not at all."""
    target = Path(path)
    with atomic_path(target) as tmp:
        fig.savefig(tmp, dpi=dpi, format=target.suffix.lstrip(".").lower() or None)
    return target


def make_writable_folder(folder: str | Path) -> None:
    """Create ``folder`` (and its parents) and prove a file can be made in it; OSError if not
    (callers name the option it came from)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tempfile.TemporaryFile(dir=folder).close()


class NotRegularFile(OSError):
    """A path that is a FIFO, a device, a socket or a directory (or a symlink, where they are refused)."""


def read_regular(path: str | Path, max_bytes: int, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file ``path``, opened so that a FIFO cannot block (``O_NONBLOCK``, checked
    on the open file, so nothing can be swapped in between): NotRegularFile for anything else (a symlink too
    without ``follow_symlinks``), OverflowError past ``max_bytes``, OSError as opening raises it."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if not follow_symlinks and os.path.islink(path):
            raise NotRegularFile(f"{os.fspath(path)!r} is a symbolic link") from None
        raise e
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(f"{os.fspath(path)!r} is not a regular file")
        if info.st_size > max_bytes:
            raise OverflowError(f"{os.fspath(path)!r} is {info.st_size} bytes, more than {max_bytes}")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise OverflowError(f"{os.fspath(path)!r} is more than {max_bytes} bytes")
    return data
