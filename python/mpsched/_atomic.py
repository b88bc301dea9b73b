"""Create a directory atomically: build it under a temporary name, then rename it into place."""

from __future__ import annotations

import os
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List, Union

__all__ = ["atomic_directory", "write_file_atomic"]


@contextmanager
def atomic_directory(dest: Union[str, "os.PathLike[str]"]) -> Iterator[Path]:
    """Yield an empty temporary directory that replaces ``dest`` when the block succeeds.

    The temporary directory is a hidden sibling of ``dest`` (same parent, so the final rename
    stays on one file system). If ``dest`` already exists it is swapped out and removed only
    after the new directory is in place. If the block raises, the temporary directory and any
    parent directories created for it are removed, and ``dest`` is untouched.
    """
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise NotADirectoryError(f"{dest}: exists and is not a directory")
    created = _make_parents(dest.parent)
    try:
        tmp = _make_unique_dir(dest.parent, f".{dest.name}.tmp-")
    except BaseException:
        _remove_empty(created)
        raise
    try:
        yield tmp
        _move_into_place(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_empty(created)
        raise


def _make_parents(parent: Path) -> List[Path]:
    """Create ``parent`` and its missing ancestors; return the ones created, outermost first."""
    missing = []
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    created = []
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:  # made meanwhile by someone else: not ours to remove
            continue
        created.append(d)
    return created


def _remove_empty(dirs: List[Path]) -> None:
    """Remove the directories in ``dirs`` that are still empty, innermost first."""
    for d in reversed(dirs):
        try:
            os.rmdir(d)
        except OSError:
            pass


def _make_unique_dir(parent: Path, prefix: str) -> Path:
    """Create a new directory ``parent/<prefix><random>`` with the usual (umask) permissions."""
    while True:
        path = parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            os.mkdir(path)  # mode 0o777 & ~umask, unlike tempfile.mkdtemp's 0o700
        except FileExistsError:
            continue
        return path


def _move_into_place(tmp: Path, dest: Path) -> None:
    """Rename ``tmp`` to ``dest``, swapping out (then deleting) an existing ``dest``."""
    if not dest.exists():
        os.replace(tmp, dest)
        return
    old = _make_unique_dir(dest.parent, f".{dest.name}.old-")
    os.replace(dest, old / dest.name)
    try:
        os.replace(tmp, dest)
    except BaseException:
        os.replace(old / dest.name, dest)
        os.rmdir(old)
        raise
    shutil.rmtree(old, ignore_errors=True)


def write_file_atomic(path: Union[str, "os.PathLike[str]"], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a hidden temporary sibling, then one rename.

    Readers see the old file or the complete new one; on failure nothing is left behind.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{secrets.token_hex(4)}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
