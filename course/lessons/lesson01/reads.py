"""What the reads a learner sent asked the server for: the fields a recorded read brings back.

Lessons 00 and 01 ask for a projection ("ask the database for the names only").  A
projection applied in Python after fetching whole documents gives the same list but
still drags every field off the server, so the check looks at the read itself: it
re-runs each recorded ``find`` / ``find_one`` / ``aggregate`` against the same
collection and collects what the server returned.  That is behaviour, not
spelling: ``{"name": 1}``, ``["name"]``, ``{"tags": 0, ...}``, a ``$project`` stage and
a ``$group`` that pushes the names into one list all count for what they return.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from course.engine.recording import Op

#: read methods that return documents (count_documents and distinct return none)
_DOCUMENT_READS = ("find", "find_one", "aggregate")
#: cursor options of find that do not change which fields come back
_FIND_OPTIONS = ("filter", "projection", "sort", "skip", "limit")


def document_reads(ops: Iterable[Op]) -> list[Op]:
    """The recorded reads that return documents (``find``, ``find_one``, ``aggregate``)."""
    return [op for op in ops if op.kind == "read" and op.method in _DOCUMENT_READS]


def returned_documents(collection: Any, op: Op) -> list[dict]:
    """The documents the server returns for the recorded read ``op`` on ``collection``.

    ``collection`` is the real collection the read went to (not a recording wrapper, so the
    re-run is not logged as the learner's).
    """
    if op.method == "aggregate":
        pipeline = op.argument("pipeline") or []
        return list(collection.aggregate(list(pipeline)))
    options = {name: op.argument(name) for name in _FIND_OPTIONS if op.argument(name) is not None}
    found = collection.find(**options)
    return list(found.limit(1) if op.method == "find_one" else found)


def returned_fields(collection: Any, op: Op) -> set[str]:
    """Every top-level field the server returns for the recorded read ``op`` on ``collection``."""
    return {key for document in returned_documents(collection, op) for key in document}


def _leaves(value: Any) -> Iterator[Any]:
    """The scalar values inside ``value`` (through lists and embedded documents)."""
    if isinstance(value, dict):
        for inner in value.values():
            yield from _leaves(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _leaves(inner)
    else:
        yield value


def fields_beyond(documents: Iterable[dict], wanted: set, allowed: Iterable[str] = ()) -> list[str]:
    """The returned fields that hold anything but values of ``wanted``, sorted (``allowed`` fields aside).

    Judged by what comes back, not by field names: a ``$group`` that pushes the names into a list, or a
    ``$project`` that renames ``name``, brings back names only; a price under any name is more.
    """
    extra = set()
    for document in documents:
        for key, value in document.items():
            if key not in allowed and any(not isinstance(leaf, str) or leaf not in wanted
                                          for leaf in _leaves(value)):
                extra.add(str(key))
    return sorted(extra)


def unpaged_documents(collection: Any, op: Op) -> list[dict]:
    """What the recorded read ``op`` selects before any paging: its filter (or its pipeline without the
    ``$skip`` and ``$limit`` stages) run again on ``collection``, every field kept that the read keeps."""
    if op.method == "aggregate":
        pipeline = [stage for stage in (op.argument("pipeline") or [])
                    if not (isinstance(stage, dict) and set(stage) & {"$skip", "$limit"})]
        return list(collection.aggregate(pipeline))
    return list(collection.find(op.argument("filter") or {}))


def returned_type(value: Any) -> str:
    """The type name of what a learner's function returned.

    A grader that carries a returned cursor or generator across as a list may mark it with the type it had
    (an attribute ``returned_type``); in this process it is the value's own type.
    """
    return str(getattr(value, "returned_type", type(value).__name__))


def is_a_list(value: Any) -> bool:
    """True when the learner's function returned a list (not a tuple, a cursor or a generator)."""
    return isinstance(value, list) and returned_type(value) in ("list", type(value).__name__)
