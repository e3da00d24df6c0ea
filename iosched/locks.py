"""An exclusive lock on a folder, for files that several processes update (the instance library).

Writing each file atomically (:mod:`iosched.files`) keeps every file whole, but two processes that
read, decide and write in turn can still interleave: both read the same best known, both write,
and the second process's solution file can land beside the first one's summary. A lock held over
the whole read-decide-write sequence serialises them. It is an advisory ``fcntl.flock`` on a
``.lock`` file in the folder: the kernel releases it when its holder exits, even by a crash, so a
killed process never leaves the folder locked. (``flock`` works between processes of one machine and
on most network file systems' local clients; it is not a cluster-wide lock.)
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from iosched.errors import OutputError, ParameterError

LOCK_NAME = ".lock"


@contextlib.contextmanager
def folder_lock(folder: str | Path, *, wait_s: float = 60.0, what: str = "iosched") -> Iterator[None]:
    """Hold the exclusive lock of ``folder`` for the block; wait up to ``wait_s`` seconds for it (0: do
    not wait). Another holder past the wait gives ParameterError naming it (the pid it wrote); a folder
    where the lock file cannot be made gives OutputError naming the path."""
    import fcntl

    path = Path(folder) / LOCK_NAME
    try:
        handle = open(path, "a+")
    except OSError as e:
        raise OutputError(f"cannot lock {str(folder)!r}: {e.strerror or e}") from None
    deadline = time.monotonic() + max(wait_s, 0.0)
    delay = 0.01
    try:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.seek(0)
                    holder = handle.read().strip() or "another process"
                    raise ParameterError(f"{folder} is in use by {holder} (waited {wait_s:g} s for its lock); "
                                         f"try again when it is done") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.2)
            except OSError as e:  # a file system without locks (ENOLCK)
                raise OutputError(f"cannot lock {str(folder)!r}: {e.strerror or e}") from None
        handle.seek(0)
        handle.truncate(0)
        handle.write(f"{what} (pid {os.getpid()})")
        handle.flush()
        yield
    finally:
        handle.close()  # closing the file releases the lock
