"""``redundant_index``: an index whose keys are a prefix of another index's keys.

Index A is redundant when another index B starts with exactly A's keys, in
the same directions: every query A serves, B serves too (MongoDB uses an
index's prefixes).  Not reported when A does something B cannot: A is unique,
sparse, partial, a TTL index, or has another collation, or when B is sparse or
partial (B then lacks some documents A holds), or A is ``_id_``.
"""

from __future__ import annotations

from course.audit.indexes import IndexInfo, indexes_of
from course.audit.report import Finding, LessonRef
from course.audit.snapshot import CollectionSnapshot, DatabaseSnapshot

KIND = "redundant_index"

WHY = ("every insert, delete and update of an indexed field writes both indexes, and both take disk and "
       "cache, while the longer index already serves every query the shorter one does (through its prefix)")
HOW = "drop the shorter index; keep the longer one, whose prefix serves the same queries"
SEE = (LessonRef("01", "Indexes come from queries"),)


def covering(short: IndexInfo, long: IndexInfo) -> bool:
    """True when ``long`` makes ``short`` redundant (see the module docstring)."""
    if short.name == long.name or short.name == "_id_" or short.unique or short.ttl is not None:
        return False
    if not (short.plain and long.plain) or short.collation != long.collation:
        return False
    return len(short.keys) <= len(long.keys) and long.keys[:len(short.keys)] == short.keys


def _examine(collection: CollectionSnapshot) -> list[Finding]:
    indexes = indexes_of(collection)
    findings = []
    for short in sorted(indexes.values(), key=lambda i: i.name):
        # two indexes with the same keys cover each other: only the one whose name sorts second is reported
        longer = sorted((i for i in indexes.values()
                         if covering(short, i) and (len(i.keys) > len(short.keys) or i.name < short.name)),
                        key=lambda i: (-len(i.keys), i.name))
        if not longer:
            continue
        cover = longer[0]
        sizes = collection.index_sizes or {}
        evidence = {"index": short.name, "keys": short.keys_json(), "covered_by": cover.name,
                    "covered_by_keys": cover.keys_json(), "size_bytes": sizes.get(short.name)}
        summary = f"index {short.name} is a prefix of {cover.name}: {cover.name} serves its queries"
        findings.append(Finding(KIND, collection.name, ", ".join(short.fields), "medium", evidence, summary,
                                WHY, HOW, SEE))
    return findings


def examine(snapshot: DatabaseSnapshot) -> list:
    """The ``redundant_index`` findings of every collection of ``snapshot``."""
    return [f for collection in snapshot.collections.values() for f in _examine(collection)]
