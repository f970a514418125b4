"""The learner's work folder: their own copies of the labs, never overwritten by the course.

``make lab`` opens ``work/`` (git-ignored), not ``labs/``: each lab is copied
there the first time, and a lab the course adds later is copied when it first
appears.  A learner's answers live only in ``work/``, so ``git pull`` never
conflicts with them, ``make test`` keeps testing the course's own ``labs/``,
and no later run replaces a file the learner has.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class WorkFolder:
    """What :func:`fill_work_folder` did: the labs it copied and the ones it left as the learner has them."""

    path: Path
    copied: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line for the terminal."""
        parts = []
        if self.copied:
            parts.append(f"copied {', '.join(self.copied)}")
        if self.kept:
            parts.append(f"kept your {len(self.kept)} lab(s) as they are")
        return f"work folder {self.path}: " + ("; ".join(parts) or "no labs to copy")


def fill_work_folder(labs: Path, work: Path) -> WorkFolder:
    """Copy each ``labs/NN-*.ipynb`` that ``work`` does not have yet; never overwrite one it has."""
    work.mkdir(parents=True, exist_ok=True)
    result = WorkFolder(work)
    for lab in sorted(labs.glob("[0-9][0-9]-*.ipynb")):
        target = work / lab.name
        if target.exists() or target.is_symlink():
            result.kept.append(lab.name)
            continue
        partial = target.with_name(target.name + ".partial")
        shutil.copyfile(lab, partial)
        partial.replace(target)
        result.copied.append(lab.name)
    return result
