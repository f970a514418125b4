"""The rule "one key per question" of a dict answer, shared by the lessons' self-checks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from course.engine.failures import Incorrect


def refuse_other_keys(name: str, given: Mapping, keys: Iterable[str]) -> None:
    """Raise :class:`Incorrect` naming every key of ``given`` (the answer ``name``) that is not one of ``keys``."""
    keys = list(keys)
    extra = sorted(repr(k) for k in given if k not in keys)
    if extra:
        raise Incorrect(f"{name} also has {', '.join(extra)}, which is no question's key: the statement asks for "
                        f"one key per question ({', '.join(keys)}) and no other")
