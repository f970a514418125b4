"""Grading N notebooks at once: forked worker processes where that is safe, each grading one task at a time.

Each scenario runs in a fresh interpreter (as ``course grade`` does): the test process itself runs other
threads, so it would use threads instead of forking.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from course.grading.workers import can_fork_workers, grade_all

pytestmark = [pytest.mark.containment,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker processes are forked on Linux")]

PRELUDE = """
import json, os, sys, threading, time
from course.grading.workers import can_fork_workers, grade_all
events = []
def started(task): events.append(("started", task, os.getpid()))
def finished(task, graded, keep): events.append(("finished", task, graded, keep))
def lost(task, why): return "lost: " + why
"""


def _run(script: str, *args: str, timeout: float = 60) -> dict:
    done = subprocess.run([sys.executable, "-c", PRELUDE + script, *args], capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:  # a zombie has ended
        return handle.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_fresh_grader_forks_one_worker_per_job_and_keeps_every_grading_in_its_own_process():
    found = _run("""
forkable = can_fork_workers()
def grade(task):
    time.sleep(0.3)  # long enough that the second worker takes tasks while the first is busy
    return [task, os.getpid()]
grade_all(list(range(7)), 2, grade, started, finished, lost)
print(json.dumps({"forkable": forkable, "events": events, "me": os.getpid(), "threads": threading.active_count()}))
""")
    assert found["forkable"]
    graded = {task: result for kind, task, result, *keep in found["events"] if kind == "finished"}
    assert sorted(graded) == list(range(7))  # every task once
    assert all(result[0] == task for task, result in graded.items())
    workers = {result[1] for result in graded.values()}
    assert len(workers) == 2 and found["me"] not in workers  # graded in two other processes
    starts = [event for event in found["events"] if event[0] == "started"]
    assert len(starts) == 7 and {pid for *_, pid in starts} == {found["me"]}  # announced by the grader
    assert all(keep for kind, *_, keep in found["events"] if kind == "finished")
    assert found["threads"] == 1  # nothing of the run is left running


def test_threads_stand_in_where_another_thread_runs_with_the_same_results():
    import threading

    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # another thread could hold a lock a fork would copy, held
    other.start()
    try:
        assert not can_fork_workers()
        events = []
        grade_all(list(range(5)), 2, lambda task: (task * 10, os.getpid()), lambda task: None,
                  lambda task, graded, keep: events.append((task, graded, keep)), lambda task, why: None)
    finally:
        stop.set()
        other.join()
    assert sorted(events) == [(task, (task * 10, os.getpid()), True) for task in range(5)]  # graded right here


def test_a_worker_that_dies_loses_only_its_notebook_and_that_loss_is_not_kept():
    found = _run("""
def grade(task):
    if task == 2:
        os.kill(os.getpid(), 9)  # the worker itself dies (out of memory, a crash in a library)
    time.sleep(0.05)
    return "graded %d" % task
grade_all(list(range(6)), 2, grade, started, finished, lost)
print(json.dumps({"events": events}))
""")
    finished = {task: [graded, keep] for kind, task, graded, keep in
                (e for e in found["events"] if e[0] == "finished")}
    assert sorted(finished) == list(range(6))
    assert finished[2] == ["lost: the grading worker process ended while grading this notebook "
                           "(killed by signal 9)", False]
    assert all(finished[task] == [f"graded {task}", True] for task in (0, 1, 3, 4, 5))  # the other worker


def test_when_every_worker_dies_the_rest_is_lost_not_waited_for():
    found = _run("""
def grade(task):
    os.kill(os.getpid(), 9)
grade_all(list(range(5)), 2, grade, started, finished, lost)
print(json.dumps({"events": events}))
""")
    finished = [e for e in found["events"] if e[0] == "finished"]
    assert sorted(task for _, task, _, _ in finished) == list(range(5))
    assert all(graded.startswith("lost: ") and keep is False for _, _, graded, keep in finished)


def test_a_failure_in_the_grader_stops_the_run_and_its_workers():
    found = _run("""
def finished(task, graded, keep):
    raise OSError(28, "No space left on device")
try:
    grade_all(list(range(6)), 2, lambda task: os.getpid(), started, finished, lost)
except OSError as error:
    print(json.dumps({"raised": str(error), "children": open("/proc/self/task/%d/children" % os.getpid()).read()}))
""")
    assert "No space left" in found["raised"] and found["children"].strip() == ""


@pytest.mark.slow
def test_workers_die_with_their_grader(tmp_path):
    pids_file = tmp_path / "workers"
    script = f"""
def grade(task):
    with open({str(pids_file)!r}, "a") as handle:
        handle.write("%d\\n" % os.getpid())
    time.sleep(60)
threading.Timer(2, lambda: os.kill(os.getpid(), 9)).start()  # the grader dies without a word
grade_all([1, 2], 2, grade, started, finished, lost, processes=True)
"""
    done = subprocess.run([sys.executable, "-c", PRELUDE + script], capture_output=True, text=True, timeout=60)
    assert done.returncode == -signal.SIGKILL
    workers = [int(line) for line in pids_file.read_text().split()]
    assert len(workers) == 2
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers), "a grading worker outlived its grader"


def test_with_several_jobs_the_largest_notebooks_are_graded_first(tmp_path, monkeypatch):
    import course.grading.batch as batch
    from course.grading.runner import Graded
    from course.handout.notebooks import write_notebook
    from course.engine.results import Result, Status
    from support import golden_class

    from test_grading import _install

    _install(monkeypatch)
    submissions = tmp_path / "class"
    sizes = {"ann": 1, "ben": 40, "cat": 5, "dan": 20}
    for learner, padding in sizes.items():
        (submissions / learner).mkdir(parents=True)
        notebook = golden_class.solution()
        notebook.cells[0].source += "\n# " + "x" * (1000 * padding)  # saved work makes a notebook larger
        write_notebook(notebook, submissions / learner / golden_class.NAME)

    def fake_grade(path, learner, **kwargs):
        return Graded(learner, path, "99", [Result("99.1", "t", Status.CORRECT, "", 3, 3)], [], "", "Fake")

    monkeypatch.setattr(batch, "grade_notebook", fake_grade)
    for jobs, expected in ((2, ["ben", "dan", "cat", "ann"]), (1, ["ann", "ben", "cat", "dan"])):
        lines = []
        batch.grade_class([submissions], tmp_path / f"out{jobs}", jobs=jobs, progress=lines.append)
        # one worker takes a task at a time, so the order they are handed out in is the order of this list
        assert [line.split()[1].rstrip(":") for line in lines if line.startswith("grading ")] == expected


CORES = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
two_cores = pytest.mark.skipif(len(CORES) < 2, reason="keeping to a core of its own needs two cores")


@two_cores
def test_each_forked_worker_and_the_kernels_it_starts_keep_to_a_core_of_their_own():
    found = _run("""
import subprocess
def grade(task):
    time.sleep(0.3)
    child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                           capture_output=True, text=True).stdout  # as a kernel is started
    return [os.getpid(), sorted(os.sched_getaffinity(0)), json.loads(child)]
grade_all(list(range(4)), 2, grade, started, finished, lost)
print(json.dumps({"events": events, "mine": sorted(os.sched_getaffinity(0))}))
""")
    graded = [result for kind, task, result, keep in (e for e in found["events"] if e[0] == "finished")]
    cores = {pid: tuple(own) for pid, own, _ in graded}
    assert len(cores) == 2 and sorted(cores.values()) == [(CORES[0],), (CORES[1],)]  # one core each, not the same
    assert all(child == own for _, own, child in graded)  # what it starts stays on its core
    assert found["mine"] == CORES  # the grader itself is left as it was


@two_cores
def test_one_job_keeps_to_one_core_while_it_grades_and_gives_the_others_back():
    events = []
    grade_all([1, 2], 1, lambda task: sorted(os.sched_getaffinity(0)), lambda task: None,
              lambda task, graded, keep: events.append(graded), lambda task, why: None)
    assert events == [[CORES[0]], [CORES[0]]]
    assert sorted(os.sched_getaffinity(0)) == CORES


@two_cores
def test_worker_threads_keep_to_cores_of_their_own_too():
    from course.grading.workers import own_core

    with own_core(1, 2) as core:
        assert core == CORES[1] and os.sched_getaffinity(0) == {CORES[1]}
    assert sorted(os.sched_getaffinity(0)) == CORES
    events = []
    grade_all(list(range(4)), 2, lambda task: (time.sleep(0.2), sorted(os.sched_getaffinity(0)))[1],
              lambda task: None, lambda task, graded, keep: events.append(graded), lambda task, why: None,
              processes=False)
    assert sorted(map(tuple, events)) == [(CORES[0],), (CORES[0],), (CORES[1],), (CORES[1],)]


def test_nothing_is_pinned_with_more_jobs_than_cores_or_a_single_core():
    from course.grading.workers import own_core

    before = os.sched_getaffinity(0)
    with own_core(0, len(before) + 1) as core:  # more workers than cores: the scheduler spreads them
        assert core is None and os.sched_getaffinity(0) == before
    only = subprocess.run([sys.executable, "-c", "import os\n"
                           "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
                           "from course.grading.workers import own_core\n"
                           "with own_core(0, 1) as core: print(core)"], capture_output=True, text=True)
    assert only.stdout.strip() == "None", only.stderr  # one core: nothing to choose
