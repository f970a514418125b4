"""A ``$type`` census: which BSON types a field really holds, on every backend.

Audit before you validate: before writing a validator, count how many
documents hold each field as each BSON type.  The census answers with
``$type`` *queries*, one per candidate type, on every backend whose ``$type``
tells int from long (a server, mongoeco).  Two shortcuts are avoided on
purpose:

* ``$group`` on ``{"$type": "$field"}`` is what you would write on a server,
  but mongoeco's aggregation reports a small ``Int64`` as ``"int"``;
* mongomock's ``$type`` cannot tell int from long at all (an ``Int64`` matches
  ``"int"``), so on mongomock the census reads the decoded documents instead
  and classifies each value in Python (:func:`bson_type_of`): ``Int64``, or an
  ``int`` outside the int32 range, is a long.  The :class:`Census` says which
  method it used and what that method cannot see.

A field that is an array counts as ``"array"`` only (not also as the types of
its elements, which is what a bare ``$type`` query would match).  A field the
document lacks counts as ``"missing"``.

Typical use::

    census = type_census(db.products, "views", lab.backend)
    print(census)                 # a small table
    census.counts                 # {"int": 297, "long": 1, "missing": 2}
    ids_of_type(db.products, "views", "long", lab.backend)   # which documents
"""

from __future__ import annotations

import datetime
import re
import uuid
from collections import Counter
from dataclasses import dataclass, field as dataclass_field
from typing import Any, Iterable, Mapping

import bson
from bson.binary import Binary
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from course.store.capabilities import Capability

#: The BSON type aliases the census asks about, in the order it reports them.
CANDIDATE_TYPES = ("int", "long", "double", "decimal", "string", "bool", "null", "object", "array",
                   "objectId", "date", "binData", "regex", "timestamp")
MISSING = "missing"
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1

QUERIES = "$type queries"
DECODED = "decoded documents"
_DECODED_NOTE = ("this backend's $type cannot tell int from long, so types were read from the decoded "
                 "documents: an Int64, or an int outside the int32 range, counts as long")


@dataclass(frozen=True)
class Census:
    """How many documents hold ``field`` as each BSON type."""

    field: str
    counts: dict[str, int]  #: type alias (or "missing") -> number of documents; zero counts left out
    total: int  #: documents considered (matching the filter)
    method: str  #: QUERIES or DECODED
    note: str = ""

    @property
    def types(self) -> tuple[str, ...]:
        """The types found, in :data:`CANDIDATE_TYPES` order, "missing" last."""
        return tuple(self.counts)

    def count(self, type_name: str) -> int:
        """Documents holding the field as ``type_name`` (0 when none do)."""
        return self.counts.get(type_name, 0)

    def __str__(self) -> str:
        width = max([len(t) for t in self.counts] + [len("type")])
        lines = [f"{self.field}: {self.total} documents ({self.method})", f"  {'type':<{width}}  documents"]
        lines += [f"  {t:<{width}}  {n:>9}" for t, n in self.counts.items()]
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython shows the table
        printer.text(str(self))


@dataclass(frozen=True)
class Shape:
    """One combination of field types and how many documents have it."""

    types: dict[str, str] = dataclass_field(default_factory=dict)  #: field -> type alias
    documents: int = 0

    def __str__(self) -> str:
        noun = "document" if self.documents == 1 else "documents"
        return ", ".join(f"{f}: {t}" for f, t in self.types.items()) + f"  ({self.documents} {noun})"


def bson_type_of(value: Any) -> str:
    """The BSON type alias a decoded Python value is stored as (what ``$type`` would say).

    ``bool`` before ``int`` (a bool is an int in Python); an ``Int64``, or an
    ``int`` outside the int32 range (the driver stores it as a long), is
    ``"long"``.
    """
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Int64):
        return "long"
    if isinstance(value, int):
        return "int" if INT32_MIN <= value <= INT32_MAX else "long"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, ObjectId):
        return "objectId"
    if isinstance(value, datetime.datetime):
        return "date"
    if isinstance(value, Decimal128):
        return "decimal"
    if isinstance(value, (bytes, Binary, uuid.UUID)):
        return "binData"
    if isinstance(value, (Regex, re.Pattern)):
        return "regex"
    if isinstance(value, Timestamp):
        return "timestamp"
    return type(value).__name__


def uses_type_queries(backend: Any) -> bool:
    """True when the census can ask the backend with ``$type`` queries."""
    return backend.supports(Capability.TYPE_QUERIES)


def type_filter(field: str, type_name: str) -> dict:
    """The query matching documents whose ``field`` is of ``type_name`` (arrays count only as "array")."""
    if type_name == MISSING:
        return {field: {"$exists": False}}
    if type_name == "array":
        return {field: {"$type": "array"}}
    return {"$and": [{field: {"$type": type_name}}, {field: {"$not": {"$type": "array"}}}]}


def _and(filter: Mapping | None, clause: dict) -> dict:
    return {"$and": [dict(filter), clause]} if filter else clause


def _lookup(document: Mapping, path: str) -> tuple[bool, Any]:
    value: Any = document
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _decoded_type(document: Mapping, path: str) -> str:
    found, value = _lookup(document, path)
    return bson_type_of(value) if found else MISSING


def _ordered(counter: Counter) -> dict[str, int]:
    order = list(CANDIDATE_TYPES) + sorted(set(counter) - set(CANDIDATE_TYPES) - {MISSING}) + [MISSING]
    return {t: counter[t] for t in order if counter.get(t)}


def type_census(collection: Any, field: str, backend: Any, *, filter: Mapping | None = None) -> Census:
    """Count the documents of ``collection`` (matching ``filter``) by the BSON type of ``field``.

    ``backend`` is the lab's backend (``lab.backend``): it decides between
    ``$type`` queries and decoding the documents (see the module docstring).
    ``field`` may be a dotted path through embedded objects.
    """
    total = collection.count_documents(dict(filter or {}))
    if not uses_type_queries(backend):
        counter = Counter(_decoded_type(d, field) for d in collection.find(dict(filter or {}), {field: 1}))
        return Census(field, _ordered(counter), total, DECODED, _DECODED_NOTE)
    counter = Counter()
    for type_name in CANDIDATE_TYPES + (MISSING,):
        counter[type_name] = collection.count_documents(_and(filter, type_filter(field, type_name)))
    note = ""
    other = total - sum(counter.values())
    if other:
        counter["other"] = other
        note = f"{other} documents hold a type outside {', '.join(CANDIDATE_TYPES)}"
    return Census(field, _ordered(counter), total, QUERIES, note)


def ids_of_type(collection: Any, field: str, type_name: str, backend: Any, *,
                filter: Mapping | None = None) -> list:
    """The ``_id`` of every document (matching ``filter``) whose ``field`` is of ``type_name``, in _id order."""
    if not uses_type_queries(backend):
        return sorted((d["_id"] for d in collection.find(dict(filter or {}), {field: 1})
                       if _decoded_type(d, field) == type_name), key=_sort_key)
    cursor = collection.find(_and(filter, type_filter(field, type_name)), {"_id": 1})
    return sorted((d["_id"] for d in cursor), key=_sort_key)


def document_types(collection: Any, fields: Iterable[str], backend: Any, *,
                   filter: Mapping | None = None) -> dict[Any, dict[str, str]]:
    """For every document (matching ``filter``): ``_id`` -> {field: type alias} for each of ``fields``."""
    fields = list(fields)
    if not uses_type_queries(backend):
        projection = {f: 1 for f in fields} or {"_id": 1}
        return {d["_id"]: {f: _decoded_type(d, f) for f in fields}
                for d in collection.find(dict(filter or {}), projection)}
    result: dict[Any, dict[str, str]] = {d["_id"]: {} for d in collection.find(dict(filter or {}), {"_id": 1})}
    for f in fields:
        for type_name in CANDIDATE_TYPES + (MISSING,):
            for document in collection.find(_and(filter, type_filter(f, type_name)), {"_id": 1}):
                result[document["_id"]][f] = type_name
        for types in result.values():
            types.setdefault(f, "other")
    return result


def shape_census(collection: Any, fields: Iterable[str], backend: Any, *,
                 filter: Mapping | None = None) -> list[Shape]:
    """The combinations of types of ``fields`` and how many documents have each, most common first.

    This is what seed code does with ``$group`` on several ``$type``
    expressions, computed with per-type queries so that int and long stay apart.
    """
    fields = list(fields)
    counter = Counter(tuple(types[f] for f in fields)
                      for types in document_types(collection, fields, backend, filter=filter).values())
    shapes = [Shape(dict(zip(fields, combo)), n) for combo, n in counter.items()]
    return sorted(shapes, key=lambda s: (-s.documents, tuple(s.types.values())))


def _sort_key(value: Any) -> tuple:
    return (type(value).__name__, str(value)) if not isinstance(value, (int, float)) else ("", value)


def encoded_type(value: Any) -> str:
    """The BSON type alias the driver would store ``value`` as (encodes it: the ground truth)."""
    element = bson.encode({"v": value})[4]
    return _ELEMENT_TYPES.get(element, f"0x{element:02x}")


_ELEMENT_TYPES = {0x01: "double", 0x02: "string", 0x03: "object", 0x04: "array", 0x05: "binData",
                  0x07: "objectId", 0x08: "bool", 0x09: "date", 0x0A: "null", 0x0B: "regex",
                  0x10: "int", 0x11: "timestamp", 0x12: "long", 0x13: "decimal"}
