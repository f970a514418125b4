"""``course grade``: a whole class graded in fresh kernels, on a fake lab "99" and the real lab 01."""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path

import nbformat
import pytest

import course.lessons
from course.cli import main
from course.grading.gradebook import COLUMNS, feedback_text, gradebook_rows
from course.grading.runner import (
    NOT_STARTED, Execution, Graded, drop_checks_databases, error_result, grade_notebook, graded_cells,
    interrupted_cells, lab_exercises, learner_tag, raised, verdicts,
)
from course.grading.sandbox import KERNEL_PATH_VARIABLE
from course.grading.submissions import UsageError, find_submissions
from course.engine.hidden_messages import INCORRECT
from course.handout.notebooks import read_notebook, write_notebook
from course.handout.release import make_lab
from course.engine.results import Result, Status
from support import fake_lesson
from support.fake_lesson import code, notebook

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
NAME = "99-fake-lab.ipynb"


def _install(patch: pytest.MonkeyPatch) -> None:
    patch.setitem(course.lessons.MODULES, fake_lesson.LAB, fake_lesson.MODULE)
    patch.setitem(sys.modules, f"course.lessons.{fake_lesson.MODULE}", fake_lesson)
    patch.setenv(KERNEL_PATH_VARIABLE, fake_lesson.kernel_folder())
    patch.delenv("MONGODB_URI", raising=False)


@pytest.fixture
def fake_lab(monkeypatch):
    """Lab 99 registered in this process (and importable by the learners' kernels)."""
    _install(monkeypatch)
    return fake_lesson


def _lab_notebook():
    return make_lab(fake_lesson.solution_notebook(), "99", "solutions/99-fake-lab.ipynb")


def _class(root: Path) -> dict[str, Path]:
    """Write a class of learners, each showing one way a submission can go."""
    files = {}

    def put(learner: str, nb_or_text, name: str = NAME) -> None:
        folder = root / learner if learner else root
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / name
        if isinstance(nb_or_text, str):
            target.write_text(nb_or_text)
        else:
            write_notebook(nb_or_text, target)
        files[learner or Path(name).stem] = target

    alice = fake_lesson.solution_notebook()
    alice.cells.append(code(
        "import os, sys\nopen('seen.json', 'w').write(__import__('json').dumps("
        "{'tag': os.environ.get('COURSE_DB_TAG'), 'python': sys.executable}))"))
    put("alice", alice)

    bob = _lab_notebook()
    bob.cells[2].source = "total = 42"
    bob.cells.insert(3, code("total = 41  # second try", "exercise:99.1"))
    bob.cells[5].source = "def double(x):\n    return 2 * x\nraise ValueError('oops')"
    bob.cells[6].metadata["tags"] = []  # 99.3's answer cell lost its tag
    bob.cells.append(code("x = 1", "exercise:01.1"))
    put("bob", bob)

    put("carol", "{not json")

    dave = fake_lesson.solution_notebook()
    del dave.cells[0]  # no start_lab
    put("dave", dave)

    erin = _lab_notebook()
    erin.metadata["course"]["lab"] = "42"
    put("erin", erin)

    put("", json.dumps({"foo": 1}), name="frank.ipynb")

    put("gina", _lab_notebook())
    return files


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """Grade the whole class once through the CLI; return (files, before, rows, out, exit code, stdout)."""
    root = tmp_path_factory.mktemp("class")
    out = tmp_path_factory.mktemp("out")
    with pytest.MonkeyPatch.context() as patch:
        _install(patch)
        files = _class(root)
        before = {k: p.read_bytes() for k, p in files.items()}
        import io
        from contextlib import redirect_stdout

        buffer = io.StringIO()
        with redirect_stdout(buffer):
            code_ = main(["grade", str(root), "--out", str(out), "--timeout", "60",
                          *fake_lesson.sandbox_arguments()])
    with (out / "gradebook.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    return files, before, rows, out, code_, buffer.getvalue()


def _rows(rows, learner):
    return {r["exercise"]: r for r in rows if r["learner"] == learner}


# ---- the whole class (one kernel per executable notebook) ----------------------------

@pytest.mark.slow
def test_grading_runs_and_writes_a_sorted_gradebook(graded_class):
    files, before, rows, out, code_, stdout = graded_class
    assert code_ == 0
    assert list(rows[0].keys()) == list(COLUMNS)
    keys = [(r["learner"], r["lab"], r["exercise"]) for r in rows]
    assert keys == sorted(keys)
    assert {r["learner"] for r in rows} == {"alice", "bob", "carol", "dave", "erin", "frank", "gina"}
    assert {r["status"] for r in rows} <= {s.value for s in Status}
    assert "skipped" in stdout and "carol" in stdout and "frank" in stdout and "erin" in stdout
    assert "graded 4 of 7 notebooks for 7 learners" in stdout


@pytest.mark.slow
def test_learner_files_are_never_modified(graded_class):
    files, before, *_ = graded_class
    assert {k: p.read_bytes() for k, p in files.items()} == before


@pytest.mark.slow
def test_a_correct_notebook_scores_full_marks_in_its_own_kernel_and_private_folder(graded_class):
    files, _, rows, *_ = graded_class
    alice = _rows(rows, "alice")
    assert {k: (r["status"], r["score"], r["max_score"]) for k, r in alice.items()} == {
        "99.1": ("correct", "3", "3"), "99.2": ("correct", "2", "2"), "99.3": ("correct", "1", "1")}
    # the kernel ran in a private copy of the notebook's folder: its seen.json never reached alice's folder
    assert sorted(p.name for p in files["alice"].parent.iterdir()) == [NAME]


@pytest.mark.slow
def test_duplicates_errors_and_missing_cells(graded_class):
    _, _, rows, out, *_ = graded_class
    bob = _rows(rows, "bob")
    assert (bob["99.1"]["status"], bob["99.1"]["score"], bob["99.1"]["max_score"]) == ("incorrect", "1", "3")
    assert (bob["99.2"]["status"], bob["99.2"]["score"]) == ("error", "0")
    assert (bob["99.3"]["status"], bob["99.3"]["max_score"]) == ("error", "1")
    feedback = (out / "feedback" / "bob.md").read_text()
    assert "the answer cell raised ValueError: oops" in feedback
    assert "exercise 99.3: answer cell missing (no cell tagged exercise:99.3)" in feedback
    assert "2 cells are tagged exercise:99.1" in feedback and "the last one was graded" in feedback
    assert "exercise:01.1, which is not an exercise of lab 99" in feedback
    assert INCORRECT in feedback and "not passed: total is the answer" in feedback
    assert "total is 41" not in feedback  # a hidden check's message is never shown
    assert "lab.q1.hint()" in feedback
    assert "passed: total is an integer" in feedback


@pytest.mark.slow
def test_unreadable_and_unknown_notebooks_become_error_rows(graded_class):
    _, _, rows, out, *_ = graded_class
    carol = _rows(rows, "carol")
    assert set(carol) == {"99.1", "99.2", "99.3"} and {r["status"] for r in carol.values()} == {"error"}
    assert "not valid JSON" in (out / "feedback" / "carol.md").read_text()
    erin, frank = _rows(rows, "erin"), _rows(rows, "frank")
    assert list(erin) == ["-"] and erin["-"]["status"] == "error" and erin["-"]["lab"] == "-"
    assert "unknown lab '42'" in (out / "feedback" / "erin.md").read_text()
    assert list(frank) == ["-"] and "not a Jupyter notebook" in (out / "feedback" / "frank.md").read_text()


@pytest.mark.slow
def test_a_lab_never_started_and_an_untouched_lab(graded_class):
    _, _, rows, out, *_ = graded_class
    dave = _rows(rows, "dave")
    assert {r["status"] for r in dave.values()} == {"error"}
    assert dave["99.1"]["max_score"] == "3"
    assert NOT_STARTED in (out / "feedback" / "dave.md").read_text()
    gina = _rows(rows, "gina")
    assert {k: (r["status"], r["score"]) for k, r in gina.items()} == {
        "99.1": ("not_attempted", "0"), "99.2": ("not_attempted", "0"), "99.3": ("not_attempted", "0")}


@pytest.mark.slow
def test_no_assertion_code_reaches_gradebook_or_feedback(graded_class):
    _, _, _, out, *_ = graded_class
    text = (out / "gradebook.csv").read_text() + "".join(
        p.read_text() for p in (out / "feedback").glob("*.md"))
    for code_fragment in ("raise Incorrect", "a.total", "self.call", "def is_right", "Traceback"):
        assert code_fragment not in text


# ---- the real lab 01 (every solution and lab: tests/test_grading_solutions.py) ---------------

_SANDBOX = not fake_lesson.sandbox_arguments()


def _real(path: str) -> Path:
    target = ROOT / path
    if not target.exists():
        pytest.skip(f"{path} does not exist yet")
    return target


@pytest.mark.slow
def test_lab_01_is_graded_not_attempted(monkeypatch, tmp_path):
    monkeypatch.delenv("MONGODB_URI", raising=False)
    lab = ROOT / "labs" / "01-design-for-reads.ipynb"
    if not lab.exists():  # not released yet: grade what `course release` would write
        solution = _real("solutions/01-design-for-reads.ipynb")
        lab = tmp_path / lab.name
        write_notebook(make_lab(read_notebook(solution), "01", "solutions/" + lab.name), lab)
    graded = grade_notebook(lab, "blank", sandbox=_SANDBOX)
    assert graded.lab == "01" and graded.results
    from course.store.backends import mongoeco_available

    if mongoeco_available() or os.environ.get("MONGODB_URI"):
        assert {r.status for r in graded.results} == {Status.NOT_ATTEMPTED}
    else:  # no checks' database: what needs one says so, the rest is not attempted
        assert {r.status for r in graded.results} <= {Status.NOT_ATTEMPTED, Status.UNSUPPORTED}
        assert any("checks' database" in r.message for r in graded.results if r.status is Status.UNSUPPORTED)


@pytest.mark.slow
def test_a_cell_that_times_out_is_interrupted_and_the_rest_still_runs(tmp_path, fake_lab):
    from support.fake_lesson import START

    nb = notebook(code(START), code("import time\ntime.sleep(60)\ntotal = 42", "exercise:99.1"),
                  code("double = lambda x: 2 * x", "exercise:99.2"), lab="99")
    write_notebook(nb, tmp_path / NAME)
    # 8 s: start_lab's cell must fit under the same limit on a loaded 2-core CI machine
    graded = grade_notebook(tmp_path / NAME, "slow", timeout=8, sandbox=not fake_lesson.sandbox_arguments())
    by_id = {r.exercise_id: r for r in graded.results}
    assert by_id["99.1"].status is Status.ERROR and "time limit" in by_id["99.1"].message
    assert by_id["99.2"].status is Status.CORRECT  # the next cell still ran and was graded
    assert "cell 1 (the answer cell of exercise 99.1) ran longer than 8 s and was interrupted" in graded.notes


# ---- fast unit tests ------------------------------------------------------------------

def test_learner_tag_is_valid_short_and_unique():
    tags = {learner_tag(name) for name in ("Ann Lee", "ann_lee", "ANN-LEE", "x" * 200, "ü")}
    assert len(tags) == 5
    assert all(len(t) <= 40 and t.replace("_", "").isalnum() and t == t.lower() for t in tags)
    assert learner_tag("Ann Lee").startswith("ann_lee_")


def test_each_exercise_is_graded_after_its_last_answer_cell(fake_lab):
    nb = notebook(code("start"), code("a", "exercise:99.1"), code("b", "exercise:99.1"),
                  code("c", "exercise:99.2"), code("d", "exercise:07.1"))
    _, exercises = lab_exercises("99")
    after, where, notes = graded_cells(nb, "99", exercises)
    assert after == {2: ["99.1"], 3: ["99.2"]} and where == {"99.1": 2, "99.2": 3}
    assert any("99.1" in n and "the last one" in n for n in notes)
    assert any("exercise:07.1" in n for n in notes)


def test_verdicts_prefer_the_answer_cells_own_error_and_explain_missing_results(fake_lab):
    _, exercises = lab_exercises("99")
    nb = notebook(code("a", "exercise:99.1"), code("b", "exercise:99.2"), code("c", "exercise:99.3"))
    correct = Result("99.1", "The answer", Status.CORRECT, "", 3, 3)
    nb.cells[1].outputs = [nbformat.v4.new_output("error", ename="KeyError", evalue="'x'", traceback=[])]
    run = Execution(stopped="DeadKernelError: died", stopped_at=2, dead=True,
                    graded={"99.1": correct, "99.2": correct})
    results = verdicts(nb, {"99.1": 0, "99.2": 1, "99.3": 2}, exercises, run)
    assert results[0] is correct
    assert results[1].status is Status.ERROR and results[1].message == "the answer cell raised KeyError: 'x'"
    assert results[2].status is Status.ERROR and "DeadKernelError" in results[2].message
    assert results[2].max_score == 1
    missing = verdicts(nb, {}, exercises[:1], Execution())[0]
    assert "answer cell missing" in missing.message


def test_an_answer_cell_stopped_by_the_kernels_engine_needs_a_feature_it_is_not_wrong(fake_lab):
    _, exercises = lab_exercises("99")
    nb = notebook(code("a", "exercise:99.1"), code("b", "exercise:99.2"))
    gap = ["Traceback (most recent call last)", "  File \"/venv/site-packages/mongomock/aggregate.py\", line 9",
           "NotImplementedError: $merge"]
    mine = ["Traceback (most recent call last)", "  File \"/tmp/ipykernel_1/42.py\", line 3", "NotImplementedError"]
    nb.cells[0].outputs = [nbformat.v4.new_output("error", ename="NotImplementedError", evalue="$merge", traceback=gap)]
    nb.cells[1].outputs = [nbformat.v4.new_output("error", ename="NotImplementedError", evalue="", traceback=mine)]
    first, second = verdicts(nb, {"99.1": 0, "99.2": 1}, exercises[:2], Execution())
    assert first.status is Status.UNSUPPORTED and "$merge" in first.message and first.max_score == 0
    assert second.status is Status.ERROR  # the learner's own NotImplementedError is the learner's


def test_find_submissions_by_file_folder_of_learners_and_flat_folder(tmp_path):
    (tmp_path / "class" / "ann").mkdir(parents=True)
    (tmp_path / "class" / "ann" / "01-a.ipynb").write_text("{}")
    (tmp_path / "class" / "ann" / "00-b.ipynb").write_text("{}")
    (tmp_path / "class" / "ben.ipynb").write_text("{}")
    (tmp_path / "class" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "class" / ".ipynb_checkpoints" / "x.ipynb").write_text("{}")
    (tmp_path / "cid.ipynb").write_text("{}")
    found = find_submissions([tmp_path / "class", tmp_path / "cid.ipynb"])
    assert [(learner, p.name) for learner, p in found] == [
        ("ann", "00-b.ipynb"), ("ann", "01-a.ipynb"), ("ben", "ben.ipynb"), ("cid", "cid.ipynb")]
    with pytest.raises(UsageError, match="nope"):
        find_submissions([tmp_path / "nope"])


def test_gradebook_rows_sort_exercises_numerically_and_feedback_points_to_hints(fake_lab):
    _, exercises = lab_exercises("99")
    results = [error_result(e, "boom") for e in reversed(exercises)]
    results.append(Result("99.10", "Ten", Status.INCORRECT, "nope", 0, 1))
    graded = Graded("zoe", Path("99-fake-lab.ipynb"), "99", results, [], "", "Fake")
    rows = gradebook_rows([graded])
    assert [r["exercise"] for r in rows] == ["99.1", "99.2", "99.3", "99.10"]
    text = feedback_text("zoe", [graded])
    assert "lab.q10.hint()" in text and "boom" in text and "## Lab 99: Fake — 0/" in text


def test_unknown_lab_file_needs_no_kernel(fake_lab, tmp_path):
    target = tmp_path / "x.ipynb"
    write_notebook(notebook(code("1")), target)
    graded = grade_notebook(target, "x")
    assert graded.skipped and graded.lab == "-" and graded.results[0].exercise_id == "-"
    assert "cannot tell which lab" in graded.results[0].message


def test_cleanup_drops_only_the_learners_tagged_checks_databases():
    dropped = []

    class Client:
        def drop_database(self, name):
            dropped.append(name)

    class Backend:
        client = Client()

    class Checks:
        backend = Backend()

    tag = learner_tag("ann")
    assert drop_checks_databases(Checks(), "01", tag) == dropped == [f"course_01_g{tag}", f"course_01_scratch_g{tag}"]
