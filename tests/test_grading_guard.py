"""The grader's protections one by one: nonces, fresh code, secret tests, limits, atomic results, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest

from course.grading import RESULT_MIME
from course.grading.guard import Manifest, build_manifest, expected_backends, grading_source
from course.grading.kernel import modified_course_code
from course.grading.runner import (
    Limits, collect, describe_cell, grade_notebook, instrument, lab_exercises, published, suspicious_code,
)
from course.grading.secret import SecretTestError, hidden_for, load_secret_tests
from course.grading import store
from course.grading.submissions import find_empty
from course.results import Result, Status
from support.fake_lesson import code, notebook

from test_grading import fake_lab  # noqa: F401 - fixture


def _display(payload) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("display_data", data={RESULT_MIME: payload})


def _payload(nonce: str, status: str = "correct", score: float = 3) -> dict:
    return {"nonce": nonce, "findings": [],
            "result": Result("99.1", "The answer", Status(status), "", score, 3).to_dict()}


# ---- verdicts are only taken from the grader's own cell, with its nonce --------------

def test_a_verdict_needs_the_cells_nonce_and_must_be_alone():
    cell = code("graded")
    cell.outputs = [_display(_payload("n1"))]
    assert published(cell, "n1")[0]["result"]["status"] == "correct"
    payload, problem = published(cell, "other")  # a verdict without the cell's nonce is a forgery
    assert "result" not in payload and "tampered" in problem
    cell.outputs = [_display(_payload("n1", "correct")), _display(_payload("n1", "incorrect", 0))]
    payload, problem = published(cell, "n1")
    assert "tampered" in problem and "result" not in payload
    cell.outputs = []
    assert published(cell, "n1") == (None, "")


def test_collect_ignores_verdicts_printed_by_the_learners_cells(fake_lab):
    _, exercises = lab_exercises("99")
    nb = notebook(code("start"), code("total = 1", "exercise:99.1"))
    graded, where, _ = instrument(nb, "99", exercises)
    nonce = graded.metadata["course_grading"]["nonces"]["99.1"]
    graded.cells[1].outputs = [_display(_payload(nonce))]  # the learner's own cell: ignored
    results = collect(graded, where, exercises[:1], "")
    assert results[0].status is Status.ERROR and "published nothing" in results[0].message
    graded.cells[2].outputs = [_display(_payload(nonce, "incorrect", 1))]
    assert collect(graded, where, exercises[:1], "")[0].status is Status.INCORRECT


def test_the_grading_cell_carries_its_own_manifest_and_imports_nothing_it_did_not_verify(fake_lab):
    manifest = build_manifest("99")
    assert manifest.lessons == {"99": "fake99"} and "course.exercise" in manifest.modules
    assert manifest.modules["course.lessons.fake99"][0].endswith("fake_lesson.py")
    source = grading_source("99.2", manifest, ["mongoeco"], "abc123")
    compile(source, "<grading cell>", "exec")
    assert "'nonce': 'abc123'" in source and "sha256" in source and manifest.modules["course.exercise"][1] in source


def test_manifest_verify_reports_changed_files(tmp_path):
    target = tmp_path / "m.py"
    target.write_text("x = 1\n")
    import hashlib

    manifest = Manifest({"course.m": (str(target), hashlib.sha256(b"x = 1\n").hexdigest(), False)})
    assert manifest.verify() == []
    target.write_text("x = 2\n")
    assert manifest.verify() == [str(target)]


def test_modified_course_code_finds_replaced_and_rewritten_functions():
    source = "class E:\n    def evaluate(self):\n        return 1\ndef record():\n    return 2\n"

    def load(name: str) -> types.ModuleType:
        module = types.ModuleType(name)
        exec(compile(source, name, "exec"), module.__dict__)
        return module

    old, fresh = load("course.x"), load("course.x")
    assert modified_course_code({"course.x": old}, {"course.x": fresh}) == []
    old.E.evaluate = lambda self: 99
    old.record.__code__ = (lambda: 3).__code__
    assert modified_course_code({"course.x": old}, {"course.x": fresh}) == ["course.x.E.evaluate", "course.x.record"]


def test_expected_backends_follow_the_environment():
    assert expected_backends({"MONGODB_URI": "mongodb://localhost"}) == ["server", "mongoeco-wire"]
    assert expected_backends({"COURSE_BACKEND": "mongomock"}) == ["mongomock"]


def test_suspicious_code_is_reported_with_its_cell():
    nb = notebook(code("x = 1"), code("import course.grading.kernel as k\nk.record = print"))
    assert suspicious_code(nb) == ["cell 1 imports the grader (it mentions 'course.grading')"]


def test_cells_are_described_by_learner_index_and_exercise(fake_lab):
    _, exercises = lab_exercises("99")
    nb = notebook(code("start"), code("total = 1", "exercise:99.1"), code("print(1)"))
    graded, _, _ = instrument(nb, "99", exercises)
    assert describe_cell(graded, 0) == "cell 0 (before the first exercise)"
    assert describe_cell(graded, 1) == "cell 1 (the answer cell of exercise 99.1)"
    assert describe_cell(graded, 2) == "the grading cell of exercise 99.1"
    assert describe_cell(graded, 3) == "cell 2 (after exercise 99.1)"


# ---- secret tests ---------------------------------------------------------------------

def test_secret_tests_are_loaded_counted_and_checked(tmp_path, fake_lab):
    (tmp_path / "a.py").write_text(
        "from course.grading.secret import hidden_for\n"
        "@hidden_for('99.1', points=2)\ndef big(exercise, answers):\n    '''total is big'''\n"
        "@hidden_for('99.1')\ndef small(exercise, answers):\n    pass\n")
    (tmp_path / "_helper.py").write_text("raise SystemExit('not a test file')\n")
    secret = load_secret_tests(tmp_path)
    assert secret.points == {"99.1": 3.0} and secret.descriptions == {"99.1": ["total is big", "small"]}
    assert len(secret.digest) == 64 and list(secret.files.values()) == [(tmp_path / "a.py").resolve()]
    _, exercises = lab_exercises("99", secret)
    assert exercises[0].max_points == 6.0 and exercises[1].max_points == 2.0
    with pytest.raises(SecretTestError, match="exercise id"):
        hidden_for("1.2")
    (tmp_path / "b.py").write_text("x = 1\n")
    with pytest.raises(SecretTestError, match="no function decorated"):
        load_secret_tests(tmp_path)
    (tmp_path / "b.py").write_text("import nowhere_to_be_found\n")
    with pytest.raises(SecretTestError, match="cannot be imported"):
        load_secret_tests(tmp_path)
    with pytest.raises(SecretTestError, match="not a folder"):
        load_secret_tests(tmp_path / "missing")


# ---- results on disk ----------------------------------------------------------------------

def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    target = tmp_path / "r" / "x.json"
    store.atomic_write(target, "old")

    def broken(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        store.atomic_write(target, "new")
    assert target.read_text() == "old" and [p.name for p in target.parent.iterdir()] == ["x.json"]


def test_results_are_keyed_by_content_and_damaged_files_are_regraded(tmp_path, fake_lab):
    from course.grading.runner import Graded

    nb = tmp_path / "99-x.ipynb"
    nb.write_text("{}")
    key = store.grading_key(nb, "code", {"lab": ""})
    graded = Graded("ann", nb, "99", [Result("99.1", "t", Status.CORRECT, "", 3, 3)], ["a note"], "", "T", ["f"])
    store.save(tmp_path / "out", key, graded, nb, "run1")
    loaded, run = store.load(tmp_path / "out", "ann", nb, key)
    assert (loaded, run) == (graded, "run1")
    nb.write_text('{"changed": 1}')
    assert store.grading_key(nb, "code", {"lab": ""}) != key
    assert store.load(tmp_path / "out", "ann", nb, "another key") is None
    store.result_path(tmp_path / "out", "ann", nb).write_text("{half a fi")
    assert store.load(tmp_path / "out", "ann", nb, key) is None
    assert store.safe_name("a b") != store.safe_name("a_b")


# ---- bad input -----------------------------------------------------------------------------

def test_empty_learner_folders_and_empty_class_folders_are_found(tmp_path):
    (tmp_path / "class" / "ann").mkdir(parents=True)
    (tmp_path / "class" / "ben").mkdir()
    (tmp_path / "class" / "ben" / "01-x.ipynb").write_text("{}")
    (tmp_path / "nothing").mkdir()
    learners, folders = find_empty([tmp_path / "class", tmp_path / "nothing"])
    assert learners == [("ann", tmp_path / "class" / "ann")] and folders == [tmp_path / "nothing"]


def test_a_notebook_of_another_lab_gets_error_rows_for_the_lab_being_graded(fake_lab, tmp_path):
    target = tmp_path / "00-start-here.ipynb"
    nbformat.write(notebook(code("1"), lab="00"), target)
    graded = grade_notebook(target, "x", expected_lab="99")
    assert [r.exercise_id for r in graded.results] == ["99.1", "99.2", "99.3"]
    assert {r.status for r in graded.results} == {Status.ERROR}
    assert "is lab 00's notebook, but lab 99 is being graded" in graded.skipped


# ---- limits ------------------------------------------------------------------------------

def test_the_launcher_caps_the_kernels_memory():
    done = subprocess.run(
        [sys.executable, "-c", "import resource, course.grading.launcher as l; l.limit_memory(512); "
                               "print(resource.getrlimit(resource.RLIMIT_AS)[0]); bytearray(1024 ** 3)"],
        capture_output=True, text=True, timeout=60)
    assert done.stdout.split()[0] == str(512 * 1024 * 1024) and "MemoryError" in done.stderr


@pytest.mark.slow
def test_the_notebook_time_limit_names_the_cell_and_exercise(fake_lab, tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_BACKEND", "mongomock")
    from support.golden_class import solution

    nb = solution()
    nb.cells[4].source += "\nimport time\ntime.sleep(120)"
    target = tmp_path / "99-fake-lab.ipynb"
    nbformat.write(nb, target)
    graded = grade_notebook(target, "slow", limits=Limits(cell_timeout=100, notebook_timeout=12))
    statuses = {r.exercise_id: r.status for r in graded.results}
    assert statuses == {"99.1": Status.CORRECT, "99.2": Status.ERROR, "99.3": Status.ERROR}
    text = " ".join(graded.notes) + " ".join(r.message for r in graded.results)
    assert "total time limit of 12 s" in text
    assert "cell 4 (the answer cell of exercise 99.2)" in text


@pytest.mark.slow
def test_a_notebook_that_rewrites_the_course_package_on_disk_gets_no_grade(tmp_path):
    """Grader and kernel run from a throwaway copy of the package; the notebook edits that copy's checks."""
    import shutil

    real = Path(__file__).resolve().parents[1]
    copy = tmp_path / "copy"
    shutil.copytree(real / "course", copy / "course", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(real / "tests" / "support", copy / "support", ignore=shutil.ignore_patterns("__pycache__"))
    from support.golden_class import solution

    nb = solution()
    nb.cells[2].source = "total = 41"  # wrong...
    nb.cells.insert(2, code(  # ...but the checks are rewritten to accept anything
        "import pathlib, course.exercise as e\n"
        "p = pathlib.Path(e.__file__)\n"
        "p.write_text(p.read_text().replace('assertion.function(self, answers)', 'pass'))"))
    target = tmp_path / "99-fake-lab.ipynb"
    nbformat.write(nb, target)
    script = ("import json, sys; import support.fake_lesson as f; f.install()\n"
              "from course.grading.runner import grade_notebook, Limits\n"
              f"g = grade_notebook({str(target)!r}, 'mallory', limits=Limits(cell_timeout=60))\n"
              "print(json.dumps({'results': [[r.exercise_id, r.status.value, r.message] for r in g.results],"
              " 'flags': g.flags, 'course': __import__('course').__file__}))")
    env = dict(os.environ, PYTHONPATH=str(copy), COURSE_BACKEND="mongomock")
    env.pop("MONGODB_URI", None)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["course"].startswith(str(copy))
    assert "pass" in (copy / "course" / "exercise.py").read_text()  # the attack did happen
    statuses = {ident: status for ident, status, _ in report["results"]}
    assert statuses == {"99.1": "error", "99.2": "error", "99.3": "error"}
    assert all("changed while grading" in message for _, _, message in report["results"])
    assert any("exercise.py" in flag for flag in report["flags"])


def test_an_oversized_notebook_is_not_read(fake_lab, tmp_path, monkeypatch):
    import course.grading.runner as runner

    monkeypatch.setattr(runner, "MAX_NOTEBOOK_BYTES", 1000)
    target = tmp_path / "99-fake-lab.ipynb"
    target.write_text("{" + " " * 5000 + "}")
    graded = grade_notebook(target, "big")
    assert [r.status for r in graded.results] == [Status.ERROR] * 3 and "are not graded" in graded.skipped


def test_feedback_files_of_similar_names_do_not_collide():
    from course.grading.gradebook import feedback_filename

    assert feedback_filename("bob") == "bob.md"
    assert len({feedback_filename(n) for n in ("a b", "a_b", "a/b")}) == 3
