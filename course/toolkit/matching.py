"""Behaviour, not spelling: what a filter matches and what an index is, whatever form they were given in.

Checks compare a learner's filter by running it against documents
(``{"kind": {"$eq": "book"}}`` is the same filter as ``{"kind": "book"}``) and
read indexes in one normalised form (keys given as a dict, a list of pairs,
an ``IndexModel`` or through ``create_indexes`` all look the same).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from course.toolkit.plans import index_keys

_SCRATCH_COLLECTION = "course_filter_probe"


def matching_ids(db: Any, filter: Mapping[str, Any], documents: Iterable[Mapping[str, Any]]) -> list[Any]:
    """The ``_id`` of each document ``filter`` matches, in ``_id`` order, run by the database itself.

    ``db`` is a scratch database (its ``course_filter_probe`` collection is replaced); every document
    needs an ``_id``.
    """
    probe = db[_SCRATCH_COLLECTION]
    probe.drop()
    documents = [dict(d) for d in documents]
    if documents:
        probe.insert_many(documents)
    try:
        return [d["_id"] for d in probe.find(dict(filter), {"_id": 1}).sort("_id", 1)]
    finally:
        probe.drop()


def same_filter(db: Any, got: Mapping[str, Any], expected: Mapping[str, Any],
                documents: Iterable[Mapping[str, Any]]) -> bool:
    """True when ``got`` and ``expected`` match exactly the same of ``documents``."""
    documents = list(documents)
    return matching_ids(db, got, documents) == matching_ids(db, expected, documents)


@dataclass(frozen=True)
class IndexSpec:
    """One index, normalised: its keys as (field, direction) pairs and the options that change behaviour."""

    name: str
    keys: tuple[tuple[str, Any], ...]
    unique: bool = False
    sparse: bool = False
    partial_filter: Mapping[str, Any] | None = None
    expire_after_seconds: int | None = None

    @property
    def fields(self) -> tuple[str, ...]:
        """The indexed fields, in order."""
        return tuple(field for field, _ in self.keys)


def index_specs(collection: Any) -> dict[str, IndexSpec]:
    """``{name: IndexSpec}`` of ``collection``'s indexes, ``_id_`` included, on any backend."""
    keys = index_keys(collection)
    specs = {}
    for name, info in collection.index_information().items():
        specs[name] = IndexSpec(
            name=name,
            keys=tuple((field, direction) for field, direction in keys[name]),
            unique=bool(info.get("unique", False)) or name == "_id_",
            sparse=bool(info.get("sparse", False)),
            partial_filter=info.get("partialFilterExpression"),
            expire_after_seconds=info.get("expireAfterSeconds"),
        )
    return specs


def index_on(collection: Any, fields: Iterable[str]) -> IndexSpec | None:
    """The index whose keys are exactly ``fields`` in this order (any direction), or None."""
    wanted = tuple(fields)
    for spec in index_specs(collection).values():
        if spec.fields == wanted:
            return spec
    return None
