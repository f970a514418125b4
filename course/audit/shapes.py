"""Shapes of documents: their fields, their version field, and which documents are of one kind.

A document's *shape* here is the set of its top-level field names (``_id``
left out).  Two shapes are the same kind when they share at least
:data:`SAME_KIND` of their fields (Jaccard similarity: shared fields over all
fields of either); :func:`kinds_of` groups a sample's documents that way, most
common first.  A *discriminator* is a field every document has, with few
values (at most :data:`MAX_DISCRIMINATOR_VALUES`, and on average each held by
two documents or more), each value belonging to one kind (lesson 04's ``kind``); a schema
version field also counts, with a missing version read as version 1 (lesson
04's convention).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

#: Share of fields two shapes must have in common to be one kind.
SAME_KIND = 0.5
#: Fields that say which version of the schema a document has (lessons 03 to 05).
VERSION_FIELDS = ("schema_version", "schemaVersion")
#: At most this many values for a field to discriminate kinds.
MAX_DISCRIMINATOR_VALUES = 20
MISSING = "missing"


def shape(document: Mapping) -> frozenset[str]:
    """The top-level field names of ``document``, ``_id`` left out."""
    return frozenset(k for k in document if k != "_id")


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared fields over all fields of either (1.0 for two empty shapes)."""
    union = a | b
    return len(a & b) / len(union) if union else 1.0


@dataclass
class Kind:
    """Documents of one kind: the first shape seen of it, and every document assigned to it."""

    representative: frozenset[str]
    ids: list = field(default_factory=list)
    shapes: Counter = field(default_factory=Counter)

    @property
    def documents(self) -> int:
        """How many documents are of this kind."""
        return len(self.ids)

    @property
    def fields(self) -> frozenset[str]:
        """Every field a document of this kind has."""
        return frozenset().union(*self.shapes) if self.shapes else frozenset()


def kinds_of(documents: Iterable[Mapping]) -> list[Kind]:
    """Group ``documents`` into kinds (most common shapes first, each joining the first similar kind)."""
    documents = list(documents)
    by_shape: dict[frozenset[str], list] = {}
    for document in documents:
        by_shape.setdefault(shape(document), []).append(document.get("_id"))
    kinds: list[Kind] = []
    for fields, ids in sorted(by_shape.items(), key=lambda item: (-len(item[1]), sorted(item[0]))):
        home = next((k for k in kinds if similarity(k.representative, fields) >= SAME_KIND), None)
        if home is None:
            home = Kind(fields)
            kinds.append(home)
        home.ids.extend(ids)
        home.shapes[fields] += len(ids)
    return sorted(kinds, key=lambda k: -k.documents)


def version_field(documents: Iterable[Mapping]) -> str | None:
    """The schema version field most documents that have one use, or None when none has one."""
    counts = Counter(name for d in documents for name in VERSION_FIELDS if name in d)
    return counts.most_common(1)[0][0] if counts else None


def _hashable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return (type(value).__name__, value)
    return None


def discriminators(documents: list[Mapping], kinds: list[Kind]) -> list[str]:
    """Fields whose value says which kind a document is (see the module docstring)."""
    kind_of = {}
    for index, kind in enumerate(kinds):
        for _id in kind.ids:
            kind_of[repr(_id)] = index
    candidates = set.intersection(*(set(d) for d in documents)) - {"_id"} if documents else set()
    candidates |= {f for f in VERSION_FIELDS if any(f in d for d in documents)}
    found = []
    for name in sorted(candidates):
        seen: dict[Any, set[int]] = {}
        for document in documents:
            value = _hashable(document.get(name, 1 if name in VERSION_FIELDS else MISSING))
            if value is None:
                break
            seen.setdefault(value, set()).add(kind_of[repr(document.get("_id"))])
        else:
            few = 1 < len(seen) <= min(MAX_DISCRIMINATOR_VALUES, len(documents) / 2)  # values repeat
            if few and all(len(k) == 1 for k in seen.values()):
                found.append(name)
    return found


def field_values(document: Mapping, prefix: str = "") -> Iterable[tuple[str, Any]]:
    """(dotted path, value) for every field of ``document`` and of its embedded objects (not inside arrays)."""
    for key, value in document.items():
        path = f"{prefix}{key}"
        yield path, value
        if isinstance(value, Mapping):
            yield from field_values(value, path + ".")
