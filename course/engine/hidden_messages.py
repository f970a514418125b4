"""What a hidden or secret assertion may say when it does not pass: fixed sentences, never its data.

A hidden assertion hands the learner's code data the learner has not seen, and that code can put the data
anywhere a message could pick it up: in what it raises (its message, its notes, its class's name), in what it
returns (which a check's message may quote), in a function's ``__name__`` or an operator the engine refuses
by name.  So when a hidden assertion does not pass, its outcome says only which assertion it was (the first
line of its docstring, written by the course) and one sentence of this module per kind of failure; the
learner's exception is named by the nearest builtin or pymongo class it derives from.  Visible assertions
keep their whole messages: their data is in the learner's notebook already.

What stays observable is one bit per hidden assertion (passed or not) and the time it took; the grader runs
every hidden assertion of a notebook after its last visible one (:mod:`course.grading.execution`), so no
visible check's message can show what the learner's code saw in a hidden one.
"""

from __future__ import annotations

import builtins
from typing import Any

INCORRECT = ("this rule did not hold on the hidden check's data, which is never shown: the visible checks "
             "of the same rule, or data of your own, show the details")
RAISED = ("(a hidden check's data is never shown: run the visible checks, or call your function with data of "
          "your own, to see the message)")
NOT_CHECKABLE = "your answer could not be checked on the hidden check's data ({name}): {kind}"
ENGINE_GAP = "a feature {backend} does not implement"


def _known_names() -> frozenset[str]:
    names = {name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)}
    try:
        import pymongo.errors

        names |= {name for name, value in vars(pymongo.errors).items()
                  if isinstance(value, type) and issubclass(value, BaseException)}
    except ImportError:  # pragma: no cover - pymongo is a dependency of the course
        pass
    return frozenset(names)


_KNOWN: frozenset[str] | None = None


def safe_type_name(type_names: tuple[str, ...]) -> str:
    """The first of ``type_names`` (an exception's class names along its hierarchy, its own first) that is a
    builtin or pymongo exception class; a class the learner's code made up is named by its known base only."""
    global _KNOWN
    if _KNOWN is None:
        _KNOWN = _known_names()
    for name in type_names:
        if name in _KNOWN:
            return name if name == type_names[0] else f"a subclass of {name}"
    return "an exception of a class your code defined"


def raised(type_names: tuple[str, ...]) -> str:
    """What a hidden assertion says when the learner's code raised."""
    return f"your code raised {safe_type_name(type_names)} {RAISED}"


def not_checkable(assertion_name: str, error: Any) -> str:
    """What a hidden assertion says when the check itself failed on the answer's shape (the error is the
    grader's own, so its class name is safe; its text may quote the answer and is left out)."""
    return NOT_CHECKABLE.format(name=assertion_name.lower(), kind=type(error).__name__)
