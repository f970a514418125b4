"""Grading a whole class: find the notebooks, grade each (N at once), keep every result, write the reports.

Every notebook is graded in its own kernel; each result is saved as soon as
it is known (see :mod:`course.grading.store`), so a run that is killed can be
started again and grades only what is missing.  Whatever happens to one
notebook (a crash, a time-out, a file that is not a notebook), the others are
graded and every learner gets rows in the gradebook.
"""

from __future__ import annotations

import os
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from course.grading import store
from course.grading.gradebook import write_reports
from course.grading.runner import (
    DEFAULT_TIMEOUT, Graded, Limits, error_result, grade_notebook, lab_exercises,
)
from course.grading.secret import SecretTests, load_secret_tests
from course.engine.results import Result, Status


@dataclass
class ClassReport:
    """What a grading run did."""

    graded: list[Graded]
    gradebook: Path
    feedback: list[Path]
    totals: Path | None = None
    summary_file: Path | None = None
    fresh: list[tuple[str, Path | None]] = field(default_factory=list)  #: graded in this run
    reused: list[tuple[str, Path | None]] = field(default_factory=list)  #: taken from an earlier run
    messages: list[str] = field(default_factory=list)  #: run-level: what was skipped and why

    def summary(self) -> str:
        """How many notebooks and learners, what was reused, and which notebooks were skipped and why."""
        learners = {g.learner for g in self.graded}
        skipped = [g for g in self.graded if g.skipped]
        line = (f"graded {len(self.graded) - len(skipped)} of {len(self.graded)} notebooks "
                f"for {len(learners)} learners")
        if self.reused:
            line += f" ({len(self.reused)} kept from an earlier run, {len(self.fresh)} graded now)"
        if skipped:
            line += "; skipped: " + "; ".join(f"{g.learner} ({g.skipped})" for g in skipped)
        flagged = sorted({g.learner for g in self.graded if g.flags})
        if flagged:
            line += f"; to review for possible tampering: {', '.join(flagged)}"
        return "\n".join([line, *self.messages])


def default_jobs() -> int:
    """One notebook per core."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _empty_folder(learner: str, folder: Path, lab: str | None, secret: SecretTests) -> Graded:
    reason = f"no notebook (.ipynb) was found in the folder {folder.name}/"
    if lab:
        title, exercises = lab_exercises(lab, secret)
        return Graded(learner, folder, lab, [error_result(e, reason) for e in exercises], [], reason, title)
    return Graded(learner, folder, "-", [Result("-", "", Status.ERROR, reason, 0.0, 0.0)], [], reason)


def _refused(learner: str, where: Path, lab: str | None, secret: SecretTests, why: str) -> Graded:
    if lab:
        title, exercises = lab_exercises(lab, secret)
        return Graded(learner, where, lab, [error_result(e, why) for e in exercises], [], why, title)
    return Graded(learner, where, "-", [Result("-", "", Status.ERROR, why, 0.0, 0.0)], [], why)


def _crashed(learner: str, notebook: Path, lab: str | None, secret: SecretTests, error: BaseException,
             prefix: str = "the grader failed on this notebook") -> Graded:
    from course.grading.runner import _known_lab_from_name

    reason = f"{prefix} ({type(error).__name__}: {error})" if prefix else str(error)
    lab = lab or _known_lab_from_name(notebook)
    if lab:
        title, exercises = lab_exercises(lab, secret)
        return Graded(learner, notebook, lab, [error_result(e, reason) for e in exercises], [], reason, title)
    return Graded(learner, notebook, "-", [Result("-", "", Status.ERROR, reason, 0.0, 0.0)], [], reason)


def _why_unready(graded: Graded) -> str:
    """Why a process started ahead ended before its turn, from the grading it would have sent."""
    stopped = [note for note in graded.notes if note.startswith("execution stopped")]
    return next((text for text in (graded.skipped, *stopped, *graded.notes) if text), "it ended before its turn")


def _size(path: Path) -> int:
    """The file's size in bytes (0 when it cannot be read): a notebook's size stands for its grading time."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _lab_of(notebook: Path) -> str | None:
    """The lab ``notebook`` belongs to, None when it cannot be read: which course code its grading key names."""
    from course.handout.notebooks import NotebookError, read_lab_id

    try:
        return read_lab_id(notebook)
    except (NotebookError, ValueError):
        return None


def grade_class(paths: list[str | Path], out: Path, timeout: float = DEFAULT_TIMEOUT,
                progress: Callable[[str], None] | None = None, *, jobs: int | None = None,
                force: bool = False, limits: Limits | None = None, tests: Path | None = None,
                lab: str | None = None, sandbox: bool = True, key_file: Path | None = None,
                shard: tuple[int, int] | None = None) -> ClassReport:
    """Grade every notebook ``paths`` name; write ``out/gradebook.csv``, ``totals.csv``, ``summary.md``, ``feedback/``.

    Each notebook runs in its own kernel, in a bubblewrap sandbox unless ``sandbox`` is false (the
    caller checks :func:`course.grading.sandbox.sandbox_problem` first), and is graded outside it.
    Raises :class:`~course.grading.submissions.UsageError` if a path does not exist or ``out`` cannot
    be used, and :class:`~course.grading.secret.SecretTestError` if ``tests`` is unusable.
    ``shard`` ``(K, N)`` grades only the learners of the K-th of N shards and writes its reports and manifest
    under ``out/shards/K-of-N/`` (:mod:`course.grading.shards`; ``course merge`` makes the gradebook).
    """
    from course.store.backends import close_all
    from course.grading.checkdb import named_server, open_checks_databases, preload_checks_engine
    from course.grading.ahead import AheadOfTurn, NotReady, Unprepared
    from course.grading.isolation import START_GRACE, Failure, Isolated, can_isolate, start_isolated
    from course.grading.workers import grade_all, sigterm_as_interrupt
    from course.grading.digest import code_digest
    from course.grading.runner import load_secret_modules
    from course.grading.submissions import check_out_location, scan

    out = Path(out)
    limits = limits or Limits(cell_timeout=timeout)
    secret = load_secret_tests(tests)
    check_out_location(out, paths)
    mac_key = store.prepare_out(out, key_file)
    found = scan(paths)
    if shard is not None:  # this shard's learners only; the whole class goes in its manifest
        from course.grading import shards

        found, everyone = shards.select(found, shard, lab)
    messages = list(found.messages)
    if sandbox:
        from course.grading import package_cache
        from course.grading.sandbox import learner_package

        kept, why = learner_package()
        if not why and Path(kept).is_relative_to(package_cache.cache_folder()):
            repaired = len(package_cache.REPAIRED)  # checked on every run: an unsandboxed one may have changed it
            try:
                package_cache.cached_learner_package()
            except Exception as error:  # noqa: BLE001 - said below
                why = f"{type(error).__name__}: {error}"
            for line in package_cache.REPAIRED[repaired:]:
                messages.append(line)
                if progress:
                    progress(line)
        if why:
            messages.append(f"the sandboxes show the instructor's course package, hidden checks included "
                            f"(the learners' copy could not be made: {why})")
    settings = {"lab": lab or "", "secret": secret.digest}
    digests: dict[str, str] = {}

    def digest_of(notebook: Path) -> str:  # the course code that grades this notebook's lab
        which = lab or _lab_of(notebook) or ""
        if which not in digests:
            digests[which] = code_digest(which or None)
        return digests[which]
    run_id = secrets.token_hex(8)
    lock = threading.Lock()
    results: dict[tuple[str, str], Graded] = {}
    fresh, reused = [], []

    def say(line: str) -> None:
        if progress:
            with lock:
                progress(line)

    for learner, folder in found.empty:
        results[(learner, str(folder))] = _empty_folder(learner, folder, lab, secret)
    for learner, where, why in found.refused:
        results[(learner, str(where))] = _refused(learner, where, lab, secret, why)
    items = [(learner, notebook, store.grading_key(notebook, digest_of(notebook), settings))
             for learner, notebook in found.submissions]
    plan = store.plan_reuse(out, items, mac_key, force=force)
    results.update(plan.kept)
    reused = [(learner, Path(notebook)) for learner, notebook in plan.kept]
    forged = {learner for learner, _, _ in plan.forged}
    for line in plan.messages:
        say(line)
    messages += [line for line in plan.messages if not line.startswith("keeping ")]
    todo = plan.todo
    if shard is not None:  # written before grading: a shard killed part-way is known, and so are its learners
        labs = shards.lab_table(everyone, secret)
        shards.write_manifest(out, shard, everyone, items, results, messages, mac_key, labs=labs, complete=False)
    secret_modules = load_secret_modules(secret)
    jobs = max(1, jobs or default_jobs())
    # A server MONGODB_URI names is connected to now (a URI it cannot use stops the run with the reason),
    # its clients shared by worker threads: the server does the work, and each notebook's databases carry
    # this run's secret.  Otherwise each notebook is graded in a process of its own with an engine of its
    # own (:mod:`course.grading.isolation`), where this platform can fork one.
    servers = open_checks_databases(min(jobs, len(todo))) if named_server() and todo else []
    opened, mine = list(servers), threading.local()
    isolating = not servers and can_isolate()
    chosen = os.environ.get("COURSE_BACKEND", "").strip()
    if todo and chosen:
        where = "the server MONGODB_URI names" if servers else "the grader's own mongoeco engine (or mongomock " \
            "where mongoeco cannot run)"
        note = (f"COURSE_BACKEND={chosen} chose the learners' kernels' backend (their own lab database) only: "
                f"every verdict was computed on {where}")
        messages.append(note)
        if progress:
            progress(note)
    if todo and not servers and not isolating:
        messages.append("each notebook was graded with a fresh checks' engine, but in the grader's own process "
                        "(this platform cannot fork one per notebook): the grader's memory and the time of "
                        "the checks were not bounded")

    def worker_checks():
        if not hasattr(mine, "checks"):
            with lock:
                mine.checks = servers.pop() if servers else None
            if mine.checks is None:
                mine.checks = open_checks_databases(1)[0]
                with lock:
                    opened.append(mine.checks)
        return mine.checks

    def grade_here(learner: str, notebook: Path, checks, when_ready=None) -> Graded:
        try:
            return grade_notebook(notebook, learner, limits=limits, expected_lab=lab, secret=secret,
                                  checks=checks, sandbox=sandbox, secret_modules=secret_modules,
                                  when_ready=when_ready)
        except NotReady:
            raise  # a process started ahead that could not get ready: not this learner's result
        except Exception as error:  # a bug or an environment problem: this learner gets error rows
            return _crashed(learner, notebook, lab, secret, error)

    # One job on a machine with a core to spare: while a notebook is graded, the next one's grading process
    # starts its engine and its kernel on the other core, and waits for its turn (grade_all takes the tasks
    # of one job in order; course/grading/ahead.py).  No cell of a notebook runs before that turn.
    ahead = AheadOfTurn.when_useful(todo, jobs) if isolating else None

    def launch(item: tuple[str, Path, str], core: int | None, early: bool) -> Isolated:
        """The grading process of ``item`` on ``core``: started ``early`` (it gets ready, then waits for its
        turn), or at its turn."""
        learner, notebook, _ = item

        def in_its_own_process(turn: Callable[[], float]) -> Graded | Unprepared:
            checks = open_checks_databases(1)[0]
            checks.private = True
            checks.start_soon()  # ready by the time the kernel has run the answer cell
            # the process ends with its engine: no close
            if not early:
                turn()
                return grade_here(learner, notebook, checks)
            began: list[float] = []

            def when_ready() -> float:
                began.append(turn())
                return began[0]

            try:
                graded = grade_here(learner, notebook, checks, when_ready)
            except NotReady as why:
                return Unprepared(str(why))
            # a grading that ended before its turn ended while getting ready (a kernel that did not start, a
            # full disk), beside the previous learner's code: nobody's result, it is graded afresh
            return graded if began else Unprepared(_why_unready(graded))

        return start_isolated(in_its_own_process, memory_mb=limits.grader_memory_mb, core=core)

    def grade(item: tuple[str, Path, str]) -> Graded:
        learner, notebook, _ = item
        if servers or opened:
            return grade_here(learner, notebook, worker_checks())
        if not can_isolate():  # a fresh engine, in this process
            return grade_here(learner, notebook, None)
        taken = ahead.take(item) if ahead is not None else None
        process = taken or launch(item, ahead.first_core if ahead is not None else None, early=False)
        process.go(limits.notebook_timeout + START_GRACE)
        if ahead is not None:
            ahead.prepare(item, lambda following, core: launch(following, core, early=True), process.core)
        outcome = process.result()
        # started ahead, it could not get ready, or it died for a reason outside the notebook (while it waited,
        # perhaps): nothing of the notebook counts, it is graded from now as if nothing had been started ahead
        if taken is not None and (isinstance(outcome, Unprepared)
                                  or (isinstance(outcome, Failure) and not outcome.limit)):
            line = (f"{learner}: its grading process could not get ready ahead ({outcome.reason}) while "
                    f"{fresh[-1][0]}'s notebook was graded; graded afresh")
            say(line)
            with lock:
                messages.append(line)
            process = launch(item, process.core, early=False)
            process.go(limits.notebook_timeout + START_GRACE)
            outcome = process.result()
        if isinstance(outcome, Failure):
            graded = _crashed(learner, notebook, lab, secret, RuntimeError(outcome.reason), prefix="")
            graded.keep = outcome.limit
            return graded
        return outcome

    def started(item: tuple[str, Path, str]) -> None:
        say(f"grading {item[0]}: {item[1]}")

    def finished(item: tuple[str, Path, str], graded: Graded, keep: bool) -> None:
        learner, notebook, key = item
        if learner in forged:
            graded.flags.append("its saved result from an earlier run failed verification (edited on disk?); "
                                "it was graded again")
        if keep and graded.keep:
            store.save(out, key, graded, notebook, run_id, mac_key=mac_key)
        with lock:
            results[(learner, str(notebook))] = graded
            fresh.append((learner, notebook))

    def lost(item: tuple[str, Path, str], why: str) -> Graded:
        return _crashed(item[0], item[1], lab, secret, RuntimeError(why))

    if jobs > 1:  # the largest first: the run ends on small notebooks, not with one worker alone on a long one
        todo = sorted(todo, key=lambda item: -_size(item[1]))
    with sigterm_as_interrupt():  # a SIGTERM leaves what Ctrl-C leaves: no process, no folder
        try:
            preload_checks_engine()  # before workers fork: each starts its engine without importing it again
            grade_all(todo, jobs, grade, started, finished, lost, processes=False if opened else None)
        finally:
            if ahead is not None:
                ahead.cancel()
            for checks in opened:
                checks.close()
            close_all()
    graded = [results[k] for k in sorted(results)]
    written = write_reports(graded, out if shard is None else shards.shard_folder(out, shard), messages)
    if shard is not None:
        shards.write_manifest(out, shard, everyone, items, results, messages, mac_key, labs=labs, complete=True)
    return ClassReport(graded, written["gradebook"], written["feedback"], written["totals"],
                       written["summary"], fresh, reused, messages)
