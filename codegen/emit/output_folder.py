"""The output folder (`kiln build -o DIR`): written whole, and holding only what Kiln wrote.

Kiln replaces the folder as a whole so that a build never leaves old and new files mixed.
Since that deletes what was there, the folder must be new, empty, or exactly a previous Kiln
build: its manifest records every file Kiln wrote with its SHA-256 (`output_files`), and a
folder holding anything else — a user's notes, the model itself, a generated file edited
since — is refused with one line naming the first such file. Inputs of the build (the model,
the `--dump-ir` folder) may never lie inside the output.

Replacing: the new files are written into a hidden sibling folder, then swapped with the old
one in a single `renameat2(RENAME_EXCHANGE)` (Linux; `renamex_np(RENAME_SWAP)` on macOS), so
that DIR exists at every instant; only where the system has no atomic exchange are two renames
used. A lock file beside DIR (`.DIR.kiln-lock`) makes a second build into the same folder fail
at once with one line instead of racing the first. Hidden siblings left by an interrupted build
(`.DIR.kiln-new-*`, `.DIR.kiln-old-*`) are removed by the next build into DIR, or reported
when they cannot be.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from codegen.emit.render import write_generated
from codegen.errors import KilnError, os_error

RECORD = "output_files"  # manifest key: {file name: SHA-256 of its contents as written}
# Manifest key: folders the generated build files write into (a board project's `make` puts its
# objects and firmware in build/); derived products, replaced with the folder like `make clean`.
DERIVED = "output_build_folders"
_BUILD_FOLDER = "BUILD ?= build\n"  # templates/project/Makefile.j2
_NEW, _OLD = "kiln-new-", "kiln-old-"
_held: set[Path] = set()  # output folders this process holds the lock of


def _manifest_name(files) -> str | None:
    names = sorted(f for f in files if f.endswith(".manifest.json") and "/" not in f)
    return names[0] if names else None


def with_file_record(files: dict[str, str | bytes]) -> dict[str, str | bytes]:
    """`files` with the manifest listing every other file and its SHA-256 (what the next build
    may replace)."""
    manifest = _manifest_name(files)
    if manifest is None:
        return files
    record = {f: hashlib.sha256(c if isinstance(c, bytes) else c.encode()).hexdigest()
              for f, c in sorted(files.items()) if f != manifest}
    data = json.loads(files[manifest])
    data[RECORD] = record
    makefile = files.get("Makefile")
    if isinstance(makefile, str) and _BUILD_FOLDER in makefile:
        data[DERIVED] = ["build"]
    return {**files, manifest: json.dumps(data, indent=2, sort_keys=True) + "\n"}


def _recorded_files(out: Path, entries: list[Path]) -> tuple[Path, dict[str, str], list[str]] | None:
    """The manifest of a previous Kiln build among `entries`, its file record and build folders."""
    for p in sorted(entries):
        if not p.name.endswith(".manifest.json") or p.is_symlink() or not p.is_file():
            continue
        try:
            if p.stat().st_size > 64 << 20:
                continue
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "kiln_version" in data and isinstance(data.get(RECORD), dict):
            derived = data.get(DERIVED, [])
            return p, data[RECORD], [d for d in derived if isinstance(d, str)] if isinstance(derived, list) else []
    return None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_output_folder(out_dir: Path, inputs: tuple[Path, ...] = ()) -> None:
    """KilnError unless `out_dir` may be replaced: new, empty, or holding exactly the files a
    previous Kiln build recorded, unchanged; never a file, the current folder or a parent of
    it, nor a folder that holds an input of the build (`inputs`: model, --dump-ir folder)."""
    out = Path(out_dir).resolve()
    if out.exists() and not out.is_dir():
        raise KilnError(f"output '{out_dir}' is an existing file, not a folder")
    cwd = Path.cwd().resolve()
    if out == cwd or out in cwd.parents:
        raise KilnError(f"output folder '{out_dir}' is the current folder or contains it; Kiln replaces the "
                        "output folder as a whole: give a folder of its own (-o build/model)")
    for given in inputs:
        src = Path(given).resolve()
        if _inside(src, out):
            raise KilnError(f"output folder '{out_dir}' holds '{given}', an input of this build; Kiln replaces "
                            "the output folder as a whole: give a folder of its own (-o build/model)")
        if _inside(out, src) and src.is_dir():
            raise KilnError(f"output folder '{out_dir}' lies inside '{given}', an input folder of this build")
    if not out.exists():
        return
    try:
        entries = sorted(out.iterdir())
    except OSError as err:
        raise os_error(err, out_dir) from None
    if not entries:
        return
    found = _recorded_files(out, entries)
    if found is None:
        raise KilnError(f"output folder '{out_dir}' is not empty and holds no Kiln build (first file: "
                        f"'{entries[0].name}'); Kiln replaces the output folder as a whole: give a new or "
                        "empty folder")
    manifest, record, derived = found
    for p in entries:
        if p == manifest or (p.name in derived and p.is_dir() and not p.is_symlink()):
            continue
        if p.name not in record or p.is_symlink() or not p.is_file():
            raise KilnError(f"output folder '{out_dir}' holds '{p.name}', which Kiln did not write; Kiln "
                            "replaces only its own files: move it away or give another folder")
        try:
            changed = _sha256(p) != record[p.name]
        except OSError as err:
            raise os_error(err, p) from None
        if changed:
            raise KilnError(f"output folder '{out_dir}' holds '{p.name}', changed since Kiln wrote it; Kiln "
                            "replaces only its own files unchanged: move it away or give another folder")


@contextmanager
def output_lock(out_dir: Path) -> Iterator[None]:
    """Hold `.DIR.kiln-lock` beside the output folder for the whole build; KilnError at once if
    another build holds it. Reentrant within this process (the CLI holds it, write_output too)."""
    out = Path(out_dir).resolve()
    if out in _held:
        yield
        return
    _make_parent(out, out_dir)
    lock = out.parent / f".{out.name}.kiln-lock"
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as err:  # the lock is an implementation detail: name the folder asked for
            raise KilnError(f"cannot write output folder '{out_dir}' in '{out.parent}': "
                            f"{err.strerror or type(err).__name__}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise KilnError(f"another Kiln build is writing to output folder '{out_dir}' (it holds "
                                f"{lock.name}); wait for it to finish or give another folder") from None
            raise os_error(err, lock) from None
        try:  # the holder before us may have removed the file after we opened it: lock the current one
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    _held.add(out)
    try:
        yield
    finally:
        _held.discard(out)
        try:
            os.unlink(lock)
        except OSError:
            pass
        os.close(fd)


def _make_parent(out: Path, out_dir: Path) -> None:
    existing = next(p for p in out.parents if p.exists() or p == p.parent)
    if not existing.is_dir():
        raise KilnError(f"cannot create output folder '{out_dir}': '{existing}' is a file, not a folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise os_error(err, out.parent) from None


def _leftovers(out: Path) -> list[Path]:
    prefix = f".{out.name}."
    try:
        return sorted(p for p in out.parent.iterdir()
                      if p.name.startswith(prefix) and p.name[len(prefix):].startswith((_NEW, _OLD)))
    except OSError:
        return []


def _remove(folder: Path, notes: list[str]) -> None:
    failed: list[str] = []
    shutil.rmtree(folder, onerror=lambda fn, path, exc: failed.append(f"{path}: {exc[1]}"))
    if folder.exists():
        notes.append(f"could not remove '{folder}', left by replacing the output folder "
                     f"({failed[0] if failed else 'unknown cause'}); remove it by hand")


def write_output(files: dict[str, str | bytes], out_dir: Path, inputs: tuple[Path, ...] = ()) -> list[str]:
    """Write all files at once: into a hidden sibling folder first, then swapped into place.

    A failure at any point leaves `out_dir` as it was before the build. Returns notes for the
    user (leftovers that could not be removed), each one line.
    """
    notes: list[str] = []
    with output_lock(out_dir):
        check_output_folder(out_dir, inputs)
        out = Path(out_dir).resolve()
        for left in _leftovers(out):  # of an interrupted build: nobody else writes here (we hold the lock)
            _remove(left, notes)
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.{_NEW}", dir=out.parent))
        except OSError as err:
            raise os_error(err, out.parent) from None
        try:
            for fname, content in sorted(with_file_record(files).items()):
                try:
                    write_generated(tmp / fname, content)
                except OSError as err:
                    raise os_error(err, Path(out_dir) / fname) from None
            try:
                os.chmod(tmp, 0o755)
                _replace(tmp, out)
            except OSError as err:
                raise os_error(err, out_dir) from None
        except BaseException:
            _remove(tmp, notes)
            raise
        if tmp.exists():  # the exchange left the previous build here
            old = tmp.with_name(f".{out.name}.{_OLD}{tmp.name[-8:]}")
            try:
                os.rename(tmp, old)
            except OSError:
                old = tmp
            _remove(old, notes)
    return notes


def _replace(new: Path, out: Path) -> None:
    """Put folder `new` at `out`: created, or swapped with the old folder (left at `new`)."""
    if not out.exists():
        os.rename(new, out)
        return
    if _exchange(new, out):
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.{_OLD}", dir=out.parent))
    os.rmdir(old)
    os.rename(out, old)  # no atomic exchange on this system: a brief window without `out`
    try:
        os.rename(new, out)
    except OSError:
        os.rename(old, out)
        raise
    os.rename(old, new)


_RENAME_EXCHANGE = 2  # linux/fs.h
_RENAME_SWAP = 2  # macOS stdio.h


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically; False when the system or file system cannot."""
    libc = _libc()
    if libc is None:
        return False
    fn_at = getattr(libc, "renameat2", None)
    if fn_at is not None:
        at_fdcwd = -100
        rc = fn_at(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    elif sys.platform == "darwin" and getattr(libc, "renamex_np", None) is not None:
        rc = libc.renamex_np(os.fsencode(a), os.fsencode(b), _RENAME_SWAP)
    else:
        return False
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # e.g. a file system without exchange: fall back to two renames
    raise OSError(err, os.strerror(err), str(b))


_LIBC: list = []


def _libc():
    if not _LIBC:
        name = ctypes.util.find_library("c")
        try:
            _LIBC.append(ctypes.CDLL(name, use_errno=True) if name else None)
        except OSError:
            _LIBC.append(None)
    return _LIBC[0]
