"""At one job, the next notebook's grading process gets ready on the spare core while this one is graded.

``course grade --jobs 1`` grades one notebook at a time.  Most of what a
notebook's grading process does before the notebook's first cell needs no
learner code: forking, starting its checks' engine, starting the sandboxed
kernel and importing the course in it (:func:`course.grading.execution.warm_up_kernel`,
what ``make lab``'s spare kernels do).  On a machine with a second core,
which one job leaves idle, :class:`AheadOfTurn` forks the next notebook's
process (:func:`course.grading.isolation.start_isolated`) as soon as the
current one is told to go, on the other core; it gets ready there and waits.
When its turn comes its kernel is already up, and the notebook's time limit
counts from that turn.

Nothing changes about what is graded or where: each notebook still has a
process, an engine, a sandbox and a kernel of its own, forked from the
grader (never from another notebook's process), and no cell of a notebook
runs before the previous notebook's grading has ended.  What the second core
does meanwhile is only the next notebook's start.  A run that stops early
kills the process still waiting (:meth:`AheadOfTurn.cancel`).

Getting ready happens while the previous learner's code runs, and that code
can make it fail (by taking both cores, or the disk) or the kernel can die
while it waits.  Such a failure is nobody's result: the process sends back
:class:`Unprepared` instead of a grading, and the notebook is graded afresh
from its turn, as if nothing had been started ahead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence


def spare_cores() -> list[int]:
    """Two cores this process may use, when it may use at least two; else an empty list."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not on Linux
        return []
    return cores[:2] if len(cores) >= 2 else []


class NotReady(Exception):
    """A process started ahead could not get ready (raised before or just after its turn, never later)."""


@dataclass(frozen=True)
class Unprepared:
    """What a process started ahead sends back instead of a grading when it could not get ready."""

    reason: str


class AheadOfTurn:
    """The grading processes forked ahead of their turn at one job: at most one, the next task's.

    ``tasks`` are graded in this order, one at a time.  :meth:`prepare` launches the process of the task
    after the one just told to go, on the core that one does not use; :meth:`take` hands it over when its
    turn comes.
    """

    def __init__(self, tasks: Sequence[Any], cores: list[int]) -> None:
        self._cores = list(cores)
        self._following = dict(zip(tasks, list(tasks)[1:]))
        self._ready: dict[Any, Any] = {}

    @classmethod
    def when_useful(cls, tasks: Sequence[Any], jobs: int) -> "AheadOfTurn | None":
        """An :class:`AheadOfTurn` for a run of ``jobs`` over ``tasks``: only at one job, with two tasks or
        more and a second core to get ready on; None otherwise."""
        cores = spare_cores()
        if jobs != 1 or len(tasks) < 2 or not cores:
            return None
        return cls(tasks, cores)

    @property
    def first_core(self) -> int:
        """The core of a process started at its turn when none was made ready (the run's first)."""
        return self._cores[0]

    def other_core(self, core: int) -> int:
        """The core to get ready on while a notebook is graded on ``core``."""
        return self._cores[1] if core == self._cores[0] else self._cores[0]

    def take(self, task: Any) -> Any:
        """The process made ready for ``task``, or None (the first task, or one that was never prepared)."""
        return self._ready.pop(task, None)

    def prepare(self, task: Any, launch: Callable[[Any, int], Any], core: int) -> None:
        """``launch(next task, core)`` the process of the task after ``task``, on the core other than
        ``core`` (the one ``task`` is graded on): it gets ready, then waits for its turn.  Nothing when
        ``task`` is the last or the next one is already launched."""
        following = self._following.get(task)
        if following is not None and following not in self._ready:
            self._ready[following] = launch(following, self.other_core(core))

    @property
    def waiting(self) -> int:
        """How many launched processes have not been taken yet."""
        return len(self._ready)

    def cancel(self) -> None:
        """Kill every process still waiting for its turn (the run stopped before it came)."""
        while self._ready:
            _, process = self._ready.popitem()
            process.cancel()
