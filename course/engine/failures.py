"""How an assertion or an answer can fail: the exceptions checks raise and the engine turns into verdicts.

``Incorrect`` (a rule broken: the message is the learner's feedback), ``NotAttempted`` (the placeholder is
still there), ``LearnerRaised`` and ``LearnerCodeError`` (the learner's own code raised), ``Unsupported``
(this backend lacks what the check needs: "needs ..."), ``GradingLimit`` (a grading bound was hit) and
``UnexpectedStatus`` (a notebook run under ``COURSE_EXPECT_STATUS`` got another verdict).  Lessons import
them from :mod:`course.engine.exercise`, which re-exports them.
"""

from __future__ import annotations

from course.store.capabilities import Capability


class Incorrect(AssertionError):
    """An assertion failed; the message tells the learner what is wrong."""


class NotAttempted(Exception):
    """The answer still holds (or returns) the placeholder."""


class LearnerRaised(Exception):
    """What a learner's function raised, as plain data (it crosses the grader's channel this way too).

    ``type_name`` is the exception's class name, ``type_names`` the names along its class hierarchy
    (so ``is_a("ValueError")`` holds for a subclass), ``message`` its text.
    """

    def __init__(self, type_name: str, message: str, type_names: tuple[str, ...] = ()):
        # Exception's own __init__, not the next class's: the grader mixes this class with the exception's
        # own (a pymongo BulkWriteError takes a reply document, not a message)
        Exception.__init__(self, f"{type_name}: {message}" if message else type_name)
        self.type_name = type_name
        self.message = message
        self.type_names = tuple(type_names) or (type_name,)

    @classmethod
    def from_exception(cls, error: BaseException) -> "LearnerRaised":
        """The plain-data form of ``error``."""
        if isinstance(error, LearnerRaised):
            return error
        names = tuple(klass.__name__ for klass in type(error).__mro__ if klass is not object)
        return cls(type(error).__name__, plain_message(error), names)

    def is_a(self, type_name: str) -> bool:
        """True when the raised exception is ``type_name`` or a subclass of it."""
        return type_name in self.type_names


class GradingLimit(Exception):
    """A limit of the grader was reached while the learner's code ran (it wrote too much through the checks'
    database, or a command it sent would not stop): the assertion is an ``error`` with this reason.

    ``why`` is the limit's own sentence, without the learner's function named (what a hidden check shows)."""

    def __init__(self, message: str, why: str = ""):
        super().__init__(message)
        self.why = why




def plain_message(error: BaseException) -> str:
    """What ``error`` says, without the ``, full error: {...}`` reply document pymongo appends to its
    server errors (the server's own words stay; the rest is the driver's dump, not a message)."""
    try:
        text = str(error)
    except Exception:  # noqa: BLE001 - an exception whose __str__ fails says nothing
        return ""
    return text.split(", full error: ")[0] if type(error).__module__.startswith("pymongo") else text


class LearnerCodeError(Exception):
    """The learner's code raised while an assertion ran it; ``raised`` says what."""

    def __init__(self, message: str, raised: LearnerRaised | None = None):
        super().__init__(message)
        self.raised = raised


class UnexpectedStatus(AssertionError):
    """Raised by ``check()`` when ``COURSE_EXPECT_STATUS`` is set and the verdict differs."""


class Unsupported(Exception):
    """Raised when the answer uses a feature this backend lacks: the exercise reports "needs ...".

    Give the missing capabilities, or (for a feature the engine itself says it does not implement)
    a ``feature`` description; or, when the check could not see what it needs for another reason than
    the backend (a read the learner's code made where no recording reaches), the whole ``reason``.
    """

    def __init__(self, *capabilities: Capability, feature: str = "", reason: str = "", fixed: bool = False):
        self.capabilities = capabilities
        self.feature = feature or ", ".join(sorted(str(c) for c in capabilities))
        self.reason = reason  #: the whole message, when what is missing is not a backend's feature
        #: the text is the course's own, never built from an answer or an engine's error (a hidden check may show it)
        self.fixed = fixed or (bool(capabilities) and not feature and not reason)
        super().__init__(self.reason or self.feature)


def engine_cannot(error: BaseException) -> bool:
    """True when ``error`` is an embedded engine saying it does not implement something.

    mongomock (and, rarely, mongoeco) raise NotImplementedError from their own code for features they
    lack; that is the backend's limit, never the learner's mistake.
    """
    if not isinstance(error, NotImplementedError):
        return False
    frame = error.__traceback__
    last = None
    while frame is not None:
        last = frame.tb_frame.f_code.co_filename
        frame = frame.tb_next
    return last is not None and any(part in last.replace("\\", "/") for part in ("/mongomock/", "/mongoeco/"))
