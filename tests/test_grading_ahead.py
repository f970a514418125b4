"""At one job, the next notebook's grading process gets ready on the spare core, and runs nothing of the
notebook before its turn (course/grading/ahead.py, course/grading/isolation.py's start_isolated).

The process-level scenarios run in a fresh interpreter, as ``course grade`` does: the test process runs
other threads, and forking beside them is what the grader refuses to do.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from course.grading.ahead import AheadOfTurn, spare_cores
from course.grading.sandbox import sandbox_problem
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
    began = turn()
    (marks / "went").write_text(str(time.time()))
    return [os.getpid(), began]
process = start_isolated(work, memory_mb=0)
time.sleep(1.0)
before = {"ready": (marks / "ready").exists(), "went": (marks / "went").exists()}
told, told_monotonic = time.time(), time.monotonic()
process.go(20)
value = process.result()
print(json.dumps({"before": before, "told": told, "went": float((marks / "went").read_text()),
                  "value": value, "pid": process.pid, "told_monotonic": told_monotonic}))
""", str(tmp_path))
    assert found["before"] == {"ready": True, "went": False}
    assert found["went"] >= found["told"]
    pid, began = found["value"]
    assert pid == found["pid"]
    assert 0 <= began - found["told_monotonic"] < 0.5  # the turn says when the parent said go, on its clock


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


def test_only_the_next_task_is_launched_once_on_the_other_core_and_handed_over_at_its_turn():
    launched = []

    def launch(task, core):
        launched.append((task, core))
        return _Launched(task)

    ahead = AheadOfTurn(["a", "b", "c"], [4, 7])
    assert ahead.take("a") is None and ahead.first_core == 4  # the first task has no process ready
    ahead.prepare("a", launch, 4)
    ahead.prepare("a", launch, 4)  # asked again: still one process for b
    assert launched == [("b", 7)] and ahead.waiting == 1
    assert ahead.take("b").task == "b" and ahead.waiting == 0
    ahead.prepare("b", launch, 7)  # b is graded on 7: c gets ready on 4
    ahead.prepare("c", launch, 4)  # the last task: nothing follows it
    assert launched == [("b", 7), ("c", 4)]


def test_a_run_that_stops_cancels_the_process_still_waiting():
    waiting = _Launched("b")
    ahead = AheadOfTurn(["a", "b"], [0, 1])
    ahead.prepare("a", lambda task, core: waiting, 0)
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


def _write_class(root: Path, notebooks: dict) -> Path:
    from course.handout.notebooks import write_notebook

    for learner, notebook in notebooks.items():
        (root / "class" / learner).mkdir(parents=True)
        write_notebook(notebook, root / "class" / learner / "99-fake-lab.ipynb")
    return root / "class"


#: the grader of tests/support/grade_lab98.py, with the warm-up code it sends the kernels it starts ahead replaced
WARMING_GRADER = """
import sys
sys.path.insert(0, {tests!r})
import course.lab.kernel_warmup
course.lab.kernel_warmup.WARM_UP_CODE = {code!r}
from support.grade_lab98 import main
sys.exit(main(sys.argv[1:]))
"""


def _start_grading(root: Path, *more: str, env: dict | None = None, sandboxed: bool = False,
                   warm_up: str | None = None) -> subprocess.Popen:
    """``course grade --jobs 1`` of ``root/class`` in a process of its own (lab 99 registered); unsandboxed
    unless ``sandboxed``, so that the kernels can leave traces where these tests read them; ``warm_up``: the
    code the kernels started ahead run instead of the course's warm-up."""
    tests = Path(__file__).resolve().parent
    grader = (["-c", WARMING_GRADER.format(tests=str(tests), code=warm_up)] if warm_up is not None
              else [str(GRADER)])
    return subprocess.Popen([sys.executable, "-u", *grader, str(root / "class"), "--out", str(root / "out"),
                             "--jobs", "1", "--timeout", "60", *([] if sandboxed else ["--unsandboxed"]), *more],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=tests.parent)


def _percent(out: Path) -> dict[str, str]:
    with (out / "totals.csv").open() as handle:
        return {row["learner"]: row["percent"] for row in csv.DictReader(handle)}


def _last_cell(path: Path, seconds: float, then: str = "") -> object:
    return fake_lesson.code(f"import time, json\ntime.sleep({seconds})\n{then}\n"
                            f"open({str(path)!r}, 'w').write(json.dumps({{'at': time.time()}}))")


@pytest.mark.slow
@two_cores
def test_at_one_job_the_next_kernel_starts_ahead_but_its_cells_wait_for_the_previous_grading(tmp_path, monkeypatch):
    from test_grading import _install

    _install(monkeypatch)
    traces, learners = tmp_path / "traces", ["ann", "ben", "cat"]
    traces.mkdir()
    notebooks = {}
    for learner in learners:
        notebook = fake_lesson.solution_notebook()
        notebook.cells.insert(1, fake_lesson.code(RECORD.format(path=str(traces / f"{learner}-first.json"))))
        notebook.cells.append(_last_cell(traces / f"{learner}-last.json", 3))
        notebooks[learner] = notebook
    _write_class(tmp_path, notebooks)
    child = _start_grading(tmp_path)
    announced = {}
    for line in child.stdout:
        if line.startswith("grading "):
            announced[line.split()[1].rstrip(":")] = time.time()
    assert child.wait() == 0
    assert _percent(tmp_path / "out") == {learner: "100.0" for learner in learners}
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


#: from the first notebook's last cell (unsandboxed): kill what the next notebook's grading process, started ahead
#: by the same grader, has got ready: its kernel, or the whole process (a learner's code can reach neither from
#: a sandbox, but can make getting ready fail by taking the cores or the disk: the same "could not get ready")
KILL_THE_NEXT = """\
import os, signal
def _parent(pid):
    return int(open(f"/proc/{{pid}}/stat").read().rsplit(")", 1)[1].split()[1])
def _command(pid):
    return open(f"/proc/{{pid}}/cmdline", "rb").read()
_mine = _parent(os.getpid())  # this notebook's grading process
_grader = _parent(_mine)
_killed = []
for _entry in os.listdir("/proc"):
    if not _entry.isdigit() or int(_entry) in (os.getpid(), _mine):
        continue
    try:
        _pid = int(_entry)
        if {which!r} == "kernel":
            _hit = b"course.grading.launcher" in _command(_pid) and _parent(_parent(_pid)) == _grader
        else:  # a grading process: forked from the grader, so the same command line
            _hit = _parent(_pid) == _grader and _command(_pid) == _command(_grader)
        if _hit:
            os.kill(_pid, signal.SIGKILL)
            _killed.append(_pid)
    except (OSError, ValueError):
        pass
assert _killed, "nothing was waiting"
"""


@pytest.mark.slow
@two_cores
@pytest.mark.parametrize("which", ["kernel", "grading process"])
def test_a_next_notebook_whose_start_ahead_dies_while_it_waits_is_graded_afresh_at_its_turn(tmp_path, monkeypatch,
                                                                                            which):
    from test_grading import _install

    _install(monkeypatch)
    traces = tmp_path / "traces"
    traces.mkdir()
    ann, ben = fake_lesson.solution_notebook(), fake_lesson.solution_notebook()
    ann.cells.append(_last_cell(traces / "ann-last.json", 3, KILL_THE_NEXT.format(which=which)))
    ben.cells.append(_last_cell(traces / "ben-last.json", 0))
    _write_class(tmp_path, {"ann": ann, "ben": ben})
    child = _start_grading(tmp_path)
    output = child.stdout.read()
    assert child.wait() == 0, output
    assert (traces / "ann-last.json").exists(), output  # it did kill what was waiting
    assert _percent(tmp_path / "out") == {"ann": "100.0", "ben": "100.0"}, output  # not ben's failure
    assert "ben: its grading process could not get ready ahead" in output and "graded afresh" in output
    assert "while ann's notebook was graded" in (tmp_path / "out" / "summary.md").read_text()  # for the instructor
    assert (traces / "ben-last.json").exists()  # ben's cells did run, in a process started at its turn


@pytest.mark.slow
@two_cores
def test_kernels_that_die_warming_up_are_not_waited_for_and_leave_no_sandbox_behind(tmp_path, monkeypatch):
    from test_grading import _install

    _install(monkeypatch)
    learners = ["ann", "ben", "cat"]
    _write_class(tmp_path, {learner: fake_lesson.solution_notebook() for learner in learners})
    before = _cgroups()
    started = time.monotonic()
    child = _start_grading(tmp_path, "--timeout", "30", sandboxed=not sandbox_problem(),
                           warm_up="import os; os._exit(1)")  # as if the out-of-memory killer took each one
    output = child.stdout.read()
    assert child.wait() == 0, output
    assert time.monotonic() - started < 30, output  # a dead kernel's warm-up is not waited out (30 s each)
    assert _percent(tmp_path / "out") == {learner: "100.0" for learner in learners}, output
    afresh = {line.split(":")[0] for line in output.splitlines()
              if "could not get ready ahead (its kernel did not warm up)" in line}
    assert afresh == {"ben", "cat"}, output  # the two started ahead; ann was started at its turn
    assert _cgroups() <= before, _cgroups() - before  # each sandbox's pids cgroup went with it


@pytest.mark.slow
@two_cores
@pytest.mark.parametrize("gaps", [(), (0.02,)], ids=["once", "twice"])
def test_a_sigterm_while_the_next_notebook_waits_leaves_no_process_and_no_folder(tmp_path, monkeypatch, request,
                                                                                  gaps):
    from test_grading import _install

    _install(monkeypatch)
    traces = tmp_path / "traces"
    traces.mkdir()
    private = Path(tempfile.mkdtemp(prefix="ahead-", dir="/tmp"))  # short: socket paths live below it
    request.addfinalizer(lambda: shutil.rmtree(private, ignore_errors=True))
    ann, ben = fake_lesson.solution_notebook(), fake_lesson.solution_notebook()
    ann.cells.append(_last_cell(traces / "ann-last.json", 60))
    _write_class(tmp_path, {"ann": ann, "ben": ben})
    before = _cgroups()
    child = _start_grading(tmp_path, env={**os.environ, "TMPDIR": str(private)},  # its private folders go here
                           sandboxed=not sandbox_problem())
    for line in child.stdout:
        if line.startswith("grading ann"):
            break
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(list(private.glob("course-notebook-*"))) < 2:
        time.sleep(0.1)  # ann's grading process and ben's, started ahead
    assert len(list(private.glob("course-notebook-*"))) == 2, (list(private.iterdir()), child.poll())
    time.sleep(2)  # ben's kernel is up and waiting
    child.send_signal(signal.SIGTERM)
    for gap in gaps:  # another one while the first one's clean-ups run
        time.sleep(gap)
        child.send_signal(signal.SIGTERM)
    output = child.stdout.read()
    assert child.wait(timeout=30) != 0, output
    time.sleep(0.5)
    left = [entry for entry in os.listdir("/proc") if entry.isdigit()
            and (_in_folder(int(entry), tmp_path) or _in_folder(int(entry), private))]
    assert left == [] and list(private.iterdir()) == []
    assert _cgroups() <= before, _cgroups() - before
    assert not (traces / "ann-last.json").exists()


def _cgroups() -> set[str]:
    """The sandboxes' pids cgroups there are now (none where the grader makes none: not root)."""
    from course.grading import process_limit

    folder = process_limit.hierarchy() / process_limit.PARENT if process_limit.hierarchy() else None
    return set(os.listdir(folder)) if folder and folder.exists() else set()


def _in_folder(pid: int, folder: Path) -> bool:
    """True when process ``pid`` runs in ``folder`` or below, or names it on its command line."""
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
        command = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
    except OSError:
        return False
    return cwd.startswith(str(folder)) or str(folder) in command
