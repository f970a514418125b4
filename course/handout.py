"""The learners' hand-out: ``course release --to DIR``.

Copies what a learner needs into DIR: the course package, ``labs/``,
``data/``, README, Makefile, pyproject.toml, environment.yml, LICENSE.
Never ``solutions/``, ``tests/`` (they hold the answers), CI files, virtual
environments or secret tests.  It refuses to run when ``labs/`` is out of date
with ``solutions/`` (the labs would not match the checks), and checks the
result: no solution markers, no solution notebooks, every lab present.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import course

INCLUDE = ("course", "labs", "data", "README.md", "Makefile", "pyproject.toml", "environment.yml",
           "LICENSE", ".gitignore")
LEFT_OUT = ("solutions", "tests", ".ci", ".git", ".venv")
MARKER = ".course-handout"


class HandoutError(RuntimeError):
    """The hand-out cannot be made; the message says why."""


@dataclass
class Handout:
    """What was written."""

    target: Path
    files: list[Path] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def repository_root() -> Path:
    """The folder holding the course package, its labs and pyproject.toml."""
    root = Path(course.__file__).resolve().parent.parent
    if not (root / "pyproject.toml").is_file() or not (root / "labs").is_dir():
        raise HandoutError(f"{root} is not a checkout of the course (no pyproject.toml and labs/)")
    return root


def _tracked(root: Path) -> list[Path] | None:
    try:
        done = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return [root / name for name in done.stdout.decode("utf-8", "replace").split("\0") if name]


def handout_files(root: Path) -> list[Path]:
    """The files (absolute) that go into the hand-out: tracked files (else all files) under :data:`INCLUDE`."""
    candidates = _tracked(root)
    if candidates is None:
        candidates = [p for p in root.rglob("*") if p.is_file()]
    chosen = []
    for path in candidates:
        relative = path.relative_to(root)
        if relative.parts[0] not in INCLUDE or "__pycache__" in relative.parts or not path.is_file():
            continue
        if relative.suffix in (".pyc", ".pyo"):
            continue
        chosen.append(path)
    return sorted(chosen)


def make_handout(target: Path, *, force: bool = False, root: Path | None = None) -> Handout:
    """Write the hand-out of ``root`` (default: this checkout) into ``target`` (new, empty, or an earlier hand-out with ``force``)."""
    from course.release import check, solution_notebooks

    root = Path(root).resolve() if root else repository_root()
    target = Path(target).resolve()
    if target == root or root in target.parents:
        raise HandoutError(f"{target} is inside the course checkout; choose a folder outside it")
    if target.exists() and any(target.iterdir()):
        if not (target / MARKER).exists():
            raise HandoutError(f"{target} is not empty (and is not an earlier hand-out); choose an empty folder")
        if not force:
            raise HandoutError(f"{target} holds an earlier hand-out; use --force to replace it")
        for child in target.iterdir():
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    if solution_notebooks(root / "solutions"):
        report = check(root / "solutions", root / "labs")
        if not report.ok:
            raise HandoutError("labs/ is out of date with solutions/ (run `course release` first): "
                               + "; ".join(report.differences + report.errors))
    files = handout_files(root)
    handout = Handout(target, left_out=[name for name in LEFT_OUT if (root / name).exists()])
    for source in files:
        destination = target / source.relative_to(root)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
        handout.files.append(destination)
    (target / MARKER).write_text(f"course {course.__version__} hand-out made by `course release --to`\n")
    problems = verify_handout(target, root)
    if problems:
        raise HandoutError("the hand-out is not safe to give out: " + "; ".join(problems))
    return handout


def verify_handout(target: Path, root: Path | None = None) -> list[str]:
    """What is wrong with a hand-out: solutions left in, labs missing (for ``root``'s solutions), no package."""
    from course.release import BEGIN, solution_notebooks

    problems = []
    for name in LEFT_OUT:
        if (target / name).exists():
            problems.append(f"{name}/ is in it")
    if not (target / "course" / "__init__.py").is_file() or not (target / "pyproject.toml").is_file():
        problems.append("the course package or pyproject.toml is missing")
    for solution in solution_notebooks(root / "solutions") if root else []:
        if not (target / "labs" / solution.name).is_file():
            problems.append(f"labs/{solution.name} is missing")
    for notebook in sorted((target / "labs").glob("*.ipynb")):
        if BEGIN in notebook.read_text(encoding="utf-8", errors="replace"):
            problems.append(f"labs/{notebook.name} still contains a solution block")
    return problems
