"""``course release --to``: learners get the lab, not the exam (issue 11, part 3)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from course.cli import main
from course.handout.build import HandoutError, make_handout
from course.handout.check import statements, verify_handout
from course.handout.release import release
from course.handout.withhold import STUB_PREFIX, WITHHELD_SOLUTION, drop_unused, hidden_assertions, withhold

REAL = Path(__file__).resolve().parents[1]
LABS = ("00-start-here.ipynb", "01-design-for-reads.ipynb")


def _other_lessons(folder: str, names: list[str]) -> list[str]:
    """Leave out caches and the lessons of labs 02-05 (the hand-out here has labs 00 and 01)."""
    lessons = Path(folder).name == "lessons"
    return [n for n in names if n == "__pycache__" or lessons and n.startswith("lesson")
            and not n.startswith(("lesson00", "lesson01"))]


def _course(root: Path) -> Path:
    """A copy of this checkout's package, lab 00 and 01 notebooks, and the files a hand-out needs."""
    shutil.copytree(REAL / "course", root / "course", ignore=_other_lessons)
    for name in ("pyproject.toml", "README.md", "Makefile", "LICENSE"):
        shutil.copy(REAL / name, root / name)
    for folder in ("labs", "solutions"):
        (root / folder).mkdir()
        for lab in LABS:
            shutil.copy(REAL / folder / lab, root / folder / lab)
    (root / "data").mkdir()
    (root / "tests").mkdir()
    (root / "tests" / "test_secret.py").write_text("ANSWER = 42\n")
    release(root / "solutions", root / "labs", force=True)  # the labs of these solutions, whatever labs/ holds now
    return root


@pytest.fixture(scope="module")
def instructor(tmp_path_factory) -> Path:
    return _course(tmp_path_factory.mktemp("repo") / "course-repo")


@pytest.fixture(scope="module")
def handout(instructor, tmp_path_factory):
    return make_handout(tmp_path_factory.mktemp("out") / "handout", root=instructor)


@pytest.fixture(scope="module")
def graded(instructor, tmp_path_factory):
    return make_handout(tmp_path_factory.mktemp("graded") / "handout", root=instructor, graded=True)


def _hidden(instructor: Path) -> list:
    found = []
    for path in sorted((instructor / "course" / "lessons").rglob("*.py")):
        found += hidden_assertions(path.read_text(), path.name)
    return found


def _run(handout: Path, code: str) -> dict:
    """Run ``code`` in a fresh Python importing the hand-out's own package; return the JSON it prints."""
    script = "import sys; sys.path.insert(0, sys.argv[1])\n" + textwrap.dedent(code)
    done = subprocess.run([sys.executable, "-I", "-B", "-c", script, str(handout)], capture_output=True, text=True,
                          timeout=300, env={"COURSE_BACKEND": "mongomock", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_handout_has_no_grader_solutions_or_tests(handout):
    names = {p.relative_to(handout.target).as_posix() for p in handout.files}
    assert {"labs/00-start-here.ipynb", "course/__init__.py", "course/engine/exercise.py", "pyproject.toml"} <= names
    assert not any(n.startswith(("solutions/", "tests/", "course/grading/")) for n in names)
    assert not (handout.target / "course" / "grading").exists()
    assert not list(handout.target.rglob("__pycache__"))  # the release's own import check wrote nothing there


def test_no_hidden_assertion_name_or_body_is_anywhere_in_the_handout(instructor, handout):
    hidden = _hidden(instructor)
    assert len(hidden) >= 5 and sorted(w.name for w in hidden) == sorted(
        w.name for w in handout.withheld if w.kind == "hidden assertion")
    texts = {p: p.read_text(errors="replace") for p in handout.target.rglob("*") if p.is_file()}
    source = "\n".join(p.read_text() for p in (instructor / "course").rglob("*.py")
                       if "grading" not in p.parts)
    for item in hidden:
        method = item.name.split(".")[1]
        defined = re.findall(rf"def {re.escape(method)}\b", source)
        if len(defined) == 1:  # a name only this hidden assertion has must be nowhere in the hand-out
            assert not [p for p, t in texts.items() if re.search(rf"\b{re.escape(method)}\b", t)], method
        body = statements(item.source)
        flat = {p: "\n".join(line.strip() for line in t.splitlines() if line.strip()) for p, t in texts.items()}
        assert body and not [p for p, t in flat.items() if body in t], item.name


_CHECKS = """
    import inspect, json
    import course, course.lessons
    from course.lab.session import start_lab
    out = {"package": course.__file__, "sources": [], "checks": {}}
    for lab, name in course.lessons.MODULES.items():
        module = __import__("course.lessons." + name, fromlist=["x"])
        for cls in module.EXERCISES:
            out["sources"] += [inspect.getsource(a.function) for a in cls.assertions() if a.hidden]
    for lab_id in ("00", "01"):
        lab = start_lab(lab_id)
        names = {"lab": lab, "db": lab.db, "products": lab.db.products}
        for exercise in lab.exercises.values():
            for answer in (None, exercise.solution_code):
                try:
                    exec(answer or "", names)
                except Exception as error:  # a solution needing an earlier cell: compared all the same
                    out["checks"][exercise.id + " raised"] = repr(error)
                result = exercise.evaluate(names, include_hidden=False)  # what check() shows
                out["checks"][exercise.id + (" solved" if answer else "")] = [
                    result.status.value, result.pending, result.score, result.max_score,
                    [(o.name, o.status.value) for o in result.outcomes]]
    print(json.dumps(out))
"""


def test_the_handout_imports_check_works_and_getsource_finds_no_hidden_assertion(instructor, handout):
    found = _run(handout.target, _CHECKS)
    assert Path(found["package"]).resolve() == (handout.target / "course" / "__init__.py").resolve()
    assert found["sources"] and all(f"def {STUB_PREFIX}" in s and "raise NotImplementedError" in s
                                    for s in found["sources"])
    hidden_bodies = [statements(w.source) for w in _hidden(instructor)]
    assert not [b for b in hidden_bodies if any(b in "\n".join(x.strip() for x in s.splitlines())
                                                for s in found["sources"])]
    mine = _run(instructor, _CHECKS)  # the same answers checked by the instructor's own package
    assert Path(mine["package"]).resolve() == (instructor / "course" / "__init__.py").resolve()
    assert found["checks"] == mine["checks"]  # same verdicts, scores and "N more run when graded"
    assert any(pending > 0 for _, pending, *_ in found["checks"].values())
    assert any(status == "correct" for status, *_ in found["checks"].values())


def test_a_graded_handout_withholds_every_solution(instructor, graded):
    found = _run(graded.target, """
        import json, course.lessons
        out = {}
        for lab, name in course.lessons.MODULES.items():
            module = __import__("course.lessons." + name, fromlist=["x"])
            for cls in module.EXERCISES:
                out[cls.id] = [cls.solution_code, cls.solution(object.__new__(cls)).code]
        print(json.dumps(out))
    """)
    assert found and all(code == "" and shown == WITHHELD_SOLUTION for code, shown in found.values())
    solutions = [w for w in graded.withheld if w.kind == "solution"]
    assert len(solutions) == len(found)
    text = "\n".join(p.read_text(errors="replace") for p in graded.target.rglob("*.py"))
    for item in solutions:
        first = next(line for line in item.source.splitlines()[1:] if line.strip() and '"""' not in line)
        assert first not in text, item.name
    assert "--graded" in (graded.target / ".course-handout").read_text()


def test_the_transform_follows_aliases_and_withholds_helpers_only_hidden_checks_use():
    source = textwrap.dedent('''
        from course.engine.exercise import Exercise, Incorrect, visible
        from course.engine.exercise import hidden as graded_only
        import course.engine.exercise as engine

        EDGE_SIZES = (0, 1, 97)
        SHARED = 5


        def _edge_pages(answer):
            return [answer.f(size) for size in EDGE_SIZES]


        class Pages(Exercise):
            id = "99.1"
            solution_code = """
        def f(size):
            return size
        """

            @visible(points=1, checks="page")
            def first(self, answer):
                """Page one"""
                if answer.f(SHARED) != SHARED:
                    raise Incorrect("no")

            # the edge cases: sizes 0, 1 and a prime
            @graded_only(points=2,
                         checks="page")
            def edges_secretly(self, answer):
                """Edge sizes"""
                if _edge_pages(answer) != list(EDGE_SIZES):
                    raise Incorrect("edge")

            @engine.hidden(points=1, checks="page")
            def via_module(self, answer):
                self._private_oracle(answer)

            def _private_oracle(self, answer):
                return answer.f(12345)
    ''')
    out, withheld = withhold(source, "lesson99.py")
    assert [w.name for w in withheld] == ["Pages.edges_secretly", "Pages.via_module"]
    texts = drop_unused({"lesson99.py": out}, ["from course.lessons.lesson99 import SHARED"], withheld)
    result = texts["lesson99.py"]
    for gone in ("edges_secretly", "via_module", "_edge_pages", "EDGE_SIZES", "_private_oracle", "12345",
                 "the edge cases"):
        assert gone not in result, gone
    assert "SHARED = 5" in result and "def first" in result and "def f(size)" in result
    assert result.count(f"def {STUB_PREFIX}") == 2 and "@graded_only(points=2,\n" in result
    namespace: dict = {}
    exec(compile(result, "lesson99.py", "exec"), namespace)
    assertions = namespace["Pages"].assertions()
    assert [(a.hidden, a.points, a.requirement) for a in assertions] == [
        (False, 1.0, "page"), (True, 2.0, "page"), (True, 1.0, "page")]
    graded_out, graded_withheld = withhold(source, "lesson99.py", graded=True)
    assert 'solution_code = ""' in graded_out and "def f(size)" not in graded_out
    assert [w.kind for w in graded_withheld].count("solution") == 1


def test_a_hidden_check_the_transform_cannot_see_stops_the_release(instructor, tmp_path):
    root = _course(tmp_path / "repo")
    lesson = root / "course" / "lessons" / "lesson00" / "__init__.py"
    lesson.write_text(lesson.read_text() + textwrap.dedent('''

        def _sneaky(self, answer):
            """made hidden without the decorator syntax"""
            assert answer is not None

        EXERCISES[0].sneaky = hidden(points=1)(_sneaky)
    '''))
    with pytest.raises(HandoutError, match="sneaky still has its body"):
        make_handout(tmp_path / "out", root=root)


def test_verify_handout_finds_a_hidden_body_copied_elsewhere(instructor, handout):
    hidden = [w for w in handout.withheld if w.kind == "hidden assertion"]
    assert verify_handout(handout.target, instructor, withheld=hidden) == []
    stray = handout.target / "course" / "notes.py"
    stray.write_text("# kept for later\n" + textwrap.indent(hidden[0].source, "        ") + "\n")
    try:
        problems = verify_handout(handout.target, instructor, withheld=hidden)
    finally:
        stray.unlink()
    assert any(hidden[0].name in p and "course/notes.py" in p for p in problems)


def test_release_cli_graded_needs_to_and_says_what_was_withheld(instructor, tmp_path, capsys, monkeypatch):
    assert main(["release", "--graded"]) == 2
    assert "--graded goes with --to" in capsys.readouterr().err
    import course.handout.build

    monkeypatch.setattr(course.handout.build, "repository_root", lambda: instructor)
    assert main(["release", "--to", str(tmp_path / "h"), "--graded"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"withheld \d+ hidden assertions", out) and "solutions withheld" in out


def test_hidden_only_data_in_a_sibling_module_is_withheld_with_its_import():
    lesson = textwrap.dedent('''
        from course.engine.exercise import Exercise, Incorrect, hidden, visible
        from course.lessons.lesson99.data import (
            EDGE_CASES,
            VISIBLE_CASE,
        )


        class Pages(Exercise):
            id = "99.1"

            @visible(points=1, checks="page")
            def first(self, answer):
                """Page one"""
                if answer.f(VISIBLE_CASE) != VISIBLE_CASE:
                    raise Incorrect("no")

            @hidden(points=1, checks="page")
            def edges(self, answer):
                """Edge cases"""
                for case in EDGE_CASES:
                    if answer.f(case) != case:
                        raise Incorrect("edge")
    ''')
    data = "EDGE_CASES = (0, 1, 8191)  # sizes only the hidden check uses\nVISIBLE_CASE = 20\n"
    out, withheld = withhold(lesson, "lesson99.py")
    texts = drop_unused({"lesson99.py": out, "lesson99_data.py": data}, [], withheld)
    assert "EDGE_CASES" not in texts["lesson99.py"] and "8191" not in texts["lesson99_data.py"]
    assert "from course.lessons.lesson99.data import VISIBLE_CASE" in texts["lesson99.py"]
    assert "VISIBLE_CASE = 20" in texts["lesson99_data.py"]
    assert [w.name for w in withheld if w.kind == "helper"] == ["EDGE_CASES"]
    compile(texts["lesson99.py"], "lesson99.py", "exec")


def test_the_package_a_grading_sandbox_sees_has_the_grader_but_no_hidden_check(instructor, tmp_path):
    from course.handout.build import learner_package
    from course.handout.check import probe_handout

    package = learner_package(tmp_path / "kernel", root=instructor)
    assert package == tmp_path / "kernel" / "course"
    assert (package / "grading" / "__init__.py").is_file() and (package / "engine" / "exercise.py").is_file()
    hidden = _hidden(instructor)
    flat = "\n".join("\n".join(line.strip() for line in p.read_text().splitlines() if line.strip())
                     for p in package.rglob("*.py"))
    assert hidden and not [w.name for w in hidden if statements(w.source) in flat]
    assert probe_handout(tmp_path / "kernel", graded=False) == []
    assert probe_handout(instructor, graded=False)  # the probe does see the instructor's hidden bodies
    with pytest.raises(HandoutError, match="already exists"):
        learner_package(tmp_path / "kernel", root=instructor)


def test_the_handout_readme_is_the_learners(instructor, handout, graded):
    """No make test, no instructors' part; the lesson table, the backends and how exercises work, as the course's."""
    from course.handout.readme import KEPT, sections

    course_readme = (instructor / "README.md").read_text()
    text = (handout.target / "README.md").read_text()
    assert text.startswith("# Schema Design in a Schemaless Store") and "make lab" in text
    assert "make test" not in text.replace("no `make test` here", "") and "## For instructors" not in text and "course grade" not in text
    kept = sections(course_readme)
    for name in KEPT:
        assert f"## {name}" in text
    assert kept["How exercises work"] in text  # taken as it is: the two READMEs never disagree
    assert "| 08 |" in text and "## Handing in" in text and "no `make test` here" in text
    assert "withheld until your work is graded" in (graded.target / "README.md").read_text()
    assert "withheld until" not in text


def test_make_test_in_a_handout_says_what_it_is(handout):
    done = subprocess.run(["make", "test"], cwd=handout.target, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "this is a learners' hand-out" in done.stdout, (done.stdout, done.stderr)
    assert not (handout.target / ".venv").exists()  # said before building anything


def test_a_readme_without_a_kept_section_stops_the_handout():
    from course.handout.readme import learner_readme

    with pytest.raises(ValueError, match="How exercises work"):
        learner_readme("# Title\n\nIntro.\n\n## What the course covers\n\nx\n")
