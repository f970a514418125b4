"""A class of 8 tiny lab-99 notebooks for the shard, merge, Slurm and export tests, and its unsharded grading.

The learners' names are chosen so that every shard of 3 and of 4 holds at least one of them.  The class is
graded once per test process without shards (:func:`unsharded`), the reference every merge is compared with.
:func:`course_env` is the environment in which a ``python -m course`` subprocess (a Slurm task) knows lab 99:
a ``sitecustomize`` registers it, as ``_install`` does in the tests' own process.
"""

from __future__ import annotations

import filecmp
import os
from pathlib import Path

import pytest

from support import fake_lesson, golden_class

LEARNERS = ("ann", "ben", "cat", "dan", "eve", "gus", "jon", "kim")
ARGUMENTS = ["--lab", "99", "--timeout", "20", "--memory-mb", "1024", "--grader-memory-mb", "2048"]
TESTS = Path(__file__).resolve().parents[1]
REPORTS = ("gradebook.csv", "totals.csv", "summary.md")
_UNSHARDED: dict[str, Path] = {}


def write_class(root: Path) -> Path:
    """Write the class under ``root / "class"``: right, wrong and not-attempted answers; return the folder."""
    from course.handout.notebooks import write_notebook

    submissions = Path(root) / "class"
    for number, learner in enumerate(LEARNERS):
        (submissions / learner).mkdir(parents=True)
        nb = golden_class.solution() if number % 3 else golden_class.lab_notebook()
        if number % 3 == 2:
            nb.cells[2].source = "total = 41"
        write_notebook(nb, submissions / learner / golden_class.NAME)
    return submissions


def install(patch: pytest.MonkeyPatch) -> None:
    """Lab 99 in this process and its kernels, the checks on mongomock (as tests/test_grading.py's ``_install``)."""
    from test_grading import _install

    _install(patch)
    patch.setenv("COURSE_BACKEND", "mongomock")


def grade_options():
    """The keyword arguments of :func:`course.grading.batch.grade_class` matching :data:`ARGUMENTS`."""
    from course.grading.runner import Limits

    return {"lab": "99", "jobs": 2, "sandbox": not fake_lesson.sandbox_arguments(),
            "limits": Limits(cell_timeout=20, memory_mb=1024, grader_memory_mb=2048)}


def unsharded(factory) -> tuple[Path, Path]:
    """(the class folder, the --out folder of its one unsharded run), made once per test process."""
    from course.grading.batch import grade_class

    if "out" not in _UNSHARDED:
        root = factory.mktemp("unsharded")
        submissions = write_class(root)
        with pytest.MonkeyPatch.context() as patch:
            install(patch)
            grade_class([submissions], root / "out", **grade_options())
        _UNSHARDED.update(out=root / "out", submissions=submissions)
    return _UNSHARDED["submissions"], _UNSHARDED["out"]


def differences(one: Path, two: Path) -> list[str]:
    """The report files (gradebook, totals, summary, feedback/) whose bytes differ between ``one`` and ``two``."""
    names = list(REPORTS) + sorted(f"feedback/{p.name}" for p in (Path(one) / "feedback").iterdir())
    names += [f"feedback/{p.name}" for p in (Path(two) / "feedback").iterdir() if f"feedback/{p.name}" not in names]
    return [name for name in names if not (Path(one, name).is_file() and Path(two, name).is_file()
                                           and _same(Path(one, name), Path(two, name)))]


#: how a run was carried out, not what it graded: the in-process reference run may say it, a Slurm task never
HOW_IT_RAN = "but in the grader's own process (this platform cannot fork one per notebook)"


def _same(one: Path, two: Path) -> bool:
    """The same bytes, apart from the line saying a run graded in the grader's own process."""
    if filecmp.cmp(one, two, shallow=False):
        return True
    def kept(path: Path) -> list[bytes]:
        return [line for line in path.read_bytes().splitlines() if HOW_IT_RAN.encode() not in line]
    return kept(one) == kept(two)


def course_env(folder: Path) -> dict[str, str]:
    """An environment in which ``python -m course`` registers lab 99 first (a sitecustomize in ``folder``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        "import os\nif os.environ.get('COURSE_TEST_FAKE_LAB') == '1':\n"
        "    import support.fake_lesson\n    support.fake_lesson.install()\n")
    path = os.pathsep.join([str(folder), str(TESTS), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {**os.environ, "PYTHONPATH": path, "COURSE_TEST_FAKE_LAB": "1",
            "COURSE_GRADE_KERNEL_PATH": fake_lesson.kernel_folder(), "COURSE_BACKEND": "mongomock"}
