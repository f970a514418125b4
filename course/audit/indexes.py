"""Index definitions as the audit compares them, whatever form the backend gives the keys in.

Unlike :func:`course.toolkit.matching.index_specs` this keeps non-numeric directions
(``"text"``, ``"hashed"``, ``"2dsphere"``), which a real database may hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from course.audit.snapshot import CollectionSnapshot


@dataclass(frozen=True)
class IndexInfo:
    """One index: its keys and the options that change what it holds or enforces."""

    name: str
    keys: tuple[tuple[str, Any], ...]
    unique: bool
    sparse: bool
    partial: Any
    ttl: Any
    collation: Any

    @property
    def fields(self) -> tuple[str, ...]:
        """The indexed fields, in order."""
        return tuple(f for f, _ in self.keys)

    @property
    def plain(self) -> bool:
        """True for an ordinary ascending/descending index holding every document (no options)."""
        return (all(isinstance(d, (int, float)) and not isinstance(d, bool) for _, d in self.keys)
                and not self.sparse and self.partial is None)

    def keys_json(self) -> list[list]:
        """The keys as ``[[field, direction], ...]``."""
        return [[f, int(d) if isinstance(d, float) and d.is_integer() else d] for f, d in self.keys]


def _keys(raw: Any) -> tuple[tuple[str, Any], ...]:
    if isinstance(raw, Mapping):
        raw = list(raw.items())
    pairs = []
    for field, direction in list(raw):
        if isinstance(direction, float) and direction.is_integer():
            direction = int(direction)
        pairs.append((str(field), direction))
    return tuple(pairs)


def indexes_of(collection: CollectionSnapshot) -> dict[str, IndexInfo]:
    """``{name: IndexInfo}`` of the collection's indexes, ``_id_`` included."""
    return {name: IndexInfo(name=name, keys=_keys(info.get("key", ())),
                            unique=bool(info.get("unique", False)) or name == "_id_",
                            sparse=bool(info.get("sparse", False)), partial=info.get("partialFilterExpression"),
                            ttl=info.get("expireAfterSeconds"), collation=info.get("collation"))
            for name, info in collection.indexes.items()}
