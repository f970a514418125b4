"""A collection wrapper that records the writes made through it.

Checks use it to see *how* learner code changed the data (one ``$set`` or a
whole-document replacement), not only what the data looks like afterwards.
"""

from __future__ import annotations

from typing import Any

WRITE_METHODS = frozenset({
    "insert_one", "insert_many", "update_one", "update_many", "replace_one",
    "delete_one", "delete_many", "find_one_and_update", "find_one_and_replace",
    "find_one_and_delete", "bulk_write",
})


class RecordingCollection:
    """Wraps a collection; every write method call is logged, then passed through."""

    def __init__(self, collection: Any):
        self._collection = collection
        self._writes: list[tuple[str, tuple]] = []

    def writes(self) -> list[tuple[str, tuple]]:
        """The write calls so far, as (method name, positional args)."""
        return list(self._writes)

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._collection, name)
        if name not in WRITE_METHODS:
            return target

        def record(*args: Any, **kwargs: Any) -> Any:
            self._writes.append((name, args + tuple(kwargs.get(k) for k in ("filter", "update") if k in kwargs)))
            return target(*args, **kwargs)

        return record

    def __getitem__(self, name: str) -> Any:
        return self._collection[name]
