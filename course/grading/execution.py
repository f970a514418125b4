"""Executing one notebook in its kernel, cell by cell, and grading each exercise in two passes.

The learner's cells run as they are (outputs capped, under both time limits).
After an answer cell, the grader runs a silent request in the kernel that
starts the agent (:mod:`course.grading.agent`), and runs the exercise's
visible assertions in a thread of its own process
(:func:`course.grading.remote.grade_exercise`) while the agent serves it;
nothing is added to the notebook or to the kernel's history.  Once the last
cell has run, a second request per exercise runs its hidden and secret
assertions on the answers its answer cell left (the agent kept them): no
visible check, and no cell, runs after the learner's code has seen a hidden
check's data, so none can show it (:mod:`course.engine.hidden_messages`).
"""

from __future__ import annotations

import asyncio
import atexit
import secrets
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import nbformat

DEFAULT_TIMEOUT = 120
DEFAULT_NOTEBOOK_TIMEOUT = 1800
DEFAULT_MEMORY_MB = 2048
DEFAULT_MAX_OUTPUT = 1_000_000
DEFAULT_WRITE_MB = 256  #: what a notebook's functions may write through the checks' relay
DEFAULT_COMMAND_SECONDS = 30  #: how long one command a learner function sends may run in the checks' engine
DEFAULT_GRADER_MEMORY_MB = 4096  #: the address space of the process that grades one notebook
AGENT_GRACE = 10.0  #: seconds the kernel has to end the grader's request once grading is done
#: the hidden checks run after the last cell, and may run past the notebook's limit by twice the time its visible
#: checks took (+ 2 s), at most this many seconds: a slow last cell does not cost the hidden points before it
HIDDEN_GRACE_MAX = 30.0
WARM_UP_LOOK = 0.25  #: seconds between looks at a kernel warming up ahead of its turn (a dead one is not waited for)
KERNEL_DIED = "the kernel died (the code crashed the Python process, exited it, or ran out of memory)"


@dataclass
class Limits:
    """What one notebook may use."""

    cell_timeout: float = DEFAULT_TIMEOUT  #: seconds per cell
    notebook_timeout: float = DEFAULT_NOTEBOOK_TIMEOUT  #: seconds for the whole notebook
    memory_mb: int = DEFAULT_MEMORY_MB  #: the kernel's address space (0: unlimited)
    max_output_bytes: int = DEFAULT_MAX_OUTPUT  #: captured output kept per notebook
    write_mb: int = DEFAULT_WRITE_MB  #: bytes (MiB) learner functions may write through the checks' relay
    command_seconds: float = DEFAULT_COMMAND_SECONDS  #: time one relayed command may take
    grader_memory_mb: int = DEFAULT_GRADER_MEMORY_MB  #: the notebook's grading process (0: unlimited)


@dataclass
class Execution:
    """How a run went: "" or why it stopped, which cells hit which limit, and the grades."""

    stopped: str = ""
    stopped_at: int | None = None  #: index of the cell running when it stopped
    dead: bool = False  #: the kernel died
    notebook_timeout: bool = False
    truncated: list[int] = field(default_factory=list)  #: cells whose output was cut
    graded: dict[str, Any] = field(default_factory=dict)  #: exercise id -> Result
    hidden_done: set[str] = field(default_factory=set)  #: exercises whose hidden assertions have run
    visible_seconds: float = 0.0  #: time the visible checks took (what the hidden ones may take past the limit)


def _client_class():
    from nbclient import NotebookClient

    class CappedClient(NotebookClient):
        """Keeps at most ``max_output_bytes`` of output."""

        max_output_bytes = DEFAULT_MAX_OUTPUT
        kept_bytes = 0
        truncated: list

        def output(self, outs, msg, display_id, cell_index):  # noqa: D401 - nbclient hook
            content = msg.get("content", {})
            self.kept_bytes += len(str(content))
            if self.kept_bytes > self.max_output_bytes:
                if cell_index not in self.truncated:
                    self.truncated.append(cell_index)
                    outs.append(nbformat.v4.new_output(
                        "stream", name="stderr",
                        text=f"[course grade: output cut at {self.max_output_bytes} bytes]\n"))
                return None
            return super().output(outs, msg, display_id, cell_index)

    return CappedClient


def raised(cell: Any) -> str:
    """``"<ExceptionType>: <message>"`` if ``cell`` ended in an error, else ""."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename', 'Exception')}: {output.get('evalue', '')}".rstrip(": ")
    return ""


def engine_gap(cell: Any) -> str:
    """The message when ``cell`` ended in a NotImplementedError raised inside mongomock or mongoeco (the
    kernel's backend lacks a feature: not the learner's mistake), else ""."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error" and output.get("ename") == "NotImplementedError":
            frames = [line for line in output.get("traceback", []) if isinstance(line, str) and "File " in line]
            if frames and any(part in frames[-1] for part in ("/mongomock/", "/mongoeco/")):
                return str(output.get("evalue", "")).strip().splitlines()[0][:160] if output.get("evalue") else \
                    "a feature it does not implement"
    return ""


def timed_out(cell: Any) -> bool:
    """True when ``cell`` was interrupted by a time limit."""
    error = raised(cell)
    return error.startswith("KeyboardInterrupt") or error.startswith("TimeoutError")


#: (exercise id, answer cell, gave up, interrupt, token, visible Result or None) -> Result
Grader = Callable[[str, Any, threading.Event, Callable[[], None], str, Any], Any]


def awaits_hidden(result: Any) -> bool:
    """True when ``result`` is a visible pass that leaves hidden assertions to run in the kernel."""
    from course.engine.results import Status

    return bool(result.pending and result.outcomes) and result.status is not Status.NOT_ATTEMPTED


def run_notebook(notebook: nbformat.NotebookNode, manager: Any, env: dict[str, str], work: Path, limits: Limits,
                 grade_after: dict[int, list[str]], agent_path: str, grade: Grader,
                 when_ready: Callable[[], float] | None = None) -> Execution:
    """Run ``notebook`` in place in the kernel ``manager`` starts; call ``grade`` after each answer cell.

    With ``when_ready``, the kernel is started and warmed up (:func:`warm_up_kernel`) first, then
    ``when_ready()`` waits for this notebook's turn and returns when it began (:func:`time.monotonic`),
    and the notebook's time limit counts from then.  A kernel that does not warm up, or that has ended by
    the turn, raises :class:`~course.grading.ahead.NotReady`: nothing of the notebook has run.
    """
    from course.grading.ahead import NotReady
    from nbclient.exceptions import DeadKernelError

    from course.grading.kernel_client import client_for

    manager.client_factory = client_for(limits.max_output_bytes)  # no single output message can bloat the grader
    client = _client_class()(
        notebook, km=manager, timeout=limits.cell_timeout, allow_errors=True, interrupt_on_timeout=True,
        error_on_timeout={"ename": "TimeoutError", "evalue": f"the cell ran longer than {limits.cell_timeout:g} s"},
        resources={"metadata": {"path": str(work)}}, record_timing=False, shutdown_kernel="immediate",
    )
    client.max_output_bytes = limits.max_output_bytes
    client.truncated = []
    outcome = Execution()

    def stop_for_time(index: int) -> None:
        outcome.notebook_timeout, outcome.stopped_at = True, index
        outcome.stopped = f"the notebook ran past its total time limit of {limits.notebook_timeout:g} s"

    async def grade_here(exercise_id: str, index: int, deadline: float, visible: Any = None) -> None:
        started = time.monotonic()
        try:
            await grade_in_kernel(exercise_id, index, deadline, visible)
        finally:
            if visible is None:
                outcome.visible_seconds += time.monotonic() - started

    async def grade_in_kernel(exercise_id: str, index: int, deadline: float, visible: Any) -> None:
        loop = asyncio.get_running_loop()
        gave_up = threading.Event()
        token = secrets.token_hex(16)
        client.timeout = max(1, int(deadline - time.monotonic()) + 1)
        request = nbformat.v4.new_code_cell(
            f"__import__('course.grading.agent', fromlist=['serve']).serve({agent_path!r}, {token!r})")
        task = asyncio.ensure_future(client.async_execute_cell(request, index, store_history=False))
        task.add_done_callback(lambda _: gave_up.set())

        def interrupt() -> None:
            asyncio.run_coroutine_threadsafe(manager.interrupt_kernel(), loop).result(10)

        answer_cell = notebook.cells[index]
        try:
            outcome.graded[exercise_id] = await asyncio.to_thread(grade, exercise_id, index, gave_up, interrupt,
                                                                  token, visible)
            if visible is not None:
                outcome.hidden_done.add(exercise_id)
            try:  # the agent was told "done": the request ends now, or the kernel is hung (or hijacked)
                await asyncio.wait_for(asyncio.shield(task), timeout=AGENT_GRACE)
            except asyncio.TimeoutError:
                await manager.interrupt_kernel()
                try:
                    await asyncio.wait_for(task, timeout=AGENT_GRACE)
                except asyncio.TimeoutError:
                    outcome.stopped_at, outcome.dead = index, True
                    outcome.stopped = "the kernel stopped answering the grader"
                    task.cancel()
        finally:
            notebook.cells[index] = answer_cell  # nbclient files the request's cell under this index

    deadline = 0.0  # when the notebook's time is up: set as it starts, and again once it is its turn

    async def run() -> None:
        nonlocal deadline
        deadline = time.monotonic() + limits.notebook_timeout
        answered: list[tuple[str, int]] = []  # filled as exercises are graded, even if the kernel's end raises
        try:
            await run_cells(answered)
        except DeadKernelError:
            outcome.dead, outcome.stopped = True, outcome.stopped or KERNEL_DIED
        except BaseException:  # nothing follows (a kernel that did not start, one not ready): its cgroup goes too
            await end_kernel()
            raise
        finally:
            await end_kernel(last=False)
        left = [(e, i) for e, i in answered if e not in outcome.hidden_done and awaits_hidden(outcome.graded[e])]
        try:
            if outcome.dead and left and not outcome.notebook_timeout and deadline - time.monotonic() > 0.5:
                client.kc = None  # a new kernel, once: the cells up to the last answer again, then the hidden checks
                manager.context = _fresh_context()  # the dead kernel's shutdown closed the manager's ZeroMQ context
                await run_again(left, deadline)
        except (DeadKernelError, RuntimeError):
            pass  # a kernel that will not start again or dies again: what did not run is "not run: ..."
        finally:
            await end_kernel()

    def hidden_deadline(deadline: float) -> float:
        grace = min(HIDDEN_GRACE_MAX, 2 * outcome.visible_seconds + 2)
        return max(deadline, time.monotonic() + grace)

    async def end_kernel(last: bool = True) -> None:
        if client.kc is not None:  # nbclient leaves a kernel it did not start to its owner: its heartbeat
            client.kc.stop_channels()  # thread would otherwise ping the dead kernel for the rest of the run
        await kill_sandbox(manager, last)

    async def run_cells(answered: list[tuple[str, int]]) -> None:
        nonlocal deadline
        async with client.async_setup_kernel(env=env, cwd=str(work), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
            _default_signals()  # a SIGTERM or Ctrl-C stops the grader, not just this kernel
            if when_ready is not None:
                if not await warm_up_kernel(manager, client.kc, limits.cell_timeout):
                    raise NotReady("its kernel did not warm up")
                turn = await asyncio.to_thread(when_ready)
                if not await manager.is_alive():
                    raise NotReady("its kernel ended while it waited for its turn")
                deadline = turn + limits.notebook_timeout
            await run_visible(deadline, answered)
            if not outcome.dead:
                await run_hidden(answered, hidden_deadline(deadline))

    async def run_again(left: list[tuple[str, int]], deadline: float) -> None:
        """After the kernel died: a fresh kernel runs the cells up to the last answer cell graded, and each of
        those exercises' hidden assertions after its answer cell (no visible check runs in this kernel, and
        its cells' outputs are dropped, so nothing shows what a hidden check handed the learner's code)."""
        import copy

        wanted = {index: [e for e, i in left if i == index] for _, index in left}
        kept = list(notebook.cells)
        async with client.async_setup_kernel(env=env, cwd=str(work), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
            _default_signals()
            try:
                for index, cell in enumerate(kept[:max(wanted) + 1]):
                    if cell.get("cell_type") != "code":
                        continue
                    if deadline - time.monotonic() <= 0.5:
                        return
                    client.timeout = max(1, min(limits.cell_timeout, int(deadline - time.monotonic()) + 1))
                    again = copy.deepcopy(cell)
                    await client.async_execute_cell(again, index, execution_count=client.code_cells_executed + 1)
                    if raised(again):
                        continue
                    for exercise_id in wanted.get(index, []):
                        await grade_here(exercise_id, index, deadline, outcome.graded[exercise_id])

            except DeadKernelError:
                return
            finally:
                notebook.cells[:] = kept  # the graded copy keeps the first run's cells and outputs

    async def run_visible(deadline: float, answered: list[tuple[str, int]]) -> None:
        """Every cell, each exercise's visible assertions after its answer cell; ``answered`` gets each
        (exercise, answer cell) graded."""
        for index, cell in enumerate(notebook.cells):
            if cell.get("cell_type") != "code":
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                stop_for_time(index)
                return
            client.timeout = max(1, min(limits.cell_timeout, int(left) + 1))
            try:
                await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
            except DeadKernelError:
                outcome.dead, outcome.stopped_at, outcome.stopped = True, index, KERNEL_DIED
                return
            if client.timeout < limits.cell_timeout and timed_out(cell) and time.monotonic() >= deadline - 0.5:
                stop_for_time(index)
                return
            if raised(cell):
                continue  # its exercises get "the answer cell raised ..."
            for exercise_id in grade_after.get(index, []):
                try:
                    await grade_here(exercise_id, index, deadline)
                except DeadKernelError:
                    outcome.dead, outcome.stopped_at, outcome.stopped = True, index, KERNEL_DIED
                    return
                answered.append((exercise_id, index))
                if outcome.stopped:
                    return

    async def run_hidden(answered: list[tuple[str, int]], deadline: float) -> None:
        """The hidden assertions of each exercise graded above, within the same notebook limit."""
        for exercise_id, index in answered:
            visible = outcome.graded.get(exercise_id)
            if visible is None or not awaits_hidden(visible):
                continue
            if deadline - time.monotonic() <= 0.5 or outcome.dead:
                return
            try:
                await grade_here(exercise_id, index, deadline, visible)
            except DeadKernelError:
                outcome.dead, outcome.stopped = True, outcome.stopped or KERNEL_DIED
                return

    try:
        asyncio.run(run())
    except NotReady:
        raise
    except DeadKernelError:
        outcome.dead = True
        outcome.stopped = outcome.stopped or KERNEL_DIED
    except Exception as error:  # a kernel that never started, a broken message, ...
        outcome.dead = True
        text = str(error).strip()
        outcome.stopped = outcome.stopped or f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"
    finally:
        atexit.unregister(client._cleanup_kernel)
    outcome.truncated = list(client.truncated)
    return outcome


async def warm_up_kernel(manager: Any, kernel: Any, seconds: float) -> bool:
    """Import, in the kernel ``kernel`` talks to, what a lab's first cell imports, as ``make lab``'s spare kernels
    do (:mod:`course.lab.kernel_warmup`): silently, kept out of its history, leaving no name, database or
    refused import the learner's code could see; True if it finished within ``seconds``, False at once if
    the kernel ``manager`` started ends meanwhile."""
    from course.lab.kernel_warmup import WARM_UP_CODE

    task = asyncio.ensure_future(kernel.execute_interactive(WARM_UP_CODE, silent=True, store_history=False,
                                                            timeout=seconds, output_hook=lambda message: None))
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=WARM_UP_LOOK)
            if not task.done() and not await manager.is_alive():
                return False
        reply = task.result()
    except (TimeoutError, RuntimeError):
        return False
    finally:
        task.cancel()
    return reply.get("content", {}).get("status") == "ok"


def _fresh_context() -> Any:
    import zmq.asyncio

    return zmq.asyncio.Context()


async def kill_sandbox(manager: Any, last: bool = True) -> None:
    """Kill the kernel's process at once: in the sandbox, its PID namespace and everything in it die too;
    with ``last``, remove the sandbox's pids cgroup as well (else another kernel may start in it)."""
    try:
        if manager.has_kernel:
            await manager.shutdown_kernel(now=True)
    except Exception:  # noqa: BLE001 - fall back to the process itself
        pass
    process = getattr(getattr(manager, "provisioner", None), "process", None)
    if process is not None and process.poll() is None:
        process.kill()
        process.wait()
    connection = getattr(manager, "connection_file", "")
    if connection and last:
        from course.grading import process_limit
        from course.grading.kernel import cgroup_name

        process_limit.remove(cgroup_name(Path(connection).parent))


def _default_signals() -> None:
    """Undo nbclient's SIGINT/SIGTERM handlers (they would only shut the kernel down and go on)."""
    import signal

    try:
        loop = asyncio.get_running_loop()
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
    except (RuntimeError, ValueError):
        pass
