"""The learners' hand-out: ``course release --to DIR``: the lab, not the exam.

Copies what a learner needs into DIR: the course package, ``labs/``,
``data/``, a learner's README (:mod:`course.handout.readme`), Makefile, pyproject.toml,
environment.yml, LICENSE.
Never ``solutions/``, ``tests/`` (they hold the answers), the grader
(``course/grading/``), CI files, virtual environments or secret tests.  The
lesson modules go through :mod:`course.handout.withhold`: every hidden assertion
(and whatever only hidden assertions used) stays with the instructor; the
visible checks work as before.  ``graded=True`` (``--graded``) also blanks
every ``solution_code``, and ``solution()`` then says the solution is
withheld until after grading.  It refuses to run when ``labs/`` is out of
date with ``solutions/`` (the labs would not match the checks), and checks
the result (:mod:`course.handout.check`).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from course.engine.version import VERSION
from course.handout.contents import ENGINE, GRADER, INCLUDE, LEFT_OUT, LESSONS, MARKER
from course.handout.readme import learner_readme
from course.handout.withhold import Withheld, WithholdError, drop_unused, withhold, withhold_solution_method

_TEXT = (".py", ".ipynb", ".md", ".txt", ".json", ".toml", ".yml", ".cfg")


class HandoutError(RuntimeError):
    """The hand-out cannot be made; the message says why."""


@dataclass
class Handout:
    """What was written, and what was withheld from it."""

    target: Path
    files: list[Path] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    withheld: list[Withheld] = field(default_factory=list)  #: hidden assertions, helpers, solutions
    graded: bool = False


def repository_root() -> Path:
    """The folder holding the course package, its labs and pyproject.toml."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file() or not (root / "labs").is_dir():
        raise HandoutError(f"{root} is not a checkout of the course (no pyproject.toml and labs/)")
    return root


def _tracked(root: Path) -> list[Path] | None:
    try:
        done = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                               "--exclude-standard"], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return [root / name for name in done.stdout.decode("utf-8", "replace").split("\0") if name]


def handout_files(root: Path) -> list[Path]:
    """The files (absolute) that go into the hand-out: tracked files (else all files) under :data:`INCLUDE`.

    The grader (``course/grading/``) is never among them.
    """
    candidates = _tracked(root)
    if candidates is None:
        candidates = [p for p in root.rglob("*") if p.is_file()]
    chosen = []
    for path in candidates:
        relative = path.relative_to(root)
        if relative.parts[0] not in INCLUDE or "__pycache__" in relative.parts or not path.is_file():
            continue
        if relative.suffix in (".pyc", ".pyo") or relative.as_posix().startswith(GRADER + "/"):
            continue
        chosen.append(path)
    return sorted(chosen)


def make_handout(target: Path, *, force: bool = False, root: Path | None = None,
                 graded: bool = False) -> Handout:
    """Write the hand-out of ``root`` (default: this checkout) into ``target`` (new, empty, or an earlier hand-out with ``force``).

    ``graded``: also withhold every solution (``solution()`` says so).
    """
    from course.handout.check import verify_handout
    from course.handout.release import check, solution_notebooks

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
    handout = Handout(target, left_out=[name for name in LEFT_OUT if (root / name).exists()], graded=graded)
    texts = transformed_sources(root, files, graded, handout.withheld)
    for source in files:
        relative = source.relative_to(root).as_posix()
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        if relative in texts:
            destination.write_text(texts[relative], encoding="utf-8")
            shutil.copymode(source, destination)
        else:
            shutil.copy2(source, destination)
        handout.files.append(destination)
    if (root / "README.md").is_file():  # the learner's README, not the instructor's (course/handout/readme.py)
        (target / "README.md").write_text(learner_readme((root / "README.md").read_text(encoding="utf-8"),
                                                         graded=graded), encoding="utf-8")
    (target / MARKER).write_text(f"course {VERSION} hand-out made by `course release --to`"
                                 f"{' --graded' if graded else ''}\n")
    problems = verify_handout(target, root, withheld=handout.withheld, graded=graded)
    if problems:
        raise HandoutError("the hand-out is not safe to give out: " + "; ".join(problems))
    return handout


def transformed_sources(root: Path, files: list[Path], graded: bool, withheld: list[Withheld]) -> dict[str, str]:
    """Relative path -> hand-out text for the lesson modules (and, when ``graded``, the engine).

    Appends everything it takes out to ``withheld``.
    """
    lessons, others = {}, []
    for path in files:
        relative = path.relative_to(root).as_posix()
        if relative.startswith(LESSONS + "/") and path.suffix == ".py":
            try:
                lessons[relative], found = withhold(path.read_text(encoding="utf-8"), relative, graded=graded)
            except WithholdError as error:
                raise HandoutError(str(error)) from error
            withheld += found
        elif path.suffix in _TEXT:
            others.append(path.read_text(encoding="utf-8", errors="replace"))
    texts = drop_unused(lessons, others, withheld)
    if graded:
        try:
            texts[ENGINE] = withhold_solution_method((root / ENGINE).read_text(encoding="utf-8"), ENGINE)
        except (OSError, WithholdError) as error:
            raise HandoutError(f"cannot withhold the solutions: {error}") from error
    return texts


def learner_package_sources(root: Path) -> tuple[list[Path], list[Path]]:
    """What :func:`learner_package` is made from: the package's files (no bytecode), and the labs."""
    files = sorted(p for p in (root / "course").rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and p.suffix not in (".pyc", ".pyo"))
    labs = sorted((root / "labs").glob("*.ipynb")) if (root / "labs").is_dir() else []
    return files, labs


def learner_package(target: Path, *, root: Path | None = None) -> Path:
    """Write ``target/course``: this package as a learner's kernel may see it; return that folder.

    It is the instructor's package (the grader included: a sandboxed kernel
    runs its agent) with every hidden assertion, and what only they used,
    withheld exactly as in the hand-out, checked the same way.  Meant to be
    bound read-only over the package's own path inside a grading sandbox, so
    that the learner's code cannot read the hidden checks it is graded by.
    Raises :class:`HandoutError` when the result would not be safe.
    """
    from course.handout.check import probe_handout, withheld_left_in

    root = Path(root).resolve() if root else Path(__file__).resolve().parents[2]
    target = Path(target)
    package = target / "course"
    if package.exists():
        raise HandoutError(f"{package} already exists; choose a new folder")
    files, labs = learner_package_sources(root)
    withheld: list[Withheld] = []
    texts = transformed_sources(root, files + labs, False, withheld)
    for source in files:
        relative = source.relative_to(root).as_posix()
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        if relative in texts:
            destination.write_text(texts[relative], encoding="utf-8")
        else:
            shutil.copyfile(source, destination)
    problems = withheld_left_in(target, withheld) + probe_handout(target, graded=False)
    if problems:
        raise HandoutError("the learners' copy of the package is not safe: " + "; ".join(problems))
    return package
