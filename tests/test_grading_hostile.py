"""The hostile class: every attack on kernels, verdicts and other learners changes no grade.

Graded through ``course grade`` in the sandbox twice: two at a time beside two victims, and at one job in
a process of its own with every attack between two honest learners (graded before and after it by the
same worker, the next notebook started ahead on the spare core).  Needs
bubblewrap (CI installs it); without it these tests are skipped, since unsandboxed grading does not
claim to stop them.
"""

from __future__ import annotations

import csv
import io
import os
import socket
import threading
import subprocess
import sys
import time
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Iterator

import pytest

from course.cli import main
from course.grading.runner import learner_tag
from course.grading.sandbox import sandbox_problem
from support import golden_class, hostile_class
from support.interleaving import honest_name

from test_grading import _install

pytestmark = [pytest.mark.slow, pytest.mark.containment,
              pytest.mark.skipif(bool(sandbox_problem()), reason=f"no sandbox here: {sandbox_problem()}")]


def _grades(out: Path) -> dict[str, dict[str, tuple[str, str, str]]]:
    with (out / "gradebook.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    got: dict[str, dict[str, tuple[str, str, str]]] = {}
    for row in rows:
        got.setdefault(row["learner"], {})[row["exercise"]] = (row["status"], row["score"], row["max_score"])
    return got


def _snapshot(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _orphans() -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if hostile_class.ORPHAN_MARKER.encode() in line and str(os.getpid()) != pid:
            found.append(pid)
    return found


@contextmanager
def _loopback_listener() -> Iterator[tuple[int, list]]:
    """A server on the host's loopback that no sandbox may reach: (its port, the connections it accepted)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    reached: list = []

    def accept() -> None:
        while True:
            try:
                reached.append(listener.accept()[1])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1], reached
    finally:
        listener.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """Grade the hostile class once; return (out, grades, stdout, exit code, snapshot right after the run)."""
    root = tmp_path_factory.mktemp("hostile")
    out = root / "out"
    with _loopback_listener() as (port, reached), pytest.MonkeyPatch.context() as patch:
        _install(patch)
        patch.setenv("COURSE_BACKEND", "mongomock")
        submissions, secret = hostile_class.write_class(root, out, port)
        before = {p: p.read_bytes() for p in submissions.rglob("*") if p.is_file()}
        buffer = io.StringIO()
        with redirect_stdout(buffer):
            code = main(["grade", str(submissions), "--out", str(out), "--lab", "99", "--tests", str(secret),
                         "--jobs", "2", "--timeout", "20", "--memory-mb", "1024"])
        assert {p: p.read_bytes() for p in submissions.rglob("*") if p.is_file()} == before
    return out, _grades(out), buffer.getvalue(), code, _snapshot(out), reached


def test_no_attacker_scores_more_than_its_plain_answers_earn(hostile):
    _, grades, stdout, code, _, _ = hostile
    assert code == 0, stdout
    attackers = set(grades) - set(hostile_class.VICTIMS)
    assert attackers == set(hostile_class.attacks(Path("/c"), Path("/o"), 1))
    wrong = {learner: (grades[learner], hostile_class.expected(learner)) for learner in sorted(attackers)
             if grades[learner] != hostile_class.expected(learner)}
    assert not wrong, wrong


def test_no_attack_reached_what_it_looked_for(hostile):
    grades = hostile[1]
    flagging = set(hostile_class.FLAGGING)
    if os.geteuid() == 0:  # Linux exempts root's processes from RLIMIT_NPROC, sandbox or not: see the README
        flagging.discard("fork_bomb")
    escaped = {learner: grades[learner]["99.3"] for learner in flagging if grades[learner]["99.3"][0] != "incorrect"}
    assert not escaped, escaped  # 99.3 is correct exactly when the attack got through
    assert hostile[5] == []  # no kernel reached the host's loopback


def test_the_victims_keep_their_golden_grades(hostile):
    grades = hostile[1]
    assert {learner: grades[learner] for learner in hostile_class.VICTIMS} == hostile_class.VICTIMS


# ---- one job, in order: every attack between two honest learners, each notebook in a grading process of its own
# (the next one's started ahead on the spare core), as `course grade` runs outside a test process

GRADER = Path(__file__).resolve().parent / "support" / "grade_lab98.py"


@pytest.fixture(scope="module")
def interleaved(tmp_path_factory):
    """Grade :func:`hostile_class.write_interleaved_class` once at ``--jobs 1`` in a process of its own; return
    (folder -> attack, grades, output, exit code, connections the loopback server accepted)."""
    root = tmp_path_factory.mktemp("interleaved")
    out = root / "out"
    with _loopback_listener() as (port, reached), pytest.MonkeyPatch.context() as patch:
        _install(patch)
        patch.setenv("COURSE_BACKEND", "mongomock")
        submissions, secret, folders = hostile_class.write_interleaved_class(root, out, port)
        done = subprocess.run([sys.executable, "-u", str(GRADER), str(submissions), "--out", str(out), "--lab", "99",
                               "--tests", str(secret), "--jobs", "1", "--timeout", "20", "--memory-mb", "1024"],
                              capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent)
    return folders, _grades(out), done.stdout + done.stderr, done.returncode, reached


def test_one_worker_grades_every_attack_between_two_honest_learners(interleaved):
    folders, _, output, code, _ = interleaved
    assert code == 0, output
    order = [line.split()[1].rstrip(":") for line in output.splitlines() if line.startswith("grading ")]
    assert order == sorted(folders) and order[0] == honest_name(0)  # honest, attacker, honest, ...


def test_honest_learners_before_and_after_every_attack_keep_their_golden_grades(interleaved):
    folders, grades, output, _, _ = interleaved
    lost = {folder: grades.get(folder) for folder, attack in folders.items()
            if attack == "honest" and grades.get(folder) != golden_class.EXPECTED["alice"]}
    assert not lost, (lost, output[-3000:])


def test_no_attacker_graded_in_turn_scores_more_than_its_plain_answers(interleaved):
    folders, grades, _, _, reached = interleaved
    wrong = {folder: (grades.get(folder), hostile_class.expected(attack)) for folder, attack in folders.items()
             if attack != "honest" and grades.get(folder) != hostile_class.expected(attack)}
    assert not wrong, wrong
    assert reached == []  # no kernel reached the host's loopback
    assert _orphans() == []


def test_nothing_outlives_its_sandbox_and_the_results_stay_as_written(hostile):
    out, _, _, _, snapshot, _ = hostile
    time.sleep(3)  # the orphan would write every 0.25 s
    assert _orphans() == []
    assert not (out.parent / "escaped.txt").exists()
    assert _snapshot(out) == snapshot


def test_secret_tests_never_reach_any_output(hostile):
    out = hostile[0]
    text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file())
    for fragment in (golden_class.SENTINEL, "answers.total", "exercise.call", "raise Incorrect"):
        assert fragment not in text, fragment


def test_a_rerun_keeps_every_result_it_can_verify(hostile, tmp_path):
    out = hostile[0]
    with pytest.MonkeyPatch.context() as patch:
        _install(patch)
        patch.setenv("COURSE_BACKEND", "mongomock")
        buffer = io.StringIO()
        with redirect_stdout(buffer):
            code = main(["grade", str(out.parent / "class"), "--out", str(out), "--lab", "99",
                         "--tests", str(out.parent / "secret"), "--jobs", "2"])
    assert code == 0 and "failed verification" not in buffer.getvalue()
    assert _grades(out) == hostile[1]


# ---- lab 98: learner functions on the checks' database --------------------------------------

@pytest.fixture(scope="module")
def db_class(tmp_path_factory):
    from course.store.backends import mongoeco_available

    if not (mongoeco_available() or os.environ.get("MONGODB_URI")):
        pytest.skip("lab 98's checks need the checks' database (mongoeco on Python >= 3.13, or MONGODB_URI)")
    from support import fake_lesson

    root = tmp_path_factory.mktemp("dbclass")
    out = root / "out"
    with pytest.MonkeyPatch.context() as patch:
        _install(patch)
        import sys

        import course.lessons

        patch.setitem(course.lessons.MODULES, fake_lesson.DB_LAB, fake_lesson.DB_MODULE)
        patch.setitem(sys.modules, f"course.lessons.{fake_lesson.DB_MODULE}", None)
        fake_lesson.install_db_lab()
        submissions = hostile_class.write_db_class(root, learner_tag("victim"))
        buffer = io.StringIO()
        with redirect_stdout(buffer):
            code = main(["grade", str(submissions), "--out", str(out), "--lab", "98", "--jobs", "3",
                         "--timeout", "30"])
    assert code == 0, buffer.getvalue()
    return _grades(out), out


def test_a_victim_graded_beside_database_attackers_keeps_full_marks(db_class):
    grades, _ = db_class
    assert grades["victim"] == {"98.1": ("correct", "5", "5"), "98.2": ("correct", "5", "5"),
                                "98.3": ("correct", "1", "1")}


def test_dropping_other_databases_and_writing_between_calls_reach_nothing(db_class):
    grades, out = db_class
    # the dropper's own answer is right: its refused commands changed nothing anywhere
    assert grades["db_dropper"]["98.1"][0] == "correct"
    # the background writer gets 3 right once, but its late writes land nowhere the checks count
    status, score, _ = grades["db_background"]["98.1"]
    assert status == "incorrect" and score != "5"
