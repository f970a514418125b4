"""Executing one notebook in its kernel, cell by cell, and grading each exercise right after its answer cell.

The learner's cells run as they are (outputs capped, under both time limits).
After an answer cell, the grader runs a silent request in the kernel that
starts the agent (:mod:`course.grading.agent`), and grades the exercise in a
thread of its own process (:func:`course.grading.remote.grade_exercise`) while
the agent serves it; nothing is added to the notebook or to the kernel's
history.
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


Grader = Callable[[str, Any, threading.Event, Callable[[], None], str], Any]  # (exercise id, ...) -> Result


def run_notebook(notebook: nbformat.NotebookNode, manager: Any, env: dict[str, str], work: Path, limits: Limits,
                 grade_after: dict[int, list[str]], agent_path: str, grade: Grader) -> Execution:
    """Run ``notebook`` in place in the kernel ``manager`` starts; call ``grade`` after each answer cell."""
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

    async def grade_here(exercise_id: str, index: int, deadline: float) -> None:
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
                                                                  token)
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

    async def run() -> None:
        try:
            await run_cells()
        finally:
            if client.kc is not None:  # nbclient leaves a kernel it did not start to its owner: its heartbeat
                client.kc.stop_channels()  # thread would otherwise ping the dead kernel for the rest of the run
            await kill_sandbox(manager)

    async def run_cells() -> None:
        deadline = time.monotonic() + limits.notebook_timeout
        async with client.async_setup_kernel(env=env, cwd=str(work), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
            _default_signals()  # a SIGTERM or Ctrl-C stops the grader, not just this kernel
            for index, cell in enumerate(notebook.cells):
                if cell.get("cell_type") != "code":
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    return stop_for_time(index)
                client.timeout = max(1, min(limits.cell_timeout, int(left) + 1))
                try:
                    await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
                except DeadKernelError:
                    outcome.dead, outcome.stopped_at, outcome.stopped = True, index, KERNEL_DIED
                    return
                if client.timeout < limits.cell_timeout and timed_out(cell) and time.monotonic() >= deadline - 0.5:
                    return stop_for_time(index)
                if raised(cell):
                    continue  # its exercises get "the answer cell raised ..."
                for exercise_id in grade_after.get(index, []):
                    try:
                        await grade_here(exercise_id, index, deadline)
                    except DeadKernelError:
                        outcome.dead, outcome.stopped_at, outcome.stopped = True, index, KERNEL_DIED
                        return
                    if outcome.stopped:
                        return

    try:
        asyncio.run(run())
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


async def kill_sandbox(manager: Any) -> None:
    """Kill the kernel's process at once: in the sandbox, its PID namespace and everything in it die too."""
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
    if connection:
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
