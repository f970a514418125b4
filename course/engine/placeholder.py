"""The placeholder that marks an answer the learner has not written yet."""

from __future__ import annotations


class Placeholder:
    """A value that stands for "not answered yet"; falsy, and prints as ``____``."""

    _instance: "Placeholder | None" = None

    def __new__(cls) -> "Placeholder":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "____"

    def __bool__(self) -> bool:
        return False


#: Write ``answer = ____`` (or ``return ____``) where an answer is still to come.
____ = Placeholder()


def is_placeholder(value: object) -> bool:
    """True when ``value`` is the course placeholder (or contains it at the top level)."""
    if isinstance(value, Placeholder):
        return True
    if isinstance(value, (list, tuple, set)):
        return any(isinstance(item, Placeholder) for item in value)
    if isinstance(value, dict):
        return any(isinstance(item, Placeholder) for item in value.values())
    return False
