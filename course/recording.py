"""Wrappers that record what learner code does through a collection or a database.

Checks use them to see *how* learner code touched the data (one ``$set`` or a
whole-document replacement; whether it read a collection at all), not only
what the data looks like afterwards.
"""

from __future__ import annotations

from typing import Any

WRITE_METHODS = frozenset({
    "insert_one", "insert_many", "update_one", "update_many", "replace_one",
    "delete_one", "delete_many", "find_one_and_update", "find_one_and_replace",
    "find_one_and_delete", "bulk_write",
})
READ_METHODS = frozenset({
    "find", "find_one", "aggregate", "count_documents", "distinct", "estimated_document_count",
})


class RecordingCollection:
    """Wraps a collection; every read and write method call is logged, then passed through."""

    def __init__(self, collection: Any):
        self._collection = collection
        self._writes: list[tuple[str, tuple]] = []
        self._reads: list[str] = []

    def writes(self) -> list[tuple[str, tuple]]:
        """The write calls so far, as (method name, positional args)."""
        return list(self._writes)

    def reads(self) -> list[str]:
        """The names of the read methods called so far, in order."""
        return list(self._reads)

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._collection, name)
        if name in READ_METHODS:
            def record_read(*args: Any, **kwargs: Any) -> Any:
                self._reads.append(name)
                return target(*args, **kwargs)

            return record_read
        if name not in WRITE_METHODS:
            return target

        def record(*args: Any, **kwargs: Any) -> Any:
            self._writes.append((name, args + tuple(kwargs.get(k) for k in ("filter", "update") if k in kwargs)))
            return target(*args, **kwargs)

        return record

    def __getitem__(self, name: str) -> Any:
        return self._collection[name]


class RecordingDatabase:
    """A database whose collections (``db.orders``, ``db["orders"]``) record the calls made through them."""

    def __init__(self, db: Any):
        self._db = db
        self._collections: dict[str, RecordingCollection] = {}

    def collection(self, name: str) -> RecordingCollection:
        """The recording wrapper of collection ``name``."""
        if name not in self._collections:
            self._collections[name] = RecordingCollection(self._db[name])
        return self._collections[name]

    def writes(self) -> list[tuple[str, str, tuple]]:
        """Every write so far, as (collection name, method name, positional args)."""
        return [(name, method, args) for name, wrapped in self._collections.items()
                for method, args in wrapped.writes()]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or hasattr(type(self._db), name):
            return getattr(self._db, name)
        return self.collection(name)

    def __getitem__(self, name: str) -> RecordingCollection:
        return self.collection(name)
