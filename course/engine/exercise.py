"""The exercise engine: declarative exercises with visible and hidden assertions.

An exercise names the notebook variables that hold the learner's answer, its
hints and reference solution, and a list of assertions.  Each assertion is a
method decorated with :func:`visible` (run by ``check()``) or :func:`hidden`
(run only when grading).  An assertion passes by returning and fails by raising
:class:`Incorrect` with a message for the learner.  Messages are all a learner
or instructor ever sees of an assertion: never its code.

One module past 400 lines on purpose: :class:`Exercise` is one piece, since ``check()`` and ``course grade``
must reach one verdict through the same rules (the failures it turns into verdicts are in
:mod:`course.engine.failures`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Callable, ClassVar, Iterable, Mapping, Protocol

from course.engine import hidden_messages
from course.engine.failures import (GradingLimit, Incorrect, LearnerCodeError, LearnerRaised, NotAttempted,  # noqa: F401
                                    UnexpectedStatus, Unsupported, engine_cannot, plain_message)
from course.engine.placeholder import is_placeholder
from course.engine.results import Hint, Outcome, Result, Solution, Status
from course.store.capabilities import Capability


class LabContext(Protocol):
    """What an exercise needs of the lab it belongs to (a :class:`course.lab.session.Lab`, or the grader's
    stand-in): its id and its backend (``name``, ``supports()``); checks reach its databases as ``lab.db``
    and ``lab.scratch()``."""

    id: str
    backend: Any


EXPECT_VARIABLE = "COURSE_EXPECT_STATUS"
#: set in the kernels ``course grade`` runs: the grader checks every exercise itself, outside the kernel,
#: so ``check()`` there says so instead of checking (its verdict would count for nothing)
GRADED_OUTSIDE_VARIABLE = "COURSE_GRADED_OUTSIDE"
GRADED_OUTSIDE_MESSAGE = ("course grade checks this exercise itself, outside this kernel: the verdict is in "
                          "your feedback")


@dataclass(frozen=True)
class Assertion:
    """One declared assertion of an exercise, and the requirement it checks."""

    name: str
    points: float
    hidden: bool
    requires: frozenset[Capability]
    function: Callable[..., None]
    requirement: str = ""  #: a key of the exercise's ``requirements``


@dataclass(frozen=True)
class RequirementRow:
    """One row of an exercise's requirements table."""

    key: str
    text: str
    points: float
    visible: tuple[str, ...]  #: descriptions of the visible assertions that check it
    hidden: tuple[str, ...]  #: descriptions of the hidden ones (the same rule on other data)


def _marker(points: float, hidden: bool, requires: Iterable[Capability], checks: str):
    def decorate(function):
        description = (function.__doc__ or function.__name__).strip().splitlines()[0]
        function._course_assertion = Assertion(
            description, float(points), hidden, frozenset(requires), function, checks
        )
        return function

    return decorate


def visible(points: float = 1, requires: Iterable[Capability] = (), *, checks: str = ""):
    """Declare an assertion that ``check()`` runs (and grading too); ``checks`` names its requirement."""
    return _marker(points, False, requires, checks)


def hidden(points: float = 1, requires: Iterable[Capability] = (), *, checks: str = ""):
    """Declare an assertion that runs only when grading: a visible requirement on other data."""
    return _marker(points, True, requires, checks)


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
    #: requirement key -> what the statement (and the prose it points to) demands, in the learner's words
    requirements: ClassVar[Mapping[str, str]] = {}
    #: the answer is fixed data with nothing to vary (a self-check's answers): no hidden assertions,
    #: since any would repeat a visible one or add a rule the learner cannot see
    fixed_answer: ClassVar[bool] = False

    def __init__(self, lab: LabContext):
        self.lab = lab
        self._hints_shown = 0
        self._withhold = False  #: a hidden assertion's message is a fixed sentence (grading's hidden pass)

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

    @classmethod
    def requirement_table(cls) -> list[RequirementRow]:
        """Each requirement with its points and the visible and hidden assertions that check it."""
        rows = []
        for key, text in cls.requirements.items():
            mine = [a for a in cls.assertions() if a.requirement == key]
            rows.append(RequirementRow(key, text, sum(a.points for a in mine),
                                       tuple(a.name for a in mine if not a.hidden),
                                       tuple(a.name for a in mine if a.hidden)))
        return rows

    @property
    def tag(self) -> str:
        """The cell tag of this exercise's answer cell."""
        return f"exercise:{self.id}"

    # ---- helpers for assertions ----------------------------------------------
    def call(self, name: str, function: Any, *args: Any, expect_raise: bool = False, **kwargs: Any) -> Any:
        """Call the learner's ``function``; placeholder -> NotAttempted, raise -> LearnerCodeError.

        With ``expect_raise=True`` what the function raised is returned as a :class:`LearnerRaised`
        instead (for statements such as "raise TypeError for a price that is not an int").
        """
        if is_placeholder(function):
            raise NotAttempted(name)
        if not callable(function):
            raise Incorrect(f"{name} should be a function, but it is a {type(function).__name__}")
        try:
            value = function(*args, **kwargs)
        except (NotAttempted, Incorrect, GradingLimit):
            raise
        except Exception as error:  # the learner's code failed (or raised on purpose)
            if engine_cannot(error):
                raise Unsupported(feature=f"a feature {self.lab.backend.name} does not implement "
                                          f"({str(error).strip().splitlines()[0][:160]})") from error
            raised = LearnerRaised.from_exception(error)
            if expect_raise:
                return raised
            raise LearnerCodeError(f"{name}(...) raised {raised}", raised) from error
        if is_placeholder(value):
            raise NotAttempted(name)
        return value

    def call_watching(self, name: str, function: Any, *args: Any, **kwargs: Any) -> tuple[Any, tuple]:
        """Call like :meth:`call`; return ``(value, args as they were after the call)``.

        For statements such as "leave the caller's dict alone": compare the returned arguments with a
        copy taken before.  In this process they are the very objects passed; a grader that runs the
        learner's code elsewhere sends them back with the reply.
        """
        value = self.call(name, function, *args, **kwargs)
        return value, args

    def raised(self, name: str, function: Any, *args: Any, **kwargs: Any) -> LearnerRaised | None:
        """Call the learner's ``function``; return what it raised, or None when it returned."""
        value = self.call(name, function, *args, expect_raise=True, **kwargs)
        return value if isinstance(value, LearnerRaised) else None

    def expect_type(self, name: str, value: Any, kind: type | tuple[type, ...], example: str = "") -> Any:
        """Return ``value`` if it is of ``kind``, else fail with a message naming the expected type.

        A cursor or generator the grader carried across as a list (its ``returned_type`` says what it was)
        is judged as what it was, as in one process."""
        got = str(getattr(value, "returned_type", type(value).__name__))
        if isinstance(value, kind) and got in ("list", type(value).__name__):
            return value
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wanted = " or ".join(k.__name__ for k in kinds)
        hint = f", for example {example}" if example else ""

        def a(word: str) -> str:
            return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"

        raise Incorrect(f"{name} should be {a(wanted)}{hint}; got {a(got)}: {value!r:.80}")

    # ---- evaluation -----------------------------------------------------------
    def evaluate(self, namespace: Mapping[str, Any], *, include_hidden: bool) -> Result:
        """Run the assertions against the answers found in ``namespace``.

        ``check()`` (``include_hidden=False``) runs every visible assertion; grading runs them all.
        """
        considered = [a for a in self.assertions() if include_hidden or not a.hidden]
        pending = 0 if include_hidden else sum(1 for a in self.assertions() if a.hidden)
        possible = sum(a.points for a in considered if self._lacking(a.requires) == [])
        missing = self._lacking(self.requires)
        if missing:
            unchecked = tuple(f"{text} ({self._needs_short(missing)})" for text in self.requirements.values())
            return Result(self.id, self.title, Status.UNSUPPORTED, self._needs(missing), 0.0, 0.0,
                          unchecked=unchecked)
        values = {}
        for name in self.answers:
            if name not in namespace or is_placeholder(namespace[name]):
                return Result(self.id, self.title, Status.NOT_ATTEMPTED,
                              f"replace the ____ in {name} with your answer", 0.0, possible, pending=pending)
            values[name] = namespace[name]
        answers = Answers(values)
        outcomes: list[Outcome] = []
        for assertion in considered:
            outcome = self._run(assertion, answers)
            outcomes.append(outcome)
            if outcome.status is Status.NOT_ATTEMPTED:
                return Result(self.id, self.title, Status.NOT_ATTEMPTED, outcome.message, 0.0, possible,
                              tuple(outcomes), pending=pending)
        return self._summarise(tuple(outcomes), possible, pending)

    def evaluate_hidden(self, namespace: Mapping[str, Any], visible: Result, *, withhold: bool = True) -> Result:
        """Grading's second pass: run the hidden assertions on the answers in ``namespace`` and summarise them
        with ``visible`` (this exercise's ``evaluate(..., include_hidden=False)``), as one ``evaluate(...,
        include_hidden=True)`` would.  The grader calls it once every visible assertion of the notebook has
        run, so that nothing the learner's code saw in a hidden check can reach a visible check's message;
        and a hidden assertion that does not pass says only a fixed sentence (:mod:`course.engine.hidden_messages`).
        ``withhold=False`` keeps the hidden assertions' own messages, as ``evaluate`` in one process does (the
        checker tests run both passes so, at the cost of one evaluation)."""
        self._withhold = withhold
        possible = sum(a.points for a in self.assertions() if self._lacking(a.requires) == [])
        settled = self._settled_before_hidden(visible, possible)
        if settled is not None:
            return settled
        answers = Answers({name: namespace[name] for name in self.answers if name in namespace})
        shown = iter(visible.outcomes)
        outcomes: list[Outcome] = []
        for assertion in self.assertions():
            outcome = self._run(assertion, answers) if assertion.hidden else next(shown)
            outcomes.append(outcome)
            if outcome.status is Status.NOT_ATTEMPTED:
                return Result(self.id, self.title, Status.NOT_ATTEMPTED, outcome.message, 0.0, possible,
                              tuple(outcomes))
        return self._summarise(tuple(outcomes), possible)

    @staticmethod
    def _settled_before_hidden(visible: Result, possible: float) -> Result | None:
        """The whole verdict when the visible pass settled it (not attempted, or nothing checkable here)."""
        if visible.status is Status.NOT_ATTEMPTED:
            return replace(visible, max_score=possible, pending=0)
        if visible.status is Status.UNSUPPORTED and not visible.outcomes:
            return replace(visible, pending=0)
        return None

    def hidden_not_run(self, visible: Result, why: str) -> Result:
        """``visible`` completed with an ``error`` outcome for each hidden assertion, which could not run
        (``why``: the notebook stopped before its hidden checks' turn)."""
        possible = sum(a.points for a in self.assertions() if self._lacking(a.requires) == [])
        settled = self._settled_before_hidden(visible, possible)
        if settled is not None:
            return settled
        if not visible.outcomes:  # the visible pass could not grade at all: its error stands
            return visible
        shown = iter(visible.outcomes)
        outcomes = tuple(Outcome(a.name, Status.ERROR, 0.0, a.points, f"not run: {why}", True, a.requirement)
                         if a.hidden else next(shown) for a in self.assertions())
        return self._summarise(outcomes, possible)

    def _lacking(self, capabilities: Iterable[Capability]) -> list[Capability]:
        return [c for c in capabilities if not self.lab.backend.supports(c)]

    def _run(self, assertion: Assertion, answers: Answers) -> Outcome:
        def outcome(status: Status, message: str = "", points: float = 0.0, withheld: str = "") -> Outcome:
            if self._withhold and assertion.hidden and status not in (Status.CORRECT, Status.NOT_ATTEMPTED):
                message = withheld or hidden_messages.INCORRECT  # never the check's data (course/engine/hidden_messages.py)
            return Outcome(assertion.name, status, points, assertion.points, message, assertion.hidden,
                           assertion.requirement)

        lacking = self._lacking(assertion.requires)
        if lacking:
            return outcome(Status.UNSUPPORTED, self._needs(lacking), withheld=self._needs(lacking))
        generic_gap = self._needs_feature(hidden_messages.ENGINE_GAP.format(backend=self.lab.backend.name))
        try:
            assertion.function(self, answers)
        except Incorrect as failure:
            return outcome(Status.INCORRECT, str(failure))
        except NotAttempted as pending:
            return outcome(Status.NOT_ATTEMPTED, f"{pending} still returns ____: write your code there")
        except LearnerCodeError as error:
            names = error.raised.type_names if error.raised is not None else ("Exception",)
            return outcome(Status.ERROR, str(error), withheld=hidden_messages.raised(names))
        except GradingLimit as limit:
            return outcome(Status.ERROR, str(limit), withheld=limit.why or str(limit))
        except Unsupported as lacking_here:
            said = lacking_here.reason or self._needs_feature(lacking_here.feature)
            return outcome(Status.UNSUPPORTED, said, withheld=said if lacking_here.fixed else generic_gap)
        except Exception as error:  # anything else: a wrong shape the assertion did not foresee
            if engine_cannot(error):
                return outcome(Status.UNSUPPORTED, self._needs_feature(
                    f"a feature {self.lab.backend.name} does not implement ({str(error).splitlines()[0][:160]})"),
                               withheld=generic_gap)
            return outcome(Status.ERROR, f"your answer could not be checked ({assertion.name.lower()}): "
                                         f"{type(error).__name__}: {error}",
                           withheld=hidden_messages.not_checkable(assertion.name, error))
        return outcome(Status.CORRECT, points=assertion.points)

    def _needs_short(self, capabilities: Iterable[Capability]) -> str:
        return "needs " + ", ".join(sorted(str(c) for c in capabilities))

    def _needs(self, capabilities: Iterable[Capability]) -> str:
        return self._needs_feature(", ".join(sorted(str(c) for c in capabilities)))

    def _needs_feature(self, feature: str) -> str:
        where = "Python >= 3.13 (mongoeco) or a MongoDB server" if self.lab.backend.name == "mongomock" \
            else "a MongoDB server (MONGODB_URI)"
        return f"needs {feature}, which {self.lab.backend.name} lacks: {where} can check this"

    def _unchecked(self, outcomes: tuple[Outcome, ...]) -> tuple[str, ...]:
        """The requirements some of whose assertions could not run here, each with what it needs."""
        found: dict[str, str] = {}
        for o in outcomes:
            if o.status is Status.UNSUPPORTED:
                text = self.requirements.get(o.requirement, o.name)
                found.setdefault(text, o.message.split(", which ")[0])
        return tuple(f"{text} ({needs})" for text, needs in found.items())

    def _summarise(self, outcomes: tuple[Outcome, ...], possible: float, pending: int = 0) -> Result:
        score = sum(o.points for o in outcomes)
        # what was at stake is what could be checked: an assertion found unsupported while it ran
        # (the answer used a feature this backend lacks) takes its points out, as a declared one does
        possible = sum(o.max_points for o in outcomes if o.status is not Status.UNSUPPORTED)
        unchecked = self._unchecked(outcomes)
        for status in (Status.INCORRECT, Status.ERROR):
            failed = [o for o in outcomes if o.status is status]
            if failed:
                return Result(self.id, self.title, status, failed[0].message, score, possible, outcomes,
                              pending, unchecked)
        lacking = [o for o in outcomes if o.status is Status.UNSUPPORTED]
        if outcomes and len(lacking) == len(outcomes):
            return Result(self.id, self.title, Status.UNSUPPORTED, lacking[0].message, 0.0, 0.0, outcomes,
                          pending, unchecked)
        if lacking:
            said = "every check that could run here passed; " + "; ".join(
                f"not checked on this backend: {item}" for item in unchecked)
            return Result(self.id, self.title, Status.PARTLY_CHECKED, said, score, possible, outcomes, pending,
                          unchecked)
        return Result(self.id, self.title, Status.CORRECT, "", score, possible, outcomes, pending)

    # ---- the learner's API ----------------------------------------------------
    def check(self) -> Result:
        """Check your answer now (visible assertions only) and show the verdict."""
        if os.environ.get(GRADED_OUTSIDE_VARIABLE):
            return Result(self.id, self.title, Status.UNSUPPORTED, GRADED_OUTSIDE_MESSAGE, 0.0, 0.0)
        result = self.evaluate(notebook_namespace(), include_hidden=False)
        expected = os.environ.get(EXPECT_VARIABLE)
        # a backend that cannot check something is never the notebook's fault: "needs ..." passes any
        # expectation; partly checked passes where "correct" is expected
        tolerated = (Status.UNSUPPORTED, Status.PARTLY_CHECKED) if expected == Status.CORRECT.value \
            else (Status.UNSUPPORTED,)
        if expected and result.status.value != expected and result.status not in tolerated:
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
