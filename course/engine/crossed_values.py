"""Values as they come back from a learner's function run in another process (the grader's channel).

Checks meet these where an answer ran in the learner's kernel and its result crossed to the grader:
a cursor or generator arrives as a :class:`Materialised` list, a value that is not data as an
:class:`Opaque` that only names its type.  They live in the engine so that checks can tell them apart
without importing the grader.
"""

from __future__ import annotations


class Materialised(list):
    """The items of a cursor or generator a learner's function returned, as a list that remembers the type
    the value had (``returned_type``): a check of "returns a list" can tell them apart, as in one process."""

    returned_type = "list"


class Opaque:
    """A value that could not cross the channel as data: only its type name did.  Equal to nothing else."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<a {self.type_name} object>"


_NAMED: dict[str, type] = {}
_MOST_NAMES = 256  #: distinct type names given a class of their own; past them an Opaque keeps its plain class


def opaque(type_name: str) -> Opaque:
    """An :class:`Opaque` for a value of the type ``type_name``, of a subclass named after it, so that a check's
    ``type(value).__name__`` names the learner's type (``UpdateResult``) when graded as in one process."""
    kind = _NAMED.get(type_name)
    if kind is None and len(_NAMED) < _MOST_NAMES and type_name.isidentifier():
        kind = _NAMED[type_name] = type(type_name, (Opaque,), {"__module__": __name__})
    return (kind or Opaque)(type_name)

