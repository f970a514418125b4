"""The exercise engine: declarative exercises with visible and hidden assertions.

An exercise names the notebook variables that hold the learner's answer, its
hints and reference solution, and a list of assertions.  Each assertion is a
method decorated with :func:`visible` (run by ``check()``) or :func:`hidden`
(run only when grading).  An assertion passes by returning and fails by raising
:class:`Incorrect` with a message for the learner.  Messages are all a learner
or instructor ever sees of an assertion: never its code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Mapping

from course.capabilities import Capability
from course.placeholder import is_placeholder
from course.results import Hint, Outcome, Result, Solution, Status

if TYPE_CHECKING:
    from course.session import Lab

EXPECT_VARIABLE = "COURSE_EXPECT_STATUS"


class Incorrect(AssertionError):
    """An assertion failed; the message tells the learner what is wrong."""


class NotAttempted(Exception):
    """The answer still holds (or returns) the placeholder."""


class LearnerCodeError(Exception):
    """The learner's code raised while an assertion ran it."""


class UnexpectedStatus(AssertionError):
    """Raised by ``check()`` when ``COURSE_EXPECT_STATUS`` is set and the verdict differs."""


@dataclass(frozen=True)
class Assertion:
    """One declared assertion of an exercise."""

    name: str
    points: float
    hidden: bool
    requires: frozenset[Capability]
    function: Callable[..., None]


def _marker(points: float, hidden: bool, requires: Iterable[Capability]):
    def decorate(function):
        description = (function.__doc__ or function.__name__).strip().splitlines()[0]
        function._course_assertion = Assertion(
            description, float(points), hidden, frozenset(requires), function
        )
        return function

    return decorate


def visible(points: float = 1, requires: Iterable[Capability] = ()):
    """Declare an assertion that ``check()`` runs (and grading too)."""
    return _marker(points, False, requires)


def hidden(points: float = 1, requires: Iterable[Capability] = ()):
    """Declare an assertion that runs only when grading."""
    return _marker(points, True, requires)


class Answers:
    """The learner's answer values, by name; attribute access for assertions."""

    def __init__(self, values: Mapping[str, Any]):
        self._values = dict(values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None


class Exercise:
    """Base class of every exercise.  Subclasses set the class attributes below."""

    id: ClassVar[str]  #: "<lab>.<n>", also the answer cell's tag suffix
    title: ClassVar[str]
    answers: ClassVar[tuple[str, ...]]  #: notebook variables holding the answer
    hints: ClassVar[tuple[str, ...]] = ()
    solution_code: ClassVar[str] = ""
    requires: ClassVar[frozenset[Capability]] = frozenset()

    def __init__(self, lab: "Lab"):
        self.lab = lab
        self._hints_shown = 0

    # ---- declared assertions -------------------------------------------------
    @classmethod
    def assertions(cls) -> list[Assertion]:
        """All assertions, in the order the class (and its bases) declare them."""
        found: dict[str, Assertion] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                if hasattr(member, "_course_assertion"):
                    found[name] = member._course_assertion
        return list(found.values())

    @classmethod
    def max_points(cls) -> float:
        """The most this exercise can score on a backend with every capability."""
        return sum(a.points for a in cls.assertions())

    @property
    def tag(self) -> str:
        """The cell tag of this exercise's answer cell."""
        return f"exercise:{self.id}"

    # ---- helpers for assertions ----------------------------------------------
    def call(self, name: str, function: Any, *args: Any, **kwargs: Any) -> Any:
        """Call the learner's ``function``; placeholder -> NotAttempted, raise -> LearnerCodeError."""
        if is_placeholder(function):
            raise NotAttempted(name)
        if not callable(function):
            raise Incorrect(f"{name} should be a function, but it is a {type(function).__name__}")
        try:
            value = function(*args, **kwargs)
        except (NotAttempted, Incorrect):
            raise
        except Exception as error:  # the learner's code failed
            raise LearnerCodeError(f"{name}(...) raised {type(error).__name__}: {error}") from error
        if is_placeholder(value):
            raise NotAttempted(name)
        return value

    def expect_type(self, name: str, value: Any, kind: type | tuple[type, ...], example: str = "") -> Any:
        """Return ``value`` if it is of ``kind``, else fail with a message naming the expected type."""
        if isinstance(value, kind):
            return value
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wanted = " or ".join(k.__name__ for k in kinds)
        hint = f", for example {example}" if example else ""
        raise Incorrect(f"{name} should be a {wanted}{hint}; got a {type(value).__name__}: {value!r:.80}")

    # ---- evaluation -----------------------------------------------------------
    def evaluate(self, namespace: Mapping[str, Any], *, include_hidden: bool) -> Result:
        """Run the assertions against the answers found in ``namespace``."""
        considered = [a for a in self.assertions() if include_hidden or not a.hidden]
        possible = sum(a.points for a in considered if self._lacking(a.requires) == [])
        missing = self._lacking(self.requires)
        if missing:
            return Result(self.id, self.title, Status.UNSUPPORTED, self._needs(missing), 0.0, 0.0)
        values = {}
        for name in self.answers:
            if name not in namespace or is_placeholder(namespace[name]):
                return Result(self.id, self.title, Status.NOT_ATTEMPTED,
                              f"replace the ____ in {name} with your answer", 0.0, possible)
            values[name] = namespace[name]
        answers = Answers(values)
        outcomes: list[Outcome] = []
        for assertion in considered:
            outcome = self._run(assertion, answers)
            outcomes.append(outcome)
            if outcome.status is Status.NOT_ATTEMPTED:
                return Result(self.id, self.title, Status.NOT_ATTEMPTED, outcome.message, 0.0, possible,
                              tuple(outcomes))
            if not include_hidden and outcome.status not in (Status.CORRECT, Status.UNSUPPORTED):
                break  # check(): the first failure is the useful message
        return self._summarise(tuple(outcomes), possible)

    def _lacking(self, capabilities: Iterable[Capability]) -> list[Capability]:
        return [c for c in capabilities if not self.lab.backend.supports(c)]

    def _run(self, assertion: Assertion, answers: Answers) -> Outcome:
        def outcome(status: Status, message: str = "", points: float = 0.0) -> Outcome:
            return Outcome(assertion.name, status, points, assertion.points, message, assertion.hidden)

        lacking = self._lacking(assertion.requires)
        if lacking:
            return outcome(Status.UNSUPPORTED, self._needs(lacking))
        try:
            assertion.function(self, answers)
        except Incorrect as failure:
            return outcome(Status.INCORRECT, str(failure))
        except NotAttempted as pending:
            return outcome(Status.NOT_ATTEMPTED, f"{pending} still returns ____: write your code there")
        except LearnerCodeError as error:
            return outcome(Status.ERROR, str(error))
        except Exception as error:  # anything else: a wrong shape the assertion did not foresee
            return outcome(Status.ERROR, f"your answer could not be checked: {type(error).__name__}: {error}")
        return outcome(Status.CORRECT, points=assertion.points)

    def _needs(self, capabilities: Iterable[Capability]) -> str:
        names = ", ".join(sorted(str(c) for c in capabilities))
        return (f"needs {names}, which {self.lab.backend.name} lacks: "
                f"use Python >= 3.13 (mongoeco) or a MongoDB server to check this")

    def _summarise(self, outcomes: tuple[Outcome, ...], possible: float) -> Result:
        score = sum(o.points for o in outcomes)
        for status in (Status.INCORRECT, Status.ERROR):
            failed = [o for o in outcomes if o.status is status]
            if failed:
                return Result(self.id, self.title, status, failed[0].message, score, possible, outcomes)
        unchecked = [o for o in outcomes if o.status is Status.UNSUPPORTED]
        if outcomes and len(unchecked) == len(outcomes):
            return Result(self.id, self.title, Status.UNSUPPORTED, unchecked[0].message, 0.0, 0.0, outcomes)
        note = f"(not checked here: {unchecked[0].message})" if unchecked else ""
        return Result(self.id, self.title, Status.CORRECT, note, score, possible, outcomes)

    # ---- the learner's API ----------------------------------------------------
    def check(self) -> Result:
        """Check your answer now (visible assertions only) and show the verdict."""
        result = self.evaluate(notebook_namespace(), include_hidden=False)
        expected = os.environ.get(EXPECT_VARIABLE)
        if expected and result.status.value != expected and result.status is not Status.UNSUPPORTED:
            raise UnexpectedStatus(
                f"{EXPECT_VARIABLE}={expected} but exercise {self.id} is {result.status.value}: {result.message}"
            )
        return result

    def hint(self, number: int | None = None) -> Hint:
        """Show the next hint (or hint ``number``, counting from 1)."""
        if not self.hints:
            return Hint(self.id, 0, 0, "this exercise has no hints")
        if number is None:
            self._hints_shown = min(self._hints_shown + 1, len(self.hints))
            number = self._hints_shown
        if not isinstance(number, int) or not 1 <= number <= len(self.hints):
            raise ValueError(f"exercise {self.id} has hints 1 to {len(self.hints)}, not {number!r}")
        return Hint(self.id, number, len(self.hints), self.hints[number - 1])

    def solution(self) -> Solution:
        """Show the reference solution."""
        return Solution(self.id, self.solution_code.strip())

    def __repr__(self) -> str:
        return f"<exercise {self.id}: {self.title} — call .check(), .hint() or .solution()>"


def notebook_namespace() -> Mapping[str, Any]:
    """The variables the learner defined: IPython's user namespace, else ``__main__``."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        return shell.user_ns
    import __main__

    return vars(__main__)
