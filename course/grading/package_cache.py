"""The learners' copy of the course package, made once per version of the course and kept.

Making it (:func:`course.handout.build.learner_package`: every hidden check and what
only they use withheld, then verified) takes seconds, and every ``course grade``
run needs it before its first sandbox starts.  It depends only on the files of
the package and the labs, so it is kept in the instructor's cache folder
(``$XDG_CACHE_HOME/course``, else ``~/.cache/course``), named by a SHA-256 of
those files, this Python's version and the course's version: any change to
the course makes a new one.  It is compiled to bytecode there as well, since a
sandbox sees it read-only and could not write its own.

No sandbox can see the cache folder (it binds only the Python installation,
the package copy itself and ``data/``, read-only).  A kernel run with
``--unsandboxed`` can, as it runs as the instructor: so each copy keeps a
manifest of its files' SHA-256 digests, and every run checks the copy
against it before any kernel starts; a copy that differs (a file changed,
added or removed) is made again, and the run says so (:data:`REPAIRED`).  A copy is made in a
private folder next to its final name and renamed into place whole, so runs
at once never see half of one; the oldest copies beyond :data:`KEPT` go.
"""

from __future__ import annotations

import compileall
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import course

KEPT = 4  #: copies of the package kept in the cache (one per version of the course)
COMPLETE = "complete"  #: written last, when the copy is whole and verified
MANIFEST = "manifest.json"  #: every file of the copy and its SHA-256
REPAIRED: list[str] = []  #: what this process found wrong with kept copies (and made again)


def cache_folder() -> Path:
    """Where the learners' package copies are kept."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "course" / "learner-package"


def inputs_digest(root: Path) -> str:
    """SHA-256 over everything the learners' copy is made from (see the module docstring)."""
    from course.handout.build import learner_package_sources

    digest = hashlib.sha256(f"{course.__version__}\0{sys.version}\0".encode())
    files, labs = learner_package_sources(root)
    for path in files + labs:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cached_learner_package(root: Path | None = None) -> Path:
    """The folder of the learners' ``course`` package for this checkout, made now if no copy is kept.

    Raises :class:`course.handout.build.HandoutError` when the copy would not be safe,
    and ``OSError`` when the cache folder cannot be written.
    """
    from course.handout.build import learner_package

    root = Path(root).resolve() if root else Path(course.__file__).resolve().parent.parent
    folder = cache_folder()
    final = folder / inputs_digest(root)[:32]
    if (final / COMPLETE).is_file():
        changed = differences(final)
        if not changed:
            os.utime(final)  # most recently used: kept longest
            return final / "course"
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        REPAIRED.append(f"the kept learners' package {final} did not match its manifest ({shown}); "
                        f"it was made again")
        shutil.rmtree(final)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    building = Path(tempfile.mkdtemp(prefix=".building-", dir=folder))
    try:
        package = learner_package(building, root=root)
        compileall.compile_dir(str(package), quiet=2, workers=1)
        (building / MANIFEST).write_text(json.dumps(_digests(building / "course"), sort_keys=True))
        (building / COMPLETE).write_text(f"course {course.__version__}\n")
        if final.exists() and not (final / COMPLETE).is_file():  # not one this module made whole
            shutil.rmtree(final)
        try:
            building.rename(final)
        except OSError:  # another run put the same copy in place first
            if not (final / COMPLETE).is_file():
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    _forget_old(folder, final)
    return final / "course"


def _digests(package: Path) -> dict[str, str]:
    """Every file below ``package`` (its path relative to the copy) and its SHA-256."""
    return {path.relative_to(package.parent).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(package.rglob("*")) if path.is_file() or path.is_symlink()}


def differences(copy: Path) -> list[str]:
    """The files of the kept ``copy`` that differ from its manifest (changed, added, removed); [] when none."""
    try:
        recorded = json.loads((copy / MANIFEST).read_text())
    except (OSError, ValueError):
        return [MANIFEST]
    try:
        found = _digests(copy / "course")
    except OSError as error:
        return [f"unreadable ({error})"]
    if not isinstance(recorded, dict):
        return [MANIFEST]
    return sorted(name for name in set(recorded) | set(found) if recorded.get(name) != found.get(name))


def _forget_old(folder: Path, keep: Path) -> None:
    import time

    for stale in folder.glob(".building-*"):  # a run that died while making its copy
        if time.time() - stale.stat().st_mtime > 3600:
            shutil.rmtree(stale, ignore_errors=True)
    copies = sorted((p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".") and p != keep),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    for old in copies[KEPT - 1:]:
        shutil.rmtree(old, ignore_errors=True)
