"""``too_many_collections``: more collections than :data:`THRESHOLD`, or collections split by a name suffix.

Two findings share this kind:

* the database holds more than :data:`THRESHOLD` collections (a threshold of
  the course's choosing: MongoDB's documentation gives no number, only that
  each collection brings its own ``_id`` index and storage files);
* :data:`MIN_GROUP` or more collections whose names differ only after a
  separator (``carts_acme``, ``carts_globex``, ... or ``events_2026_10_01``,
  ...) hold documents of the same shape (their fields agree to
  :data:`SAME_SHAPE`): one collection per tenant or per day, where the tenant or
  the day should be a field.
"""

from __future__ import annotations

import re

from course.audit.report import Finding, LessonRef
from course.audit.shapes import shape, similarity
from course.audit.snapshot import DatabaseSnapshot

KIND = "too_many_collections"
#: Collections in one database past which the count alone is reported (the course's threshold).
THRESHOLD = 100
#: Collections of one shape under one name stem that make a group.
MIN_GROUP = 3
#: How alike the groups' fields must be.
SAME_SHAPE = 0.8
_SEPARATOR = re.compile(r"[_\-.]")

WHY = ("each collection brings its own _id index and its own storage files (WiredTiger keeps one file per "
       "collection and per index, each with a handle in memory and a share of every checkpoint), every index "
       "is repeated per collection, and a question about all tenants or days needs one query per collection")
HOW = ("merge the collections into one, with the suffix as a field (tenantId, day) leading the indexes; for "
       "time series, bucket the readings or use a time series collection; archive what is no longer read")
SEE = (LessonRef("02", "One kind of entity per collection"),
       LessonRef("04", "4. Bucket: group a long series into capped documents"),
       LessonRef("01", "Indexes come from queries"))


def stems(name: str) -> list[str]:
    """Every prefix of ``name`` that ends at a separator, shortest first (``a_b_c`` -> ``a_``, ``a_b_``)."""
    return [name[:m.end()] for m in _SEPARATOR.finditer(name) if 0 < m.start() and m.end() < len(name)]


def _fields(snapshot: DatabaseSnapshot, name: str) -> frozenset[str]:
    return frozenset().union(*(shape(d) for d in snapshot.collections[name].sample))


def groups(snapshot: DatabaseSnapshot) -> list[tuple[str, list[str]]]:
    """(stem, collection names) for each group of same-shaped collections under one stem."""
    by_stem: dict[str, list[str]] = {}
    for name in snapshot.collections:
        for stem in stems(name):
            by_stem.setdefault(stem, []).append(name)
    taken: set[str] = set()
    found = []
    for stem, names in sorted(by_stem.items(), key=lambda item: (-len(item[1]), item[0])):
        names = sorted(n for n in names if n not in taken)
        if len(names) < MIN_GROUP:
            continue
        first = _fields(snapshot, names[0])
        if all(similarity(first, _fields(snapshot, n)) >= SAME_SHAPE for n in names[1:]):
            found.append((stem, names))
            taken.update(names)
    return found


def examine(snapshot: DatabaseSnapshot) -> list:
    """The ``too_many_collections`` findings of the database."""
    findings = []
    count = len(snapshot.collections)
    if count > THRESHOLD:
        evidence = {"collections": count, "threshold": THRESHOLD}
        findings.append(Finding(KIND, None, None, "medium", evidence,
                                f"{count:,} collections in one database (threshold {THRESHOLD})", WHY, HOW, SEE))
    for stem, names in groups(snapshot):
        shared = sorted(frozenset.intersection(*(_fields(snapshot, n) for n in names)))
        evidence = {"stem": stem, "collections": names, "count": len(names),
                    "suffixes": [n[len(stem):] for n in names], "shared_fields": shared,
                    "documents": sum(snapshot.collections[n].documents for n in names),
                    "total_collections": count}
        summary = (f"{len(names)} collections {stem}* of one shape differ only by their suffix "
                   f"({', '.join(evidence['suffixes'][:5])}{', ...' if len(names) > 5 else ''})")
        findings.append(Finding(KIND, f"{stem}*", None, "medium", evidence, summary, WHY, HOW, SEE))
    return findings
