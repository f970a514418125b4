"""At one job, the next notebook's grading process gets ready on the spare core, and runs nothing of the
notebook before its turn (course/grading/ahead.py, course/grading/isolation.py's start_isolated).

The process-level scenarios run in a fresh interpreter, as ``course grade`` does: the test process runs
other threads, and forking beside them is what the grader refuses to do.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course.grading.ahead import AheadOfTurn, spare_cores
from support import fake_lesson
from test_grading_workers import _alive

pytestmark = [pytest.mark.containment,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="grading processes are forked on Linux")]

CORES = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
two_cores = pytest.mark.skipif(len(CORES) < 2, reason="getting ready ahead needs a second core")


def _run(script: str, *args: str, timeout: float = 60) -> dict:
    done = subprocess.run([sys.executable, "-c", "import json, os, sys, time\n" + script, *args],
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- start_isolated: ready first, then the turn --------------------------------------------------------

def test_a_process_started_ahead_gets_ready_and_does_nothing_more_until_it_is_told_to_go(tmp_path):
    found = _run("""
from pathlib import Path
from course.grading.isolation import start_isolated
marks = Path(sys.argv[1])
def work(turn):
    (marks / "ready").write_text(str(time.time()))
    turn()
    (marks / "went").write_text(str(time.time()))
    return os.getpid()
process = start_isolated(work, memory_mb=0)
time.sleep(1.0)
before = {"ready": (marks / "ready").exists(), "went": (marks / "went").exists()}
told = time.time()
process.go(20)
value = process.result()
print(json.dumps({"before": before, "told": told, "went": float((marks / "went").read_text()),
                  "value": value, "pid": process.pid}))
""", str(tmp_path))
    assert found["before"] == {"ready": True, "went": False}
    assert found["went"] >= found["told"]
    assert found["value"] == found["pid"]


def test_the_time_limit_counts_from_the_turn_not_from_the_fork():
    found = _run("""
from course.grading.isolation import Failure, start_isolated
def work(after):
    def run(turn):
        time.sleep(1.5)  # getting ready: longer than the whole limit below
        turn()
        time.sleep(after)
        return "done"
    return run
slow_start = start_isolated(work(0.2), memory_mb=0)
time.sleep(2.0)
slow_start.go(1.0)
kept = slow_start.result()
too_long = start_isolated(work(3.0), memory_mb=0)
time.sleep(2.0)
too_long.go(1.0)
stopped = too_long.result()
print(json.dumps({"kept": kept, "stopped": stopped.reason if isinstance(stopped, Failure) else stopped,
                  "limit": getattr(stopped, "limit", None), "alive": os.path.exists(f"/proc/{too_long.pid}")}))
""")
    assert found["kept"] == "done"
    assert "took longer than 1 s" in found["stopped"] and found["limit"] is True
    assert not found["alive"]


def test_a_waiting_process_ends_when_its_parent_lets_go_even_with_a_later_one_forked_beside_it():
    found = _run("""
from course.grading.isolation import start_isolated
def work(turn):
    turn()
    return "graded"
first = start_isolated(work, memory_mb=0)
later = start_isolated(work, memory_mb=0)  # holds none of first's pipes
first._go_pipe.close()  # what the grader's end does to it: no go will ever come
deadline = time.monotonic() + 10
while time.monotonic() < deadline and os.waitpid(first.pid, os.WNOHANG) == (0, 0):
    time.sleep(0.05)
ended = time.monotonic() < deadline
folder = str(later._folder)
later.cancel()
print(json.dumps({"ended": ended, "later": later.pid, "folder_left": os.path.exists(folder)}))
""")
    assert found["ended"]  # a later process holding first's go pipe would keep it waiting forever
    assert not _alive(found["later"]) and not found["folder_left"]


@two_cores
def test_a_process_started_on_a_core_and_what_it_starts_keep_to_that_core():
    found = _run("""
import subprocess
from course.grading.isolation import start_isolated
core = int(sys.argv[1])
def work(turn):
    turn()
    child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                           capture_output=True, text=True).stdout  # as its kernel is started
    return [sorted(os.sched_getaffinity(0)), json.loads(child)]
process = start_isolated(work, memory_mb=0, core=core)
process.go(20)
print(json.dumps({"result": process.result(), "mine": sorted(os.sched_getaffinity(0))}))
""", str(CORES[1]))
    assert found["result"] == [[CORES[1]], [CORES[1]]]
    assert found["mine"] == CORES


# ---- AheadOfTurn: which process is launched when ---------------------------------------------------------

class _Launched:
    def __init__(self, task):
        self.task, self.cancelled = task, False

    def cancel(self):
        self.cancelled = True


def test_only_the_next_task_is_launched_once_and_handed_over_at_its_turn():
    launched = []

    def launch(task):
        launched.append(task)
        return _Launched(task)

    ahead = AheadOfTurn(["a", "b", "c"], [0, 1])
    assert ahead.take("a") is None  # the first task has no process ready
    ahead.prepare("a", launch)
    ahead.prepare("a", launch)  # asked again: still one process for b
    assert launched == ["b"] and ahead.waiting == 1
    assert ahead.take("b").task == "b" and ahead.waiting == 0
    ahead.prepare("b", launch)
    ahead.prepare("c", launch)  # the last task: nothing follows it
    assert launched == ["b", "c"]
    assert [ahead.next_core() for _ in range(4)] == [0, 1, 0, 1]  # a getting-ready process never shares a core


def test_a_run_that_stops_cancels_the_process_still_waiting():
    waiting = _Launched("b")
    ahead = AheadOfTurn(["a", "b"], [0, 1])
    ahead.prepare("a", lambda task: waiting)
    ahead.cancel()
    assert waiting.cancelled and ahead.waiting == 0 and ahead.take("b") is None


def test_it_is_used_only_at_one_job_with_a_second_task_and_a_second_core(monkeypatch):
    import course.grading.ahead as ahead_module

    monkeypatch.setattr(ahead_module, "spare_cores", lambda: [0, 1])
    assert AheadOfTurn.when_useful(["a", "b"], 1) is not None
    assert AheadOfTurn.when_useful(["a", "b"], 2) is None  # every core grades already
    assert AheadOfTurn.when_useful(["a"], 1) is None
    monkeypatch.setattr(ahead_module, "spare_cores", lambda: [])
    assert AheadOfTurn.when_useful(["a", "b"], 1) is None
    assert spare_cores() == (CORES[:2] if len(CORES) >= 2 else [])


# ---- course grade --jobs 1: kernels start ahead, cells run in turn -----------------------------------------

GRADER = Path(__file__).resolve().parent / "support" / "grade_lab98.py"
RECORD = """\
import json, os, time
def _started(pid):  # when this process started, in seconds since the epoch
    ticks = int(open(f"/proc/{{pid}}/stat").read().rsplit(")", 1)[1].split()[19])
    boot = next(int(line.split()[1]) for line in open("/proc/stat") if line.startswith("btime"))
    return boot + ticks / os.sysconf("SC_CLK_TCK")
open({path!r}, "w").write(json.dumps({{"at": time.time(), "kernel_started": _started(os.getpid()),
    "names": sorted(n for n in globals() if not n.startswith("_")), "history": len(In),
    "databases": lab.db.client.list_database_names()}}))
"""


@pytest.mark.slow
@two_cores
def test_at_one_job_the_next_kernel_starts_ahead_but_its_cells_wait_for_the_previous_grading(tmp_path, monkeypatch):
    from course.handout.notebooks import write_notebook
    from test_grading import _install

    _install(monkeypatch)
    traces, learners = tmp_path / "traces", ["ann", "ben", "cat"]
    traces.mkdir()
    for learner in learners:
        notebook = fake_lesson.solution_notebook()
        notebook.cells.insert(1, fake_lesson.code(RECORD.format(path=str(traces / f"{learner}-first.json"))))
        notebook.cells.append(fake_lesson.code("import time, json\ntime.sleep(3)\n"
                                               f"open({str(traces / (learner + '-last.json'))!r}, 'w')"
                                               ".write(json.dumps({'at': time.time()}))"))
        (tmp_path / "class" / learner).mkdir(parents=True)
        write_notebook(notebook, tmp_path / "class" / learner / "99-fake-lab.ipynb")
    # unsandboxed, so that the kernels can leave their traces where this test reads them
    child = subprocess.Popen([sys.executable, "-u", str(GRADER), str(tmp_path / "class"), "--out",
                              str(tmp_path / "out"), "--jobs", "1", "--unsandboxed", "--timeout", "60"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             cwd=Path(__file__).resolve().parent.parent)
    announced = {}
    for line in child.stdout:
        if line.startswith("grading "):
            announced[line.split()[1].rstrip(":")] = time.time()
    assert child.wait() == 0
    with (tmp_path / "out" / "totals.csv").open() as handle:
        percent = {row["learner"]: row["percent"] for row in csv.DictReader(handle)}
    assert percent == {learner: "100.0" for learner in learners}
    first = {who: json.loads((traces / f"{who}-first.json").read_text()) for who in learners}
    last = {who: json.loads((traces / f"{who}-last.json").read_text())["at"] for who in learners}
    for earlier, later in zip(learners, learners[1:]):
        # its cells ran only once the previous notebook's grading had ended and its own had begun ...
        assert first[later]["at"] > announced[later] > last[earlier]
        # ... though its kernel was started while the previous notebook still ran
        assert first[later]["kernel_started"] < last[earlier], (later, first[later], last[earlier])
    for who in learners:  # the warm-up left the learner nothing to see
        trace = first[who]
        assert trace["history"] == 3, trace  # In[0], the lab's first cell and this one: the notebook's own cells
        assert not [n for n in trace["names"] if "warm" in n], trace["names"]
        assert not [d for d in trace["databases"] if "warm" in d], trace["databases"]
