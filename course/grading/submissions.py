"""Finding the notebooks to grade and whose they are.

A path on the command line is a notebook file (its learner is the file's
stem) or a class folder: notebooks directly in it are learners named by stem,
and each sub-folder is a learner holding that learner's notebooks.

Nothing in a class folder is taken on trust (:func:`scan`):

* a symbolic link that leads out of the class folder is never followed (the
  grader must not read the instructor's files through a learner's link), and
  a learner folder or notebook whose name starts with ``.`` is not graded;
  neither is dropped silently: the learner gets an error row saying why, or,
  when the learner's folder holds other notebooks, a run message names the
  file (an extra error row would count that lab twice in the learner's
  total); only the folders tools make, such as ``.ipynb_checkpoints``, are
  skipped without a word;
* a link that stays inside the class folder is graded and reported (it may be
  one learner handing in another's file);
* ``--out`` inside a class folder (or a class folder inside ``--out``) is
  refused by :func:`check_out_location`, before anyone is graded.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

#: folders that tools create inside a class folder; never learners, skipped without a word
TOOL_FOLDERS = frozenset({".ipynb_checkpoints", "__pycache__", ".git", ".DS_Store", "__MACOSX", ".Trash"})


class UsageError(ValueError):
    """The command line names something that cannot be graded at all."""


@dataclass
class Found:
    """What :func:`scan` found in the paths it was given."""

    submissions: list[tuple[str, Path]] = field(default_factory=list)  #: (learner, notebook) to grade
    empty: list[tuple[str, Path]] = field(default_factory=list)  #: (learner, folder) with no notebook
    refused: list[tuple[str, Path, str]] = field(default_factory=list)  #: (learner, path, why): error rows
    messages: list[str] = field(default_factory=list)  #: run-level notes for the instructor


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):  # a dangling link or a loop
        return None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _entries(directory: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(directory) as listing:
            return sorted(listing, key=lambda entry: entry.name)
    except OSError as error:
        raise UsageError(f"{directory}: cannot be listed ({error.strerror or error})") from error


def _is_notebook_name(name: str) -> bool:
    return name.endswith(".ipynb") and name != ".ipynb"


class _Scan:
    """One walk over one class folder, filling a :class:`Found`."""

    def __init__(self, root: Path, found: Found):
        self.root = root
        self.real_root = _resolved(root) or root.absolute()
        self.found = found

    def follow(self, entry: os.DirEntry, learner: str, problems: list[tuple[Path, str]]) -> Path | None:
        """The path to use for ``entry`` (a link only when it stays inside the class folder), or None.

        Why an entry is not used goes to ``problems`` as (path, reason).
        """
        path = Path(entry.path)
        if not entry.is_symlink():
            return path
        target = _resolved(path)
        if target is None:
            problems.append((path, f"{self._shown(path)} is a symbolic link that leads nowhere; it was not graded"))
            return None
        if not _inside(target, self.real_root):
            problems.append((path, f"{self._shown(path)} is a symbolic link to a place outside the class "
                                   f"folder; links out of it are never followed, so it was not graded (copy "
                                   f"the file in instead)"))
            return None
        self.found.messages.append(f"{self._shown(path)} is a symbolic link to "
                                   f"{target.relative_to(self.real_root)} in the class folder: it was "
                                   f"graded as {learner}'s, check that it is theirs")
        return path

    def _shown(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def notebooks_in(self, folder: Path, learner: str | None,
                     ) -> tuple[list[tuple[str, Path]], list[tuple[str, Path, str]]]:
        """The notebooks directly in ``folder`` as (learner, path), and those not used as (learner, path, why).

        The learner is ``learner``, or each notebook's stem when it is None.
        """
        chosen, refused = [], []
        for entry in _entries(folder):
            if not _is_notebook_name(entry.name):
                continue
            owner = learner if learner is not None else entry.name[: -len(".ipynb")]
            problems: list[tuple[Path, str]] = []
            if entry.name.startswith("."):
                problems.append((Path(entry.path), f"{self._shown(Path(entry.path))}: the file name starts with "
                                                   f"'.', which hides it; it was not graded (rename it without "
                                                   f"the dot to grade it)"))
                path = None
            else:
                path = self.follow(entry, owner, problems)
            info = None
            if path is not None:
                try:
                    info = path.stat()
                except OSError as error:
                    problems.append((path, f"{self._shown(path)} cannot be read ({error.strerror or error})"))
            if info is not None and not stat.S_ISREG(info.st_mode):
                problems.append((path, f"{self._shown(path)} is not a regular file; it was not graded"))
            elif info is not None:
                if info.st_nlink > 1:
                    self.found.messages.append(f"{self._shown(path)} has {info.st_nlink} hard links (the same "
                                               f"file is elsewhere too): check that it is {owner}'s")
                chosen.append((owner, path))
            refused += [(owner, where, why) for where, why in problems]
        return chosen, refused

    def run(self) -> bool:
        """Walk the class folder; True when it held a notebook to grade or to refuse.

        A notebook not used in a learner folder that holds other notebooks is a
        run message (an extra error row would count that lab twice in the
        learner's total); in a folder holding nothing else it is an error row.
        """
        chosen, refused = self.notebooks_in(self.root, None)
        self.found.submissions += chosen
        self.found.refused += refused
        found_any = bool(chosen or refused)
        for entry in _entries(self.root):
            if entry.name in TOOL_FOLDERS or _is_notebook_name(entry.name):
                continue
            try:
                is_folder = entry.is_dir()  # follows a link, to tell a folder from a file
            except OSError:
                continue
            if not is_folder:
                continue
            learner = entry.name
            if learner.startswith("."):
                self.found.refused.append((learner, Path(entry.path), (
                    f"the learner folder {learner}/ starts with '.', which hides it; it was not graded "
                    f"(rename it without the dot to grade it)")))
                found_any = True
                continue
            problems: list[tuple[Path, str]] = []
            folder = self.follow(entry, learner, problems)
            if folder is None:
                self.found.refused += [(learner, where, why) for where, why in problems]
                found_any = True
                continue
            chosen, refused = self.notebooks_in(folder, learner)
            if chosen:
                self.found.submissions += chosen
                self.found.messages += [f"{learner}: {why}" for _, _, why in refused]
            elif refused:
                self.found.refused += refused
            else:
                self.found.empty.append((learner, folder))
            found_any = found_any or bool(chosen or refused)
        return found_any


def scan(paths: list[str | Path]) -> Found:
    """Find every submission in ``paths`` (files and class folders), with what was refused and why.

    Raises :class:`UsageError` when a path does not exist.
    """
    found = Found()
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.submissions.append((path.stem, path))  # named by the instructor: taken as it is
        elif path.is_dir():
            if not _Scan(path, found).run():
                found.messages.append(f"nothing to grade in {path}: it holds no notebooks and no learner "
                                      f"folders with notebooks")
        else:
            raise UsageError(f"{path}: no such file or directory")
    found.submissions = sorted(set(found.submissions), key=lambda pair: (pair[0], str(pair[1])))
    found.empty = sorted(set(found.empty))
    found.refused = sorted(set(found.refused), key=lambda item: (item[0], str(item[1])))
    return found


def check_out_location(out: str | Path, paths: list[str | Path]) -> None:
    """Refuse an ``--out`` folder inside a class folder (or holding one): the next run would grade it.

    Raises :class:`UsageError` naming both.
    """
    target = Path(out).resolve()
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            continue
        folder = path.resolve()
        if _inside(target, folder):
            raise UsageError(f"--out {out} is inside the class folder {raw}: its graded/, feedback/ and "
                             f"results/ would be taken for learners on the next run; choose a folder "
                             f"outside it")
        if _inside(folder, target):
            raise UsageError(f"the class folder {raw} is inside --out {out}: choose an --out folder that "
                             f"does not hold the submissions")


def find_submissions(paths: list[str | Path]) -> list[tuple[str, Path]]:
    """Return (learner, notebook) pairs for the given files and directories, sorted (see :func:`scan`)."""
    return scan(paths).submissions


def find_empty(paths: list[str | Path]) -> tuple[list[tuple[str, Path]], list[Path]]:
    """Learner folders holding no notebook, as (learner, folder); and given folders with nothing to grade."""
    found = scan(paths)
    folders = [Path(raw) for raw in paths if Path(raw).is_dir()
               and any(m.startswith(f"nothing to grade in {Path(raw)}:") for m in found.messages)]
    return found.empty, folders
