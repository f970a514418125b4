"""mongoeco's unique index builds at the cost of one key computation per document (a quirk absorbed by :mod:`course.store.quirks`).

To build a unique index on a collection that holds documents, mongoeco's
``create_index`` compares each document with every document before it, and each
comparison computes the index keys of both documents again
(``_unique_index_keys``: the field values, their equality keys, one per array
element).  For lesson 06's 300 customers and their unique ``email`` index that is
45,000 comparisons and 90,000 key computations: more than a second for one
index, paid by every check that seeds the shop.

:func:`keys_computed_once_per_build` keeps the comparisons and their order (so
the same document is refused with the same duplicate key) and computes each
document's keys once per build: while one ``create_index`` call runs, a
document's keys are remembered, with the document itself (so its identity
cannot be reused by another object).  The memory is held in a context
variable set by :func:`build_with_remembered_keys`, so nothing outside that call
(another connection's task on the wire server, a later insert) ever reads it,
and it is dropped when the call returns.
"""

from __future__ import annotations

import contextvars
from typing import Any, Callable

from course.store.patch_check import written_for

_REMEMBERED: contextvars.ContextVar[dict | None] = contextvars.ContextVar("course_index_build_keys", default=None)


@written_for("c87f0caf5192c4ac")  # the source digest of mongoeco 4.11's function it replaces
def build_with_remembered_keys(original: Callable) -> Callable:
    """``MemoryEngine.create_index``, remembering index keys for the length of the call."""

    async def create_index(self, *args, **kwargs):
        token = _REMEMBERED.set({})
        try:
            return await original(self, *args, **kwargs)
        finally:
            _REMEMBERED.reset(token)

    return create_index


@written_for("e4487919cd22dcaf")  # the source digest of mongoeco 4.11's function it replaces
def keys_computed_once_per_build(original: Callable) -> Callable:
    """``MemoryEngine._unique_index_keys``, computed once per document and fields within one index build."""

    def _unique_index_keys(self, document: Any, fields: list[str]):
        remembered = _REMEMBERED.get()
        if remembered is None:
            return original(self, document, fields)
        slot = (id(document), tuple(fields))
        known = remembered.get(slot)
        if known is None or known[0] is not document:
            known = remembered[slot] = (document, frozenset(original(self, document, fields)))
        return set(known[1])

    return _unique_index_keys
