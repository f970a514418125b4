"""Attacks through the relay, the engine, the feedback and the learner-package cache change no grade (issue 27).

Lab 98's learners (tests/support/relay_attacks.py) are graded by one worker in order, each attacker
between two honest learners, in the sandbox on the embedded engine; then the cross-database attackers
beside classmates graded at the same time on a shared server (``MONGODB_URI``, mongoeco's wire server);
then the learner-package cache is poisoned by an ``--unsandboxed`` run and an honest learner graded in
the sandbox after it.  Needs bubblewrap and mongoeco (Python >= 3.13).
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from course.store.backends import mongoeco_available
from course.grading.execution import HIDDEN_GRACE_MAX
from course.grading.sandbox import sandbox_problem
from support import fake_lesson, relay_attacks, tree_memory

from test_grading import _install
from test_grading_hostile import _grades

pytestmark = [pytest.mark.slow, pytest.mark.containment,
              pytest.mark.skipif(bool(sandbox_problem()), reason=f"no sandbox here: {sandbox_problem()}"),
              pytest.mark.skipif(not mongoeco_available(), reason="lab 98's checks need mongoeco (Python >= 3.13)")]

TIMEOUT, NOTEBOOK_TIMEOUT = 5, 15  #: per cell and call, per notebook
LIMITS = ["--timeout", str(TIMEOUT), "--notebook-timeout", str(NOTEBOOK_TIMEOUT), "--memory-mb", "1024"]
SLACK = 12  #: seconds a killed worker may take to be replaced, on a busy 2-core machine
MEMORY_BOUND = 1536 << 20  #: the grading's growth at its peak: the memory bomb stores 2.4 GB if nothing stops it
AFTER_BOUND = 400 << 20  #: and once the bomb's notebook is over
MAIN = ["race_lsid_first", "race_raw_skipped_keys", "race_union_with", "race_lookup", "race_distinct",
        "control_by_hand", "probe_commands", "engine_state", "pipelines", "memory_bomb", "time_bomb",
        "leak_message", "leak_type_name", "leak_str", "leak_later", "leak_return"]
LEAKERS = [attack for attack in MAIN if attack.startswith("leak_")]
SENTINELS = (fake_lesson.HIDDEN_SENTINEL, relay_attacks.SECRET_SENTINEL)


class _Stamped(io.TextIOBase):
    """A stream that keeps each line it is written with the monotonic time it arrived."""

    def __init__(self) -> None:
        self.lines: list[tuple[float, str]] = []

    def write(self, text: str) -> int:
        self.lines += [(time.monotonic(), line) for line in text.splitlines() if line.strip()]
        return len(text)

    def text(self) -> str:
        return "\n".join(line for _, line in self.lines)

    def spans(self) -> dict[str, tuple[float, float]]:
        """learner -> (when its grading started, when the next one or the run's reports started)."""
        starts = [(t, line.split()[1].rstrip(":")) for t, line in self.lines if line.startswith("grading ")]
        end = next((t for t, line in self.lines if line.startswith("wrote ")), time.monotonic())
        return {who: (t, nxt) for (t, who), nxt in zip(starts, [t for t, _ in starts[1:]] + [end])}


def _messages(out: Path) -> dict[tuple[str, str], str]:
    with (out / "gradebook.csv").open(encoding="utf-8") as handle:
        return {(row["learner"], row["exercise"]): row["message"] for row in csv.DictReader(handle)}


def _not_better(got: dict, plain: dict) -> dict:
    """The exercises where ``got`` beats what the plain answers earn (more points, or correct where they are not)."""
    return {exercise: (got.get(exercise), wanted) for exercise, wanted in plain.items()
            if got.get(exercise) is None or got[exercise][2] != wanted[2]
            or float(got[exercise][1]) > float(wanted[1])
            or (got[exercise][0] == "correct" and wanted[0] != "correct")}


def _lab98(patch: pytest.MonkeyPatch) -> None:
    import course.lessons

    _install(patch)
    patch.setitem(course.lessons.MODULES, fake_lesson.DB_LAB, fake_lesson.DB_MODULE)
    patch.setitem(sys.modules, f"course.lessons.{fake_lesson.DB_MODULE}", None)
    fake_lesson.install_db_lab()


GRADER = Path(__file__).resolve().parent / "support" / "grade_lab98.py"


def _grade(args: list[str]) -> tuple[int, _Stamped]:
    """Run ``course grade args`` in a process of its own (see tests/support/grade_lab98.py), lines stamped."""
    stream = _Stamped()
    child = subprocess.Popen([sys.executable, "-u", str(GRADER), *args], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, cwd=Path(__file__).resolve().parent.parent)
    for line in child.stdout:
        stream.write(line)
    return child.wait(), stream


# ---- one worker, in order: every attack between two honest learners ---------------------------------

@pytest.fixture(scope="module")
def relay_class(tmp_path_factory):
    """Grade :data:`MAIN` once (``--jobs 1``); the grades, the timings, the memory samples and the output."""
    root = tmp_path_factory.mktemp("relay")
    out = root / "out"
    with pytest.MonkeyPatch.context() as patch:
        _lab98(patch)
        submissions, secret, folders = relay_attacks.write_class(root, MAIN)
        args = [str(submissions), "--out", str(out), "--lab", "98", "--tests", str(secret), "--jobs", "1", *LIMITS]
        sampler = tree_memory.start(root / "memory.txt")
        time.sleep(0.3)  # a baseline sample or two
        started = time.monotonic()
        try:
            code, stream = _grade(args)
        finally:
            elapsed = time.monotonic() - started
            tree_memory.stop(sampler)
    return SimpleNamespace(root=root, out=out, args=args, folders=folders, code=code, stream=stream,
                           elapsed=elapsed, grades=_grades(out), samples=tree_memory.read(root / "memory.txt"))


def _learner(relay_class, attack: str) -> str:
    return next(folder for folder, which in relay_class.folders.items() if which == attack)


def test_the_class_is_graded_in_the_order_written(relay_class):
    assert relay_class.code == 0, relay_class.stream.text()
    assert list(relay_class.stream.spans()) == sorted(relay_class.folders)  # honest, attacker, honest, ...


def test_honest_learners_before_and_after_every_attack_keep_full_marks(relay_class):
    honest = [folder for folder, attack in relay_class.folders.items() if attack == "honest"]
    assert len(honest) == len(MAIN) + 1
    lost = {learner: relay_class.grades.get(learner) for learner in honest
            if relay_class.grades.get(learner) != relay_attacks.FULL}
    assert not lost, lost


def test_commands_sent_by_hand_still_work(relay_class):
    # the control: without it, a raw attack refused for a broken socket or message would prove nothing
    learner = _learner(relay_class, "control_by_hand")
    assert relay_class.grades[learner] == relay_attacks.FULL, _messages(relay_class.out)


@pytest.mark.parametrize("attack", [a for a in MAIN if a != "control_by_hand"])
def test_no_attack_earns_more_than_its_plain_answers(relay_class, attack):
    learner = _learner(relay_class, attack)
    gained = _not_better(relay_class.grades[learner], relay_attacks.expected(attack))
    messages = {k[1]: v[:400] for k, v in _messages(relay_class.out).items() if k[0] == learner}
    assert not gained, (gained, messages)  # 98.3's message names what got through ("ESCAPED [...]")


@pytest.mark.parametrize("attack", LEAKERS)
def test_check_data_never_reaches_the_feedback(relay_class, attack):
    learner = _learner(relay_class, attack)
    out = relay_class.out
    files = [*out.glob(f"feedback/{learner}.*"), *out.glob(f"results/{learner}/*")]  # summary.md: below
    texts = {str(p.relative_to(out)): p.read_text(encoding="utf-8", errors="replace") for p in files}
    texts["gradebook.csv"] = "\n".join(v for k, v in _messages(out).items() if k[0] == learner)
    leaked = {name: [s for s in SENTINELS if s in text] for name, text in texts.items()
              if any(s in text for s in SENTINELS)}
    assert not leaked, {name: texts[name][:600] for name in leaked}


def test_no_output_of_the_run_holds_check_data(relay_class):
    out = relay_class.out
    text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file())
    for sentinel in SENTINELS:
        assert sentinel not in relay_class.stream.text() and sentinel not in text, sentinel


def test_a_hidden_checks_exception_is_named_by_its_type_only(relay_class):
    learner = _learner(relay_class, "leak_message")
    message = _messages(relay_class.out)[(learner, "98.2")]
    assert "ValueError" in message and "saw" not in message and "sku-" not in message, message


def test_a_write_past_the_budget_is_the_exercises_error(relay_class):
    learner = _learner(relay_class, "memory_bomb")
    status, _, _ = relay_class.grades[learner]["98.3"]
    message = _messages(relay_class.out)[(learner, "98.3")]
    assert status == "error" and "ESCAPED" not in message, message


def test_the_time_bomb_costs_at_most_its_notebooks_limit(relay_class):
    spans = relay_class.stream.spans()
    taken = {learner: round(end - start, 1) for learner, (start, end) in spans.items()}
    bomb = _learner(relay_class, "time_bomb")
    assert relay_class.grades[bomb]["98.1"][0] == "error"  # it did run long: the limit stopped it
    assert taken[bomb] <= NOTEBOOK_TIMEOUT + HIDDEN_GRACE_MAX + SLACK, taken  # unbounded: over 70 s
    slow = {learner: t for learner, t in taken.items() if learner != bomb and t > 3 * TIMEOUT}
    assert not slow, taken  # no honest learner waits on an engine still busy with the bomb (~70 s unbounded)


def test_the_memory_bomb_costs_at_most_its_notebooks_bound(relay_class):
    samples, spans = relay_class.samples, relay_class.stream.spans()
    assert samples, "no memory samples"
    first_start = min(start for start, _ in spans.values())
    baseline = min([size for when, size in samples if when <= first_start] or [samples[0][1]])
    peak = max(size for _, size in samples)
    assert peak - baseline <= MEMORY_BOUND, (peak >> 20, baseline >> 20)
    after = _learner(relay_class, "memory_bomb")
    after = sorted(relay_class.folders)[sorted(relay_class.folders).index(after) + 1]  # the honest learner next
    start, end = spans[after]
    later = [size for when, size in samples if start + 0.5 <= when <= end] or [baseline]
    assert max(later) - baseline <= AFTER_BOUND, (max(later) >> 20, baseline >> 20)


def test_a_rerun_keeps_the_results(relay_class):
    with pytest.MonkeyPatch.context() as patch:
        _lab98(patch)
        code, stream = _grade(relay_class.args)
    assert code == 0 and "failed verification" not in stream.text(), stream.text()
    assert _grades(relay_class.out) == relay_class.grades


# ---- a shared server (MONGODB_URI), classmates graded at the same time ------------------------------

SERVER = Path(__file__).resolve().parent / "support" / "wire_server.py"
CANARY = [{"_id": i, "note": "the instructor's own data"} for i in range(5)]
#: seconds the classmates' attacker writes into their databases.  At --jobs 2 the two attackers (the largest
#: notebooks) are graded first, side by side, so a classmate starts only once the other attacker is done:
#: on a loaded 2-core machine that took 6.5 s, past a 6 s attack (CI), so the attack lasts longer than that
ATTACK_WINDOW = 12
SHARED_LIMITS = [*LIMITS, "--timeout", str(ATTACK_WINDOW + 3), "--notebook-timeout", str(3 * ATTACK_WINDOW)]


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory):
    """A mongoeco wire server with the instructor's own database in it, and the class graded on it."""
    import pymongo

    root = tmp_path_factory.mktemp("shared")
    port_file = root / "port"
    server = subprocess.Popen([sys.executable, str(SERVER), "--port", "0", "--port-file", str(port_file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if port_file.exists():
                break
            time.sleep(0.05)
        uri = f"mongodb://127.0.0.1:{port_file.read_text().strip()}/?directConnection=true"
        client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)
        client.instructor_keep.data.insert_many([dict(d) for d in CANARY])
        before = set(client.list_database_names())
        out = root / "out"
        with pytest.MonkeyPatch.context() as patch:
            _lab98(patch)
            patch.setenv("MONGODB_URI", uri)
            submissions, secret, folders = relay_attacks.write_class(
                root, ["pipelines", "classmates"], victims=(relay_attacks.honest_name(0),
                                                            relay_attacks.honest_name(1), relay_attacks.honest_name(2)),
                attack_seconds=ATTACK_WINDOW, extra={"classmates": relay_attacks.CLASSMATE})
            code, stream = _grade([str(submissions), "--out", str(out), "--lab", "98", "--tests", str(secret),
                                   "--jobs", "2", *SHARED_LIMITS])
        after = set(client.list_database_names())
        canary = list(client.instructor_keep.data.find())
        client.close()
    finally:
        server.terminate()
        server.wait(10)
    return SimpleNamespace(out=out, code=code, stream=stream, folders=folders, grades=_grades(out),
                           before=before, after=after, canary=canary)


def test_classmates_graded_beside_the_attackers_keep_full_marks(shared_server):
    assert shared_server.code == 0, shared_server.stream.text()
    honest = {f: shared_server.grades.get(f) for f, attack in shared_server.folders.items() if attack == "honest"}
    assert honest == {f: relay_attacks.FULL for f in honest}, _messages(shared_server.out)


def test_the_attacks_on_classmates_overlapped_their_grading(shared_server):
    spans = shared_server.stream.spans()  # with --jobs 2 the spans overlap: a learner starts while another runs
    attacker = next(f for f, attack in shared_server.folders.items() if attack == "classmates")
    starts = [t for t, line in shared_server.stream.lines if line.startswith(f"grading {attacker}")]
    assert starts
    during = [f for f, (start, _) in spans.items()
              if shared_server.folders[f] == "honest" and starts[0] < start < starts[0] + ATTACK_WINDOW]
    assert during, spans  # at least one classmate was graded while the attacker wrote


@pytest.mark.parametrize("attack", ["pipelines", "classmates"])
def test_no_attack_on_a_shared_server_earns_more_than_its_plain_answers(shared_server, attack):
    learner = next(f for f, which in shared_server.folders.items() if which == attack)
    gained = _not_better(shared_server.grades[learner], relay_attacks.expected(attack, {"classmates":
                                                                                        relay_attacks.CLASSMATE}))
    messages = {k[1]: v[:400] for k, v in _messages(shared_server.out).items() if k[0] == learner}
    assert not gained, (gained, messages)


def test_nothing_outside_the_course_is_touched_and_nothing_is_left(shared_server):
    assert shared_server.canary == CANARY
    assert shared_server.after == shared_server.before, sorted(shared_server.after ^ shared_server.before)


# ---- the learner-package cache, poisoned by an unsandboxed run --------------------------------------

POISON = ("\ntry:\n    import pymongo.collection as _c\n"
          "    _c.Collection.count_documents = lambda self, *a, **k: -1\n"
          "    _c.Collection.update_one = lambda self, *a, **k: None\n"
          "except Exception:\n    pass\n")

POISONERS = {
    # code appended to every module of the kept copy
    "source": '''
for path in PACKAGES:
    for source in path.rglob("*.py"):
        with source.open("a") as handle:
            handle.write(POISON)
        POISONED.append(str(source))
''',
    # the sources left alone; their compiled copies, the ones Python loads, replaced under the same header
    "bytecode": '''
import importlib.util, marshal
for path in PACKAGES:
    for source in [path / "__init__.py", path / "grading" / "agent.py", path / "grading" / "kernel.py"]:
        cached = Path(importlib.util.cache_from_source(str(source)))
        if source.exists() and cached.exists():
            header = cached.read_bytes()[:16]
            code = compile(source.read_text() + POISON, str(source), "exec")
            cached.write_bytes(header + marshal.dumps(code))
            POISONED.append(str(cached))
''',
    # one module rewritten to its own size and times (its docstring gives way), its compiled copy to match
    "same_size": '''
import ast, importlib.util, marshal
LINE = "import pymongo.collection as _c;_c.Collection.count_documents=lambda s,*a,**k:-1\\n"
for path in PACKAGES:
    source = path / "__init__.py"
    old, stat = source.read_text(), source.stat()
    rest = "".join(old.splitlines(keepends=True)[ast.parse(old).body[0].end_lineno:])  # all but the docstring
    new = LINE + "#" * (len(old) - len(LINE) - len(rest) - 1) + "\\n" + rest
    assert len(new.encode()) == stat.st_size, (len(new), stat.st_size)
    source.write_text(new)
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    cached = Path(importlib.util.cache_from_source(str(source)))
    if cached.exists():
        cached.write_bytes(cached.read_bytes()[:16] + marshal.dumps(compile(new, str(source), "exec")))
    POISONED.append(str(source))
''',
}


def _poisoner(cache: Path, how: str):
    body = (f"from pathlib import Path\nimport os\nPOISON = {POISON!r}\nPOISONED = []\n"
            f"CACHE = Path({str(cache)!r})  # the instructor's cache (the test's own: never ~/.cache)\n"
            "PACKAGES = [p for p in (CACHE / 'course' / 'learner-package').glob('*/course') if p.is_dir()]\n"
            + POISONERS[how] + "\nprint('poisoned', len(POISONED))\n")
    answers = dict(relay_attacks.HONEST)
    nb = relay_attacks.lab_notebook(answers)
    nb.cells.insert(1, fake_lesson.code(body))
    return nb


def _poisoned(package: Path) -> bool:
    """Whether importing ``course`` from ``package`` (as a kernel would, no bytecode written) runs the poison."""
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import course, pymongo.collection as c; "
             "print(c.Collection.count_documents(None, {}))")
    done = subprocess.run([sys.executable, "-B", "-c", probe, str(package.parent)], capture_output=True, text=True,
                          timeout=60, cwd=package.parent)
    return done.stdout.strip() == "-1"


@pytest.fixture
def own_package_cache(tmp_path, monkeypatch):
    """``XDG_CACHE_HOME`` in ``tmp_path``, the learner package looked up again there (and again after)."""
    from course.grading.sandbox import learner_package

    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    learner_package.cache_clear()  # made once per process: this test's cache, not an earlier test's
    yield cache
    learner_package.cache_clear()  # and no later test's kernels bound to a folder about to be removed


@pytest.mark.parametrize("how", sorted(POISONERS))
def test_a_poisoned_package_cache_changes_no_later_grade(tmp_path, own_package_cache, how):
    from course.handout.notebooks import write_notebook

    cache = own_package_cache
    honest = tmp_path / "honest"
    (honest / "ann").mkdir(parents=True)
    write_notebook(relay_attacks.lab_notebook(relay_attacks.HONEST), honest / "ann" / relay_attacks.NAME)
    bad = tmp_path / "bad"
    (bad / "mallory").mkdir(parents=True)
    write_notebook(_poisoner(cache, how), bad / "mallory" / relay_attacks.NAME)
    full = {**relay_attacks.FULL, "98.2": ("correct", "5", "5")}  # no secret tests here
    with pytest.MonkeyPatch.context() as patch:
        _lab98(patch)
        first, stream = _grade([str(honest), "--out", str(tmp_path / "out1"), "--lab", "98", *LIMITS])
        assert first == 0 and _grades(tmp_path / "out1")["ann"] == full, stream.text()
        packages = list((cache / "course" / "learner-package").glob("*/course"))
        assert packages, "the sandboxed run kept no learner package in XDG_CACHE_HOME"
        before = {p: p.read_bytes() for p in cache.rglob("*") if p.is_file()}
        code, stream = _grade([str(bad), "--out", str(tmp_path / "out2"), "--lab", "98", "--unsandboxed", *LIMITS])
        assert code == 0, stream.text()
        changed = {p for p in cache.rglob("*") if p.is_file() and before.get(p) != p.read_bytes()}
        assert changed, ("the unsandboxed learner could not reach the cache: this test proves nothing",
                         _messages(tmp_path / "out2"))
        assert all(_poisoned(package) for package in packages), "the poison would not run: this test proves nothing"
        code, stream = _grade([str(honest), "--out", str(tmp_path / "out3"), "--lab", "98", *LIMITS])
    assert code == 0, stream.text()
    assert _grades(tmp_path / "out3")["ann"] == full, (stream.text(), _messages(tmp_path / "out3"))
