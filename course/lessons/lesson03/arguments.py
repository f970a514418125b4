"""Whether learner code changed what it was given: lab 03's writer and reader must leave their argument alone.

:func:`call_keeping` is the one place that watches it, through :meth:`Exercise.call_watching`: in this
process the argument is the very dict passed, and a grader that runs the learner's code elsewhere sends
it back as it was after the call, so ``check()`` and ``course grade`` compare the same thing.
"""

from __future__ import annotations

from typing import Any

from course.toolkit.census import encoded_type
from course.engine.exercise import Exercise


def call_keeping(exercise: Exercise, name: str, function: Any, argument: Any) -> tuple[Any, Any]:
    """Call ``function(argument)``: (what it returned or raised, the argument as it was afterwards)."""
    outcome, after = exercise.call_watching(name, function, argument, expect_raise=True)
    return outcome, after[0]


def difference(before: dict, after: Any) -> str:
    """The first field that differs between two documents, in words ("" when none does)."""
    if not isinstance(after, dict):
        return f"it became a {type(after).__name__}"
    for key in list(before) + [k for k in after if k not in before]:
        if key not in after:
            return f"{key} was removed"
        if key not in before:
            return f"{key} was added ({after[key]!r})"
        if before[key] != after[key] or _stored_as(before[key]) != _stored_as(after[key]):
            return f"{key} changed from {before[key]!r} to {after[key]!r}"
    return ""


def _stored_as(value: Any) -> str:
    """The BSON type ``value`` is stored as (so True differs from 1, 2499.0 from 2499, but an int from nothing)."""
    try:
        return encoded_type(value)
    except Exception:  # not encodable: compare by Python type
        return type(value).__name__
