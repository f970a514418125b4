"""The package shows its architecture: sub-packages as layers, kept by import contracts a tool checks.

``make test`` runs ``lint-imports`` as a phase of its own; these tests hold the rest of the house rules
(and run the contracts too, so a lane that runs only pytest still catches a broken layer).
"""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "course"
MAX_LINES = 400


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_the_package_root_holds_only_the_entry_points_and_sub_packages():
    loose = sorted(p.name for p in PACKAGE.iterdir()
                   if p.is_file() and p.name not in ("__init__.py", "__main__.py", "cli.py"))
    assert loose == [], f"course/ holds files that belong in a sub-package: {loose}"
    for folder in (p for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert (folder / "__init__.py").is_file(), f"course/{folder.name}/ is not a package"


def test_every_sub_package_says_what_lives_there_and_what_it_may_use():
    for init in PACKAGE.rglob("__init__.py"):
        if init.parent == PACKAGE or init.parent.parent.name == "lessons":
            continue  # the root is the learners' two names; a lab's package declares its lesson
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        relative = init.relative_to(ROOT)
        assert doc, f"{relative} has no docstring"
        assert "May use" in doc or init.parent.name in ("grading", "audit", "lessons"), \
            f"{relative} does not say what it may use"


def test_no_module_is_past_400_lines_without_a_reason_in_its_docstring():
    for path in _modules():
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > MAX_LINES:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            assert "past 400 lines on purpose" in doc, \
                f"{path.relative_to(ROOT)} has {lines} lines and no reason for it in its docstring"


def test_every_lab_is_a_package_of_its_own():
    from course.lessons import MODULES

    for lab, name in MODULES.items():
        assert (PACKAGE / "lessons" / name / "__init__.py").is_file(), f"lab {lab} is not a package"
    assert not list((PACKAGE / "lessons").glob("lesson*.py")), "a lesson module outside its lab's package"


@pytest.mark.skipif(shutil.which("lint-imports", path=str(Path(sys.executable).parent)) is None,
                    reason="import-linter is not installed (pip install -e '.[test]')")
def test_the_import_contracts_hold():
    lint = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Contracts: 2 kept, 0 broken." in done.stdout
