"""Checking a learners' hand-out before anyone gets it (see :mod:`course.handout.build`).

:func:`verify_handout` lists what is wrong: solutions, tests or the grader
left in, a lab missing, a solution block in a lab, the text of any withheld
hidden assertion or helper anywhere in it; and, in a fresh interpreter in
isolated mode importing the hand-out's own package, a lesson that does not
import, a hidden assertion that still has a body, or (graded) a solution
that is not withheld.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from course.handout.contents import LEFT_OUT
from course.handout.withhold import STUB_PREFIX, WITHHELD_SOLUTION, Withheld

_SEARCHED = (".py", ".ipynb", ".md", ".txt", ".json", ".cfg", ".toml", ".yml")


def verify_handout(target: Path, root: Path | None = None, *, withheld: list[Withheld] = (),
                   graded: bool = False) -> list[str]:
    """What is wrong with a hand-out: solutions or grader left in, labs missing, withheld code left in."""
    from course.handout.release import BEGIN, solution_notebooks

    target = Path(target)
    problems = [f"{name}/ is in it" for name in LEFT_OUT if (target / name).exists()]
    if not (target / "course" / "__init__.py").is_file() or not (target / "pyproject.toml").is_file():
        problems.append("the course package or pyproject.toml is missing")
    for solution in solution_notebooks(root / "solutions") if root else []:
        if not (target / "labs" / solution.name).is_file():
            problems.append(f"labs/{solution.name} is missing")
    for notebook in sorted((target / "labs").glob("*.ipynb")):
        if BEGIN in notebook.read_text(encoding="utf-8", errors="replace"):
            problems.append(f"labs/{notebook.name} still contains a solution block")
    problems += withheld_left_in(target, withheld)
    if (target / "course" / "lessons").is_dir():
        problems += probe_handout(target, graded)
    return problems


def withheld_left_in(target: Path, withheld: list[Withheld]) -> list[str]:
    """Where under ``target`` the code of something withheld still is (any text file, any indent)."""
    texts = {p: flattened(searchable_text(p)) for p in sorted(Path(target).rglob("*"))
             if p.is_file() and p.suffix in _SEARCHED}
    problems = []
    for item in withheld:
        body = statements(item.source)
        leaked = [p.relative_to(target).as_posix() for p, text in texts.items() if body and body in text]
        if leaked:
            problems.append(f"{item.kind} {item.name} is still in {', '.join(leaked)}")
    return problems


def searchable_text(path: Path) -> str:
    """A file's text as code would appear in it: a notebook's cell sources, else the file itself."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            cells = json.loads(text).get("cells", [])
            return "\n".join("".join(c.get("source", "")) for c in cells if isinstance(c, dict)) + "\n" + text
        except (ValueError, AttributeError, TypeError):
            return text
    return text


def statements(source: str) -> str:
    """The code of a withheld definition, its decorators, ``def`` line and docstring left out.

    For an assignment (a helper constant, a ``solution_code``) it is the text as it was.
    """
    text = textwrap.dedent(source)
    try:
        node = ast.parse(text).body[0]
    except (SyntaxError, IndexError):
        return flattened(source)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return source.strip()
    body = node.body
    if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring is what feedback shows; the code is what must not ship
    lines = text.splitlines()[body[0].lineno - 1:node.end_lineno]
    return flattened("\n".join(lines))


def flattened(text: str) -> str:
    """``text`` with every line stripped and blank lines dropped: how code is compared, whatever its indent."""
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


_PROBE = r"""
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
import course, course.lessons
found = {"package": course.__file__, "lessons": {}, "problems": []}
for lab, name in course.lessons.MODULES.items():
    module = importlib.import_module("course.lessons." + name)
    found.setdefault("files", []).append(module.__file__)
    for cls in module.EXERCISES:
        for a in cls.assertions():
            if a.hidden and not a.function.__name__.startswith(sys.argv[2]):
                found["problems"].append(f"{cls.id}: hidden assertion {a.function.__name__} still has its body")
        if sys.argv[3] == "1":
            if cls.solution_code.strip():
                found["problems"].append(f"{cls.id}: its solution_code is not withheld")
            if cls.solution(object.__new__(cls)).code != sys.argv[4]:
                found["problems"].append(f"{cls.id}: solution() does not say the solution is withheld")
    found["lessons"][lab] = len(module.EXERCISES)
print(json.dumps(found))
"""


def probe_handout(target: Path, graded: bool) -> list[str]:
    """Import the hand-out's own lessons in a new Python (isolated mode, writing no bytecode there) and list what is wrong."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MONGODB_", "COURSE_"))}
    env["COURSE_BACKEND"] = "mongomock"
    try:
        done = subprocess.run([sys.executable, "-I", "-B", "-c", _PROBE, str(target), STUB_PREFIX,
                               "1" if graded else "0", WITHHELD_SOLUTION],
                              capture_output=True, text=True, timeout=300, cwd=target, env=env)
    except (OSError, subprocess.SubprocessError) as error:
        return [f"its lessons could not be checked ({error})"]
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [f"its lessons do not import ({last})"]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    problems = list(found["problems"])
    package = (Path(target) / "course").resolve()
    for file in [found["package"], *found.get("files", [])]:
        if not Path(file).resolve().is_relative_to(package):
            problems.append(f"the check imported {file}, which is not in {package}")
    return problems
