"""One notebook, one grading process: nothing a notebook does to the grader outlives it.

:func:`start_isolated` forks a process that grades exactly one notebook and
ends.  It starts its own checks' engine (mongoeco's memory engine: nothing an
earlier notebook stored, no fail point or server parameter an earlier
notebook set, can be there), under

* a memory limit (``RLIMIT_AS``, soft, so the kernel's own launcher may still
  set the kernel's): a notebook whose functions make the grader's engine hold
  too much costs that notebook, never the machine;
* a deadline: the notebook's time limit, plus a grace for starting and
  grading, enforced from outside while the checks run as well as while the
  cells do; past it the process is killed (its sandboxes die with it:
  bubblewrap's ``--die-with-parent``), and so is anything left in its private
  folder;
* :func:`abort`: what inside it finds that it cannot go on (the relay's
  watchdog, when the engine does not stop a command) ends it at once, with
  the reason.

The process may get ready first (its engine, its kernel: no cell of the
notebook runs), then waits for :meth:`Isolated.go`, and the deadline counts
from then.  At one job on a machine with a core to spare, the next notebook's
process gets ready on that core while this one is graded
(:mod:`course.grading.ahead`).

The parent gets the grading back (pickled over a pipe: the child is the
grader's own code), or a :class:`Failure` naming why there is none.  The
parent must run no other thread when it forks (:func:`can_isolate`), so that
no lock another thread holds is copied into the child.
"""

from __future__ import annotations

import gc
import os
import pickle
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

START_GRACE = 60.0  #: seconds beyond the notebook's time limit for starting its kernel and grading it
_EXIT_ABORTED = 3
_CHILD: dict[str, Any] = {}  #: in a grading process: its pipe to the parent
_WAITING: set["Isolated"] = set()  #: grading processes this process started and has not waited for yet


@dataclass(frozen=True)
class Failure:
    """Why a grading process returned nothing; ``limit`` when the notebook itself hit a limit (a lasting
    result), false when the process died for a reason outside the notebook (grade it again next run)."""

    reason: str
    limit: bool


def can_isolate() -> bool:
    """True when a grading process can be forked safely here: Linux, and no thread but this one."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def in_grading_process() -> bool:
    """True inside a process :func:`start_isolated` forked."""
    return bool(_CHILD)


def abort(reason: str) -> None:
    """End this grading process now, sending ``reason`` as its failure (a no-op outside one)."""
    connection = _CHILD.get("connection")
    if connection is None:
        return
    try:
        connection.send_bytes(pickle.dumps(("failed", reason)))
    except Exception:  # noqa: BLE001 - the parent names a death without a reason too
        pass
    os._exit(_EXIT_ABORTED)


def start_isolated(work: Callable[[Callable[[], float]], Any], *, memory_mb: int,
                   core: int | None = None) -> "Isolated":
    """Fork a grading process that runs ``work(turn)`` and ends; return it, waiting for its :meth:`~Isolated.go`.

    ``work`` prepares what needs no time limit (its kernel, its engine), then calls ``turn()``, which returns
    once the parent has said go, with the :func:`time.monotonic` of that go: the time limit counts from
    then.  ``core``: the one core the process and everything it starts keep to (None: the parent's cores).
    """
    from multiprocessing.connection import Pipe

    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # nothing buffered here is written again by the child
    folder = Path(tempfile.mkdtemp(prefix="course-notebook-"))
    ours, theirs = Pipe(duplex=False)
    wait_here, say_go = Pipe(duplex=False)
    gc.freeze()  # the child's collections then leave the grader's objects alone: fewer pages copied on write
    pid = os.fork()
    if pid == 0:  # the grading process
        ours.close()
        say_go.close()
        for other in list(_WAITING):  # another notebook's process is none of its business
            other.forget()
        _child(theirs, lambda: work(_turn(wait_here)), folder, memory_mb, core)  # never returns
    gc.unfreeze()
    theirs.close()
    wait_here.close()
    process = Isolated(pid, ours, say_go, folder, memory_mb, core)
    _WAITING.add(process)
    return process


def _turn(connection: Any) -> Callable[[], float]:
    def turn() -> float:  # the parent's go, or its end (then this process has nothing left to do)
        try:
            began = float(connection.recv_bytes().decode("ascii"))  # when the parent said go
            _CHILD["connection"].send_bytes(pickle.dumps(("turn", None)))  # from now on, the notebook's time
            return began
        except (EOFError, OSError, ValueError):
            os._exit(1)
        finally:
            connection.close()

    return turn


class Isolated:
    """A grading process of :func:`start_isolated`: told when to go, then waited for."""

    def __init__(self, pid: int, results: Any, go_pipe: Any, folder: Path, memory_mb: int,
                 core: int | None) -> None:
        self.pid, self._results, self._go_pipe, self._folder = pid, results, go_pipe, folder
        self.core = core  #: the one core it keeps to, or None
        self._memory_mb, self._deadline = memory_mb, None
        self._seconds = 0.0
        self._ended = False

    def forget(self) -> None:
        """In a process forked later: close this one's pipes (only its parent talks to it)."""
        _WAITING.discard(self)
        self._go_pipe.close()
        self._results.close()

    def go(self, seconds: float) -> None:
        """Let the process grade, within ``seconds`` from now (then it is killed)."""
        now = time.monotonic()
        self._seconds, self._deadline = seconds, now + seconds
        try:
            self._go_pipe.send_bytes(repr(now).encode("ascii"))  # the same clock in every process
        except OSError:  # it has ended already (it could not even start its kernel): its result says why
            pass
        finally:
            self._go_pipe.close()

    def result(self) -> Any:
        """Wait for the process's value, or a :class:`Failure`; its private folder is removed afterwards."""
        if self._deadline is None:
            raise RuntimeError("a grading process was waited for before it was told to go")
        try:
            value = _await(self.pid, self._results, self._deadline, self._seconds, self._memory_mb)
            self._ended = True
            return value
        finally:
            self._release()  # a wait cut short (Ctrl-C, SIGTERM) kills the process too

    def cancel(self) -> None:
        """Kill the process, whether it has started grading or not, and remove its private folder."""
        self._go_pipe.close()
        self._release()

    def _release(self) -> None:
        """Kill the process unless it has ended, close its pipe and remove its private folder."""
        if not self._ended:
            if self.pid not in _REAPED:  # (a reaped pid may already be another process's)
                _kill(self.pid)
            _REAPED.pop(self.pid, None)
        _WAITING.discard(self)
        self._results.close()
        _clean(self._folder)


def _child(connection: Any, work: Callable[[], Any], folder: Path, memory_mb: int, core: int | None) -> None:
    code = 0
    try:
        _CHILD["connection"] = connection
        _die_with_parent()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        tempfile.tempdir = str(folder)  # its private folders go where the parent cleans up after it
        if core is not None:
            try:
                os.sched_setaffinity(0, {core})
            except OSError:
                pass
        if memory_mb > 0:
            _limit_memory(memory_mb)
        try:
            value = work()
            message = ("ok", value)
        except MemoryError:
            message = ("failed", f"grading this notebook needed more than {memory_mb} MiB of the grader's "
                                 f"memory (its functions stored too much in the checks' database?)")
        payload = pickle.dumps(message)
        connection.send_bytes(payload)
    except BaseException:  # noqa: BLE001 - the parent reports a death without a reply
        code = 1
    finally:
        os._exit(code)  # never the grader's own exit handlers


def _die_with_parent() -> None:
    """Ask Linux to kill this grading process when the process that forked it dies (a worker killed)."""
    import ctypes

    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the request took effect
        os._exit(1)


def _limit_memory(megabytes: int) -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = megabytes * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _await(pid: int, connection: Any, deadline: float, seconds: float, memory_mb: int) -> Any:
    message, turn = None, False
    while message is None:
        left = deadline - time.monotonic()
        if left <= 0:
            _kill(pid)
            # only a process that reached its turn ran out of the notebook's own time (a lasting result);
            # one still getting ready was held up by something else
            return Failure(f"grading this notebook took longer than {seconds:g} s in all (its time limit plus "
                           f"{START_GRACE:g} s to start and grade it), so it was stopped", limit=turn)
        try:
            if not connection.poll(min(left, 1.0)):
                if _gone(pid):
                    break
                continue
            message = pickle.loads(connection.recv_bytes())
        except (EOFError, OSError):
            break
        if message == ("turn", None):
            message, turn = None, True
    status = _reap(pid)
    if message is None:
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL and memory_mb > 0:
            return Failure("the process grading this notebook was killed (signal 9: out of memory, or stopped "
                           "from outside)", limit=False)
        how = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
               else f"exit status {os.waitstatus_to_exitcode(status)}")
        return Failure(f"the process grading this notebook ended without a result ({how})", limit=False)
    kind, value = message
    return value if kind == "ok" else Failure(str(value), limit=True)


def _gone(pid: int) -> bool:
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    if done:
        _REAPED[pid] = status
        return True
    return False


_REAPED: dict[int, int] = {}


def _reap(pid: int) -> int:
    if pid in _REAPED:
        return _REAPED.pop(pid)
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _REAPED[pid] = _reap(pid)


def _clean(folder: Path) -> None:
    """Remove the grading process's private folder, with any process and pids cgroup still using it."""
    from course.grading import process_limit

    _kill_processes_in(folder)
    for root in folder.iterdir() if folder.is_dir() else []:
        process_limit.remove(root.name, wait=1.0)
    shutil.rmtree(folder, ignore_errors=True)


def _kill_processes_in(folder: Path) -> None:
    """SIGKILL every process (and its process group) whose working folder lies in ``folder``: an
    unsandboxed kernel left behind by a grading process that was killed."""
    prefix, own_group = str(folder.resolve()), os.getpgid(0)
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if cwd == prefix or cwd.startswith(prefix + os.sep):
            pid = int(entry)
            try:
                group = os.getpgid(pid)
                if group != own_group:
                    os.killpg(group, signal.SIGKILL)
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
