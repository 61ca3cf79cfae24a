"""Output paths checked before anything is written, and filesystem failures as one line.

A results_dir, report out= or compare markdown= that is a file, sits under a file, or cannot be
written used to surface as a traceback from deep inside a writer (after a sweep had measured
for minutes, in the case of results_dir). These checks run with the other input checks; a
failure is one ValueError line naming the key (the CLI exits 2).
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

# Filesystem states a user fixes (space, permissions, a read-only mount), not bugs.
FILESYSTEM_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS}


def _why(e: OSError) -> str:
    return (e.strerror or type(e).__name__).lower()


def _file_in_the_way(folder: Path) -> Path | None:
    """The file at `folder` or at one of its parents, which would make mkdir fail."""
    for at in (folder, *folder.parents):
        if at.exists():
            return None if at.is_dir() else at
    return None


def _make_writable(folder: Path) -> None:
    """Create `folder` if missing and write a probe file in it (os.access says yes to root on
    a read-only mount); raises OSError."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, probe = tempfile.mkstemp(prefix=".harness-probe-", dir=folder)
    os.close(fd)
    os.unlink(probe)


def writable_dir(key: str, path: str | Path) -> Path:
    """`path` as a folder this process can write (created if missing); raises ValueError."""
    folder = Path(path)
    allowed = "allowed: a folder you can write (an existing one or a new one)"
    blocker = _file_in_the_way(folder)
    if blocker is not None:
        raise ValueError(f"{key}: '{path}' is {_is_a_file(blocker, folder)}; {allowed}")
    try:
        _make_writable(folder)
    except OSError as e:
        raise ValueError(f"{key}: cannot write '{path}' ({_why(e)}); {allowed}") from None
    return folder


def writable_file(key: str, path: str | Path) -> Path:
    """`path` as a file this process can write (its folder created if missing)."""
    file = Path(path)
    allowed = "allowed: a file name in a folder you can write"
    if file.is_dir():
        raise ValueError(f"{key}: '{path}' is a folder; {allowed}")
    blocker = _file_in_the_way(file.parent)
    if blocker is not None:
        raise ValueError(f"{key}: '{path}' is {_is_a_file(blocker, file)}; {allowed}")
    try:
        _make_writable(file.parent)
    except OSError as e:
        raise ValueError(f"{key}: cannot write '{path}' ({_why(e)}); {allowed}") from None
    return file


def _is_a_file(blocker: Path, folder: Path) -> str:
    return "a file" if blocker == folder else f"under '{blocker}', a file"


def filesystem_error(e: OSError) -> str | None:
    """One line `<key>: <what>; allowed: ...` for a filesystem failure while writing, or None
    for any other OSError (a bug: its traceback is wanted)."""
    if e.errno not in FILESYSTEM_ERRNOS:
        return None
    where = f" writing '{e.filename}'" if e.filename else ""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"disk: {_why(e)}{where}; allowed: free space, or another results_dir= / out= "
            "(a run resumes where it stopped)"
        )
    return f"path: {_why(e)}{where}; allowed: a folder you can write (results_dir=, out=)"
