"""Grading several notebooks at once: one forked worker process per job, or threads where forking is unsafe.

A worker grades one notebook at a time with its own kernel and its own
checks' engine (:mod:`course.grading.engine_host`), which runs inside the
worker.  The checks are interpreter-bound Python, so workers that are threads
of one process take turns on its interpreter lock; forked worker processes
each have their own, and ``--jobs 2`` keeps both cores busy.

:func:`grade_all` forks the workers when it can do so safely: on Linux, from a
process that runs no other thread (``course grade`` does not), so that no
lock another thread holds is copied into a worker.  A worker is a copy of the
grader at that moment (its lessons, secret tests and settings), receives one
task at a time over a pipe and sends back the grading (both pickled: the
worker is the grader's own code, outside every sandbox).  It dies with the
grader (``PR_SET_PDEATHSIG``), and its sandboxes die with it.  Otherwise the
workers are threads of this process, with the same results.

While there are at least as many cores as jobs, each worker keeps to a core
of its own (:func:`own_core`), and so do the kernels it starts (a child
inherits the mask).  A worker and its kernel take turns: the kernel runs a
cell while the worker waits, then a check runs while the kernel waits, over
thousands of messages per notebook.  On one core each hand-over is a switch
between two tasks; spread over two, every message wakes a sleeping core and
moves work between caches, which on a virtual machine is a trip through the
hypervisor.  On the course's 2-core machine this took a tenth to a fifth of the
CPU time off grading at ``--jobs 1`` (issue 14's note has the figures).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

Task = Any
WORKER_GONE = "the grading worker process ended while grading this notebook ({})"


def can_fork_workers() -> bool:
    """True when worker processes can be forked safely here: Linux, and no thread but this one."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def grade_all(tasks: Sequence[Task], jobs: int, grade: Callable[[Task], Any], started: Callable[[Task], None],
              finished: Callable[[Task, Any, bool], None], lost: Callable[[Task, str], Any], *,
              processes: bool | None = None) -> None:
    """Grade every task, ``jobs`` at once; ``finished(task, grade(task), True)`` in this process for each.

    ``started(task)`` runs here as a worker takes the task.  ``grade`` must not raise for a learner's
    trouble (it returns an error grading).  If a worker process dies, its task's grading is
    ``lost(task, why)``, passed as ``finished(task, grading, False)``: not a result to keep, since
    another run may well grade it.  ``processes`` None forks when :func:`can_fork_workers`.
    """
    tasks = list(tasks)
    jobs = max(1, min(jobs, len(tasks)))
    if jobs == 1:
        with own_core(0, 1):
            for task in tasks:
                started(task)
                finished(task, grade(task), True)
        return
    if processes is None:
        processes = can_fork_workers()
    if processes:
        _in_processes(tasks, jobs, grade, started, finished, lost)
        return
    run = _Run(tasks, started, finished, lost)
    run.through([threading.Thread(target=run.grade_here, args=(grade, n, jobs), name=f"course-grade-{n}",
                                  daemon=True) for n in range(jobs)])


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While it lasts, a SIGTERM stops this process's run as Ctrl-C does: SystemExit, so every clean-up on
    the way out runs (grading processes and sandboxes killed, private folders and cgroups removed), and
    further SIGTERMs are ignored until they have (a second one would cut them short).  Only in the main
    thread, the one Python delivers signals to; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _stop_once)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _stop_once(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-ups this starts run to their end
    raise SystemExit(128 + signum)


@contextmanager
def own_core(index: int, jobs: int) -> Iterator[int | None]:
    """Keep the calling thread, and every process it starts meanwhile, on core ``index`` of those this process
    may use, when there are at least ``jobs`` of them and more than one; yield that core, or None when
    nothing changed.  The thread gets its own cores back on the way out.

    A worker and its kernel hand work to each other thousands of times per notebook: on one core each
    hand-over is a task switch, where on two it wakes an idle core (see the module docstring).
    """
    try:
        allowed = os.sched_getaffinity(0)
    except (AttributeError, OSError):  # pragma: no cover - not on Linux
        allowed = set()
    cores = sorted(allowed)
    core = cores[index] if 1 < len(cores) and jobs <= len(cores) and 0 <= index < len(cores) else None
    if core is not None:
        try:
            os.sched_setaffinity(0, {core})  # 0: the calling thread (on Linux, each thread has its own mask)
        except OSError:
            core = None
    try:
        yield core
    finally:
        if core is not None:
            try:
                os.sched_setaffinity(0, allowed)
            except OSError:
                pass


def _in_processes(tasks: list[Task], jobs: int, grade: Callable[[Task], Any], started: Callable[[Task], None],
                  finished: Callable[[Task, Any, bool], None], lost: Callable[[Task, str], Any]) -> None:
    from multiprocessing.connection import Pipe

    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # nothing buffered here is written again by a worker
    grader, workers = os.getpid(), []
    run = _Run(tasks, started, finished, lost)
    try:
        for _ in range(jobs):
            ours, theirs = Pipe()
            pid = os.fork()
            if pid == 0:  # the worker
                ours.close()
                for _, other in workers:
                    other.close()
                _worker(theirs, grade, grader, len(workers), jobs)  # never returns
            theirs.close()
            workers.append((pid, ours))
        run.through([threading.Thread(target=run.dispatch, args=(pid, connection), daemon=True,
                                      name=f"course-grade-worker-{pid}") for pid, connection in workers])
        for task in run.left():  # every worker died: nobody is left to grade these
            finished(task, lost(task, WORKER_GONE.format("no worker was left")), False)
    except BaseException:
        run.aborted = True  # a grading cut short by this stop is nobody's result
        for pid, _ in workers:
            _signal(pid, signal.SIGTERM)
        raise
    finally:
        _stop(workers)


class _Run:
    """The tasks not taken yet, shared by the workers' threads (a dispatcher per worker process, or the
    worker threads themselves), and how the run is going."""

    def __init__(self, tasks: list[Task], started: Callable[[Task], None], finished: Callable[[Task, Any, bool], None],
                 lost: Callable[[Task, str], Any]):
        self._tasks, self._lock = iter(tasks), threading.Lock()
        self._started, self._finished, self._lost = started, finished, lost
        self.aborted = False  #: the grader is stopping: a broken pipe is not a worker's death
        self.failure: BaseException | None = None  #: what went wrong in a dispatcher, raised by the grader

    def _take(self, announce: bool = True) -> tuple[bool, Task]:
        """(True, the next task), announced as it is handed out (so in the order of the list), or (False, None)."""
        with self._lock:
            if self.failure is None:
                for task in self._tasks:
                    if announce:
                        self._started(task)
                    return True, task
            return False, None

    def left(self) -> Iterator[Task]:
        """The tasks nobody took."""
        while True:
            more, task = self._take(announce=False)
            if not more:
                return
            yield task

    def through(self, threads: list[threading.Thread]) -> None:
        """Run the tasks through ``threads`` (each takes one task at a time); raise what went wrong in one."""
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if self.failure is not None:
            raise self.failure

    def grade_here(self, grade: Callable[[Task], Any], index: int, jobs: int) -> None:
        """Grade tasks in this thread (worker ``index`` of ``jobs``), one at a time, until none is left."""
        try:
            with own_core(index, jobs):
                while True:
                    more, task = self._take()
                    if not more:
                        return
                    self._finished(task, grade(task), True)
        except BaseException as error:  # noqa: BLE001 - raised again in the grader's own thread
            with self._lock:
                self.failure = self.failure or error

    def dispatch(self, pid: int, connection: Any) -> None:
        """Hand worker ``pid`` its tasks one at a time until none is left or the worker is gone."""
        try:
            while True:
                more, task = self._take()
                if not more:
                    return
                try:
                    connection.send(task)
                    graded = connection.recv()
                except (EOFError, OSError):
                    if not self.aborted:
                        self._finished(task, self._lost(task, WORKER_GONE.format(_ended(pid))), False)
                    return
                self._finished(task, graded, True)
        except BaseException as error:  # noqa: BLE001 - raised again in the grader's own thread
            with self._lock:
                self.failure = self.failure or error


def _ended(pid: int) -> str:
    """How worker ``pid`` ended ("killed by signal 9", "exit status 1"), once it has."""
    try:
        done, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return "it had already been collected"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _stop(workers: list[tuple[int, Any]]) -> None:
    """Close every pipe (a worker ends when its pipe does), then wait for the workers; kill any that hang."""
    import time

    for _, connection in workers:
        connection.close()
    deadline = time.monotonic() + 30
    for pid, _ in workers:
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done:
                break
            if time.monotonic() > deadline:
                _signal(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(0.02)


def _worker(connection: Any, grade: Callable[[Task], Any], grader: int, index: int, jobs: int) -> None:
    """A worker's life (worker ``index`` of ``jobs``): grade what the pipe brings until it closes; never returns."""
    code = 0
    try:
        _die_with(grader)
        signal.signal(signal.SIGTERM, _exit_cleanly)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with own_core(index, jobs):
            while True:
                try:
                    task = connection.recv()
                except (EOFError, OSError):
                    break
                graded = grade(task)
                connection.send(graded)
    except BaseException:  # noqa: BLE001 - interrupted, or the grader is gone: end here, after the cleanups ran
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)  # never the grader's own exit handlers, which are not the worker's to run


def _exit_cleanly(signum: int, frame: Any) -> None:
    raise SystemExit(1)  # the sandbox is killed and the private folder removed on the way out


def _die_with(grader: int) -> None:
    """Ask Linux to send this worker SIGTERM when the grader (process ``grader``) that forked it dies."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != grader:  # the grader died before the request took effect
        raise SystemExit(1)
