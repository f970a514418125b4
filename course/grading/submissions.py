"""Finding the notebooks to grade and whose they are."""

from __future__ import annotations

from pathlib import Path


class UsageError(ValueError):
    """The command line names something that cannot be graded at all."""


def _notebooks_in(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.ipynb") if p.is_file())


def _learner_folders(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir()
                  if p.is_dir() and not p.name.startswith(".") and p.name != "__pycache__")


def find_submissions(paths: list[str | Path]) -> list[tuple[str, Path]]:
    """Return (learner, notebook) pairs for the given files and directories, sorted.

    A file is one notebook whose learner is its stem.  A directory holds one
    sub-directory per learner (learner = sub-directory name) with that
    learner's notebooks; notebooks directly in it are learners named by stem.
    """
    found: list[tuple[str, Path]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append((path.stem, path))
        elif path.is_dir():
            found += [(nb.stem, nb) for nb in _notebooks_in(path)]
            for sub in _learner_folders(path):
                found += [(sub.name, nb) for nb in _notebooks_in(sub)]
        else:
            raise UsageError(f"{path}: no such file or directory")
    return sorted(set(found), key=lambda pair: (pair[0], str(pair[1])))


def find_empty(paths: list[str | Path]) -> tuple[list[tuple[str, Path]], list[Path]]:
    """Learner folders holding no notebook, as (learner, folder); and given folders with nothing to grade."""
    learners, folders = [], []
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            continue
        subs = _learner_folders(path)
        empty = [(sub.name, sub) for sub in subs if not _notebooks_in(sub)]
        learners += empty
        if not _notebooks_in(path) and len(empty) == len(subs):
            folders.append(path)
    return sorted(set(learners)), folders
