"""What the reads a learner sent asked the server for: the fields a recorded read brings back.

Lessons 00 and 01 ask for a projection ("ask the database for the names only").  A
projection applied in Python after fetching whole documents gives the same list but
still drags every field off the server, so the check looks at the read itself: it
re-runs each recorded ``find`` / ``find_one`` / ``aggregate`` against the same
collection and collects the fields the server returned.  That is behaviour, not
spelling: ``{"name": 1}``, ``["name"]``, ``{"tags": 0, ...}`` and a ``$project`` stage
all count for what they return.
"""

from __future__ import annotations

from typing import Any, Iterable

from course.recording import Op

#: read methods that return documents (count_documents and distinct return none)
_DOCUMENT_READS = ("find", "find_one", "aggregate")
#: cursor options of find that do not change which fields come back
_FIND_OPTIONS = ("filter", "projection", "sort", "skip", "limit")


def document_reads(ops: Iterable[Op]) -> list[Op]:
    """The recorded reads that return documents (``find``, ``find_one``, ``aggregate``)."""
    return [op for op in ops if op.kind == "read" and op.method in _DOCUMENT_READS]


def returned_fields(collection: Any, op: Op) -> set[str]:
    """Every top-level field the server returns for the recorded read ``op`` on ``collection``.

    ``collection`` is the real collection the read went to (not a recording wrapper, so the
    re-run is not logged as the learner's).
    """
    if op.method == "aggregate":
        pipeline = op.argument("pipeline") or []
        documents = list(collection.aggregate(list(pipeline)))
    else:
        options = {name: op.argument(name) for name in _FIND_OPTIONS if op.argument(name) is not None}
        found = collection.find(**options)
        documents = list(found.limit(1) if op.method == "find_one" else found)
    return {key for document in documents for key in document}
