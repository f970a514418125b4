"""The first step of every schema change: a census of the shapes a collection really holds.

:func:`type_census` counts documents by schema version and by the BSON type
of a few fields, the way ``$group`` on ``{"$type": ...}`` does on a server.
Two engines differ from a server here:

- mongoeco's own ``$type`` *expression* reports a small 64-bit long
  (``Int64(12)``) as ``"int"``; the course absorbs that when it opens the
  engine (:mod:`course.store.quirks`), and :func:`type_census` re-decides every
  ``int``/``long`` with ``$type`` *queries* as well, so it holds on any engine.
- mongomock cannot tell int from long at all, and has no ``$type`` expression:
  there the census raises :class:`CensusUnsupported` rather than print a
  census that would hide exactly the document it exists to find.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from course.store.capabilities import Capability
from course.toolkit.census import bson_type_of

DEFAULT_FIELDS = ("customer.phone", "customer.phones", "views")
VERSION_FIELD = "schema_version"
_NUMERIC = ("int", "long")


class CensusUnsupported(RuntimeError):
    """This backend cannot tell the types apart, so no census is given."""


def group_census(collection: Any, fields: Iterable[str] = DEFAULT_FIELDS,
                 version_field: str = VERSION_FIELD) -> dict[tuple, int]:
    """The one-pipeline census: ``$group`` on the version and ``{"$type": field}``, exactly as on a server.

    Returns {(version, type of each field...): count}.  Correct on a server, and on mongoeco
    once the course has absorbed its ``$type`` quirk (see :func:`type_census`).
    """
    fields = tuple(fields)
    key = {"v": {"$ifNull": [f"${version_field}", 1]}}
    key.update({f"f{i}": {"$type": f"${field}"} for i, field in enumerate(fields)})
    pipeline = [{"$group": {"_id": key, "n": {"$sum": 1}}}]
    return {(row["_id"]["v"],) + tuple(row["_id"][f"f{i}"] for i in range(len(fields))): row["n"]
            for row in collection.aggregate(pipeline)}


def type_census(collection: Any, backend: Any, fields: Iterable[str] = DEFAULT_FIELDS,
                version_field: str = VERSION_FIELD) -> dict[tuple, int]:
    """Count documents by (version, BSON type of each field), deciding int vs long with ``$type`` queries.

    Raises :class:`CensusUnsupported` on a backend that cannot tell int from long.
    """
    if not backend.supports(Capability.TYPE_QUERIES):
        raise CensusUnsupported(
            f"no census on {backend.name}: its $type cannot tell int from long, so it would hide "
            "the long counter this audit exists to find (run it on mongoeco or a server)")
    fields = tuple(fields)
    project = {"v": {"$ifNull": [f"${version_field}", 1]}}
    project.update({f"f{i}": {"$type": f"${field}"} for i, field in enumerate(fields)})
    rows = list(collection.aggregate([{"$project": project}]))
    longs = {field: {d["_id"] for d in collection.find({field: {"$type": "long"}}, {"_id": 1})}
             for field in fields}
    census: Counter = Counter()
    for row in rows:
        types = []
        for i, field in enumerate(fields):
            kind = row[f"f{i}"]
            if kind in _NUMERIC:
                kind = "long" if row["_id"] in longs[field] else "int"
            types.append(kind)
        census[(row["v"],) + tuple(types)] += 1
    return dict(census)


_MISSING = object()


def _get(document: dict, path: str) -> Any:
    value: Any = document
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def expected_census(documents: Iterable[dict], fields: Iterable[str] = DEFAULT_FIELDS,
                    version_field: str = VERSION_FIELD) -> dict[tuple, int]:
    """The census computed in Python from documents as stored (used to check the database's answer)."""
    fields = tuple(fields)
    census: Counter = Counter()
    for doc in documents:
        version = doc.get(version_field, 1)
        types = tuple("missing" if (v := _get(doc, f)) is _MISSING else bson_type_of(v) for f in fields)
        census[(version,) + types] += 1
    return dict(census)


def format_census(census: dict[tuple, int], fields: Iterable[str] = DEFAULT_FIELDS) -> str:
    """A fixed-width table of a census, one row per shape, in a stable order."""
    header = ("version",) + tuple(fields) + ("orders",)
    rows = [tuple(str(x) for x in key) + (str(n),) for key, n in sorted(census.items(), key=lambda kv: str(kv[0]))]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header] + rows]
    return "\n".join(lines)
