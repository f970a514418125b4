"""Inputs that must not stop or bloat a grading run, and results that cannot be forged on disk (issue 11)."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import tracemalloc
from pathlib import Path

import pytest

import course.lessons
from course.grading import store
from course.grading.gradebook import spreadsheet_safe, write_reports
from course.grading.runner import Graded
from course.grading.submissions import UsageError, check_out_location, scan
from course.handout.notebooks import MAX_DEPTH, NotebookError, read_notebook, write_notebook
from course.engine.results import Result, Status
from support import fake_lesson, golden_class

ROOT = Path(__file__).resolve().parents[1]


def _graded(learner: str, score: float = 3, notebook: str = golden_class.NAME) -> Graded:
    return Graded(learner, Path("/class") / learner / notebook, "99",
                  [Result("99.1", "t", Status.CORRECT if score == 3 else Status.INCORRECT, "", score, 3)],
                  [], "", "Fake")


def _nested(depth: int) -> str:
    return '{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {"x": ' + "[" * depth + "]" * depth + "}}"


# ---- notebooks: nothing a file holds raises anything but NotebookError -----------------------------------

@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5_000, 200_000])
def test_deeply_nested_json_is_a_notebook_error_not_a_recursion_error(tmp_path, depth):
    path = tmp_path / "deep.ipynb"
    path.write_text(_nested(depth))
    with pytest.raises(NotebookError, match="nested"):
        read_notebook(path, strict=False)


def test_nesting_a_real_notebook_uses_is_read(tmp_path):
    path = tmp_path / "ok.ipynb"
    path.write_text(_nested(MAX_DEPTH - 3))
    assert read_notebook(path, strict=False).cells == []


@pytest.mark.parametrize("text, fragment", [
    ('{"cells": 5, "nbformat": 4, "nbformat_minor": 5, "metadata": {}}', "'cells' is not a list"),
    ('{"cells": [[1]], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}', "cell 0 is not a cell"),
    ('{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": [1]}', "metadata is not an object"),
    ('{"cells": [{"cell_type": "code", "source": 7}], "nbformat": 4, "metadata": {}}', "source is not text"),
    ('{"cells": [], "nbformat": 4, "metadata": {"n": ' + "1" * 5000 + "}}", "not valid JSON"),
    ('{"cells": [], "nbformat": 99, "nbformat_minor": 0, "metadata": {}}', "not a valid Jupyter notebook"),
])
def test_malformed_notebooks_are_refused_with_the_reason(tmp_path, text, fragment):
    path = tmp_path / "bad.ipynb"
    path.write_text(text)
    with pytest.raises(NotebookError, match="bad.ipynb") as raised:
        read_notebook(path, strict=False)
    assert fragment in str(raised.value)


@pytest.mark.parametrize("name, metadata", [
    ("anything.ipynb", {"course": {"lab": "04"}}),  # metadata first
    ("01-design-for-reads.ipynb", {}),  # else the file name
    ("02-mine.ipynb", {"course": {"lab": "x"}}),  # a malformed lab is ignored
    ("notes.ipynb", {"course": "04"}),  # neither
])
def test_the_lab_read_before_grading_is_the_lab_the_notebook_is_graded_as(tmp_path, name, metadata):
    from course.handout.notebooks import lab_id_of, read_lab_id

    path = tmp_path / name
    path.write_text(json.dumps({"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": metadata}))
    assert read_lab_id(path) == lab_id_of(read_notebook(path, strict=False), path)


@pytest.mark.parametrize("text", [
    '{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": [1]}',
    '{"cells": 5, "nbformat": 4, "nbformat_minor": 5, "metadata": {"course": {"lab": "01"}}}',
    '{"cells": [], "nbformat": 4, "metadata": {"n": ' + "1" * 5000 + "}}",
    '{"nbformat": 4}', "[]", _nested(MAX_DEPTH + 1), b"\xff\xfe".decode("latin-1"),
])
def test_the_lab_of_a_malformed_notebook_is_a_lab_none_or_a_notebook_error(tmp_path, text):
    from course.handout.notebooks import read_lab_id

    path = tmp_path / "01-bad.ipynb"
    path.write_text(text)
    try:
        assert read_lab_id(path) in ("01", None)
    except NotebookError as error:
        assert "01-bad.ipynb" in str(error)


def test_a_huge_file_is_refused_from_its_size_before_it_is_read(tmp_path):
    path = tmp_path / "huge.ipynb"
    with path.open("wb") as handle:  # 400 MB, sparse: nothing is written, stat says 400 MB
        handle.truncate(400_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(NotebookError, match="400 MB; notebooks over 50 MB are not read"):
            read_notebook(path, strict=False)
        assert store.grading_key(path, "code", {}) != store.grading_key(None, "code", {})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"reading the size of a 400 MB file took {peak} bytes"


def test_the_size_limit_is_a_parameter_and_a_fifo_is_not_read(tmp_path):
    path = tmp_path / "nb.ipynb"
    write_notebook(fake_lesson.solution_notebook(), path)
    with pytest.raises(NotebookError, match="are not read"):
        read_notebook(path, max_bytes=100)
    assert read_notebook(path, max_bytes=None).cells
    fifo = tmp_path / "pipe.ipynb"
    os.mkfifo(fifo)
    with pytest.raises(NotebookError, match="not a regular file"):
        read_notebook(fifo)  # would block forever if it were opened


def test_a_deep_notebook_gets_an_error_row_and_the_rest_of_the_class_is_graded(tmp_path, monkeypatch):
    import course.grading.batch as batch
    from course.grading.batch import grade_class
    from course.grading.runner import grade_notebook

    monkeypatch.setitem(course.lessons.MODULES, fake_lesson.LAB, fake_lesson.MODULE)
    monkeypatch.setitem(sys.modules, f"course.lessons.{fake_lesson.MODULE}", fake_lesson)
    submissions = tmp_path / "class"
    for learner in ("ann", "bob"):
        (submissions / learner).mkdir(parents=True)
        write_notebook(golden_class.solution(), submissions / learner / golden_class.NAME)
    (submissions / "deb").mkdir()
    (submissions / "deb" / golden_class.NAME).write_text(_nested(100_000))

    def grade(path, learner, **kwargs):  # the real grader for deb (it never starts a kernel), a stand-in else
        if learner == "deb":
            return grade_notebook(path, learner, **kwargs)
        return Graded(learner, path, "99", [Result("99.1", "t", Status.CORRECT, "", 3, 3)], [], "", "Fake")

    monkeypatch.setattr(batch, "grade_notebook", grade)
    report = grade_class([submissions], tmp_path / "out", jobs=1)
    deb = next(g for g in report.graded if g.learner == "deb")
    assert "nested too deeply" in deb.skipped
    assert {r.status for r in deb.results} == {Status.ERROR}
    assert sorted(g.learner for g in report.graded if not g.skipped) == ["ann", "bob"]
    rows = list(csv.DictReader((tmp_path / "out" / "gradebook.csv").open()))
    assert {r["learner"] for r in rows} == {"ann", "bob", "deb"}


# ---- results that cannot be forged --------------------------------------------------------------------

def test_results_carry_a_mac_and_a_forged_one_is_regraded_naming_the_learner(tmp_path):
    out = tmp_path / "out"
    key = store.prepare_out(out)
    assert (out / store.KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert store.prepare_out(out) == key  # the same key on every run
    notebook = Path("/class/ann") / golden_class.NAME
    path = store.save(out, "k1", _graded("ann", 1), notebook, "run1", mac_key=key)
    assert "mac" in json.loads(path.read_text())
    assert store.verify(out, "ann", notebook, "k1", mac_key=key).state == "ok"
    assert store.verify(out, "ann", notebook, "k2", mac_key=key).state == "changed"

    record = json.loads(path.read_text())  # what a learner's process would do: give itself full marks
    record["graded"]["results"][0].update(score=3, status="correct")
    path.write_text(json.dumps(record))
    saved = store.verify(out, "ann", notebook, "k1", mac_key=key)
    assert saved.state == "forged" and "MAC does not match" in saved.why
    assert store.load(out, "ann", notebook, "k1", mac_key=key) is None
    plan = store.plan_reuse(out, [("ann", notebook, "k1")], key)
    assert plan.todo == [("ann", notebook, "k1")] and not plan.kept
    assert any("ann" in m and "failed verification" in m for m in plan.messages)


def test_a_result_signed_with_another_key_or_moved_to_another_slot_is_not_kept(tmp_path):
    out = tmp_path / "out"
    key = store.prepare_out(out)
    ann, ben = Path("/class/ann") / golden_class.NAME, Path("/class/ben") / golden_class.NAME
    store.save(out, "k", _graded("ann", 3), ann, "r", mac_key=b"x" * 32)  # a key the attacker chose
    assert store.verify(out, "ann", ann, "k", mac_key=key).state == "forged"
    store.save(out, "k", _graded("ann", 3), ann, "r", mac_key=key)
    store.result_path(out, "ben", ben).parent.mkdir(parents=True)
    store.result_path(out, "ben", ben).write_bytes(store.result_path(out, "ann", ann).read_bytes())
    assert store.verify(out, "ben", ben, "k", mac_key=key).state == "forged"
    unsigned = json.loads(store.result_path(out, "ann", ann).read_text())
    del unsigned["mac"]
    store.result_path(out, "ann", ann).write_text(json.dumps(unsigned))
    assert store.verify(out, "ann", ann, "k", mac_key=key).state == "forged"
    kept = store.plan_reuse(out, [("ann", ann, "k"), ("ben", ben, "k")], key)
    assert kept.kept == {} and [who for who, _, _ in kept.forged] == ["ann", "ben"]


def test_a_key_file_given_must_be_private_and_a_key(tmp_path):
    key_file = tmp_path / "keys" / "grader.key"
    key = store.prepare_out(tmp_path / "out", key_file)
    assert key_file.read_text().strip() == key.hex() and not (tmp_path / "out" / store.KEY_FILE).exists()
    key_file.chmod(0o644)
    with pytest.raises(UsageError, match="chmod 600"):
        store.load_key(tmp_path / "out", key_file)
    key_file.write_text("not a key\n")
    key_file.chmod(0o600)
    with pytest.raises(UsageError, match="not a key file"):
        store.load_key(tmp_path / "out", key_file)


def test_gradebook_and_totals_are_rewritten_from_verified_results(tmp_path, monkeypatch):
    import course.grading.batch as batch
    from course.grading.batch import grade_class

    monkeypatch.setitem(course.lessons.MODULES, fake_lesson.LAB, fake_lesson.MODULE)
    monkeypatch.setitem(sys.modules, f"course.lessons.{fake_lesson.MODULE}", fake_lesson)
    submissions = tmp_path / "class"
    for learner in ("ann", "ben"):
        (submissions / learner).mkdir(parents=True)
        write_notebook(golden_class.solution(), submissions / learner / golden_class.NAME)
    calls = tmp_path / "calls"  # a file: each notebook may be graded in a forked process of its own

    def grade(path, learner, **kwargs):
        with calls.open("a") as handle:
            handle.write(learner + "\n")
        return _graded(learner, 1 if learner == "ann" else 3, path.name)

    monkeypatch.setattr(batch, "grade_notebook", grade)
    out = tmp_path / "out"
    grade_class([submissions], out, jobs=1)
    result = next((out / "results").rglob("ann*/*.json"))
    record = json.loads(result.read_text())
    record["graded"]["results"][0].update(score=3, status="correct")
    result.write_text(json.dumps(record))
    (out / "gradebook.csv").write_text((out / "gradebook.csv").read_text().replace(",1,3,", ",3,3,"))
    calls.unlink()
    lines = []
    again = grade_class([submissions], out, jobs=1, progress=lines.append)
    assert calls.read_text().split() == ["ann"]  # only the forged result is graded again
    rows = {r["learner"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert rows["ann"]["score"] == "1" and rows["ben"]["score"] == "3"
    totals = {r["learner"]: r for r in csv.DictReader((out / "totals.csv").open())}
    assert totals["ann"]["score"] == "1"
    if "plan_reuse" not in Path(batch.__file__).read_text():
        pytest.skip("course.grading.batch does not report store.plan_reuse(...).messages yet (requested)")
    said = "\n".join(lines + again.messages)
    assert "ann" in said and "failed verification" in said


# ---- the --out folder -----------------------------------------------------------------------------------

def test_an_unwritable_out_is_found_before_anyone_is_graded(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(UsageError, match="cannot write there"):
        store.prepare_out(blocker / "out")  # a folder under a file: even root cannot make it
    with pytest.raises(UsageError, match="it is a file"):
        store.prepare_out(blocker)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_a_read_only_out_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o500)
    try:
        with pytest.raises(UsageError, match="cannot write there"):
            store.prepare_out(out)
    finally:
        out.chmod(0o700)


def test_out_inside_the_class_folder_is_refused(tmp_path):
    (tmp_path / "class" / "ann").mkdir(parents=True)
    for out in (tmp_path / "class" / "graded", tmp_path / "class"):
        with pytest.raises(UsageError, match="inside the class folder"):
            check_out_location(out, [tmp_path / "class"])
    with pytest.raises(UsageError, match="is inside --out"):
        check_out_location(tmp_path, [tmp_path / "class"])
    check_out_location(tmp_path / "grades", [tmp_path / "class"])


# ---- the class folder -----------------------------------------------------------------------------------

def _class_with_traps(tmp_path: Path) -> Path:
    root = tmp_path / "class"
    for learner in ("ann", ".bob", ".ipynb_checkpoints", "cat", "dan", "eve"):
        (root / learner).mkdir(parents=True)
    write_notebook(golden_class.solution(), root / "ann" / golden_class.NAME)
    write_notebook(golden_class.solution(), root / ".bob" / golden_class.NAME)
    write_notebook(golden_class.solution(), root / ".ipynb_checkpoints" / golden_class.NAME)
    instructor = tmp_path / "instructor" / "solutions"
    instructor.mkdir(parents=True)
    write_notebook(golden_class.solution(), instructor / golden_class.NAME)
    (root / "cat" / golden_class.NAME).symlink_to(instructor / golden_class.NAME)  # leads out
    (root / "dan").rmdir()
    (root / "dan").symlink_to(instructor)  # a learner folder leading out
    (root / "eve" / golden_class.NAME).symlink_to(root / "ann" / golden_class.NAME)  # stays inside
    write_notebook(golden_class.solution(), root / ".hidden.ipynb")
    return root


def test_links_out_of_the_class_folder_and_dot_folders_are_reported_never_followed(tmp_path):
    root = _class_with_traps(tmp_path)
    found = scan([root])
    assert [who for who, _ in found.submissions] == ["ann", "eve"]
    refused = {who: why for who, _, why in found.refused}
    assert sorted(refused) == [".bob", ".hidden", "cat", "dan"]
    assert "starts with '.'" in refused[".bob"] and "rename it" in refused[".bob"]
    assert "outside the class folder" in refused["cat"] and "outside the class folder" in refused["dan"]
    assert "instructor" not in refused["cat"]  # the feedback does not show where the link led
    assert any("eve" in m and "symbolic link" in m for m in found.messages)
    assert not found.empty


def test_refused_learners_get_error_rows_in_the_gradebook(tmp_path, monkeypatch):
    import course.grading.batch as batch
    from course.grading.batch import grade_class

    if "refused" not in Path(batch.__file__).read_text():
        pytest.skip("course.grading.batch does not use submissions.scan(...).refused yet (requested)")
    monkeypatch.setitem(course.lessons.MODULES, fake_lesson.LAB, fake_lesson.MODULE)
    monkeypatch.setitem(sys.modules, f"course.lessons.{fake_lesson.MODULE}", fake_lesson)
    read = []

    def grade(path, learner, **kwargs):
        read.append(Path(path).resolve())
        return _graded(learner, 3, path.name)

    monkeypatch.setattr(batch, "grade_notebook", grade)
    root = _class_with_traps(tmp_path)
    grade_class([root], tmp_path / "out", jobs=1)
    rows = {r["learner"]: r for r in csv.DictReader((tmp_path / "out" / "gradebook.csv").open())}
    for learner in (".bob", "cat", "dan"):
        assert rows[learner]["status"] == "error" and rows[learner]["score"] == "0"
    assert not any("instructor" in str(p) for p in read)


# ---- CSV formula injection ------------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1+1", "'+1+1"), ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "'\t=1"), ("  =1", "'  =1"), ("ann", "ann"), ("-", "-"),
    ("3", "3"), ("-1.5", "-1.5"), ("12.5", "12.5"), ("", ""),
])
def test_spreadsheet_safe(value, expected):
    assert spreadsheet_safe(value) == expected


def test_learner_names_and_messages_cannot_become_formulas(tmp_path):
    graded = [_graded(name) for name in ("=cmd|' /C calc'!A0", "+ben", "-cat", "@dan", "eve")]
    graded[0].results[0] = Result("99.1", "t", Status.ERROR, "=1+1 raised", 0, 3)
    write_reports(graded, tmp_path)
    for name in ("gradebook.csv", "totals.csv"):
        rows = list(csv.reader(io.StringIO((tmp_path / name).read_text())))
        cells = [cell for row in rows[1:] for cell in row]
        assert not [c for c in cells if c and c[0] in "=+@" or c.startswith("-") and c != "-"], (name, cells)
        assert "'=cmd|' /C calc'!A0" in cells and "'+ben" in cells and "eve" in cells


def test_long_and_non_ascii_names_still_make_valid_result_and_feedback_files(tmp_path):
    from course.grading.gradebook import feedback_filename

    out = tmp_path / "out"
    key = store.prepare_out(out)
    for learner, notebook in (("名" * 200, "99-" + "x" * 250 + ".ipynb"), ("a" * 300, golden_class.NAME)):
        path = Path("/class") / "f" / notebook
        saved = store.save(out, "k", _graded(learner), path, "r", mac_key=key)
        assert all(len(part.encode()) <= 255 for part in saved.parts)
        assert store.verify(out, learner, path, "k", mac_key=key).state == "ok"
        assert len(feedback_filename(learner).encode()) <= 255
    assert store.safe_name("名" * 200) != store.safe_name("名" * 201)


def test_a_hidden_or_outside_file_beside_a_learners_notebook_is_reported_not_counted(tmp_path):
    root = tmp_path / "class"
    (root / "ann").mkdir(parents=True)
    write_notebook(golden_class.solution(), root / "ann" / golden_class.NAME)
    (root / "ann" / ("._" + golden_class.NAME)).write_bytes(b"\0\5\26\7")  # macOS AppleDouble, from a zip
    (root / "ann" / "98-other.ipynb").symlink_to("/etc/hostname")
    found = scan([root])
    assert found.submissions == [("ann", root / "ann" / golden_class.NAME)] and not found.refused
    assert any(m.startswith("ann: ") and "starts with '.'" in m for m in found.messages)
    assert any(m.startswith("ann: ") and "outside the class folder" in m for m in found.messages)


def test_a_deeply_nested_saved_output_is_dropped_not_the_notebook(tmp_path):
    import nbformat

    nb = golden_class.solution()
    deep = {"a": 1}
    for _ in range(90):  # MongoDB allows 100 levels: a learner may display such a document
        deep = {"a": deep}
    nb.cells[2].outputs = [nbformat.v4.new_output("display_data", data={"application/json": deep})]
    path = tmp_path / golden_class.NAME
    path.write_text(json.dumps(nb))
    lenient = read_notebook(path, strict=False)
    assert lenient.cells[2].outputs == [] and lenient.cells[2].source == nb.cells[2].source
    with pytest.raises(NotebookError, match="nested more than"):
        read_notebook(path)  # strict (a solution notebook): refused, never silently changed


@pytest.mark.parametrize("uri, says", [
    ("mongodb://teacher:pa55word@127.0.0.1:27017/", "names a user"),
    ("mongodb://127.0.0.1:1/?directConnection=true", "did not answer"),
])
def test_a_checks_server_that_cannot_serve_the_sandboxes_stops_the_run_with_a_reason(tmp_path, monkeypatch, capsys,
                                                                                      uri, says):
    from course.cli import main

    (tmp_path / "class" / "ann").mkdir(parents=True)
    write_notebook(golden_class.solution(), tmp_path / "class" / "ann" / "lab.ipynb")
    monkeypatch.setenv("MONGODB_URI", uri)
    monkeypatch.setenv("COURSE_SERVER_TIMEOUT_MS", "300")
    code = main(["grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--unsandboxed"])
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err
    assert "pa55word" not in err  # the password is never echoed
    assert not (tmp_path / "out" / "gradebook.csv").exists()
