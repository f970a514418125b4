"""``unused_index``: an index no query has used since the server started counting (``$indexStats``).

Only a server can say: ``$indexStats`` gives each index's ``accesses.ops``
since ``accesses.since`` (the server's start, or the index's creation).  An
index with no use is reported unless it is ``_id_``, unique (it enforces a rule
on every write) or a TTL index (the server's TTL monitor uses it).  Where the
backend has no such statistics (mongomock, mongoeco) the audit says it cannot
know rather than guess.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from course.audit.indexes import IndexInfo, indexes_of
from course.audit.report import Finding, LessonRef, NotExamined
from course.audit.snapshot import CollectionSnapshot, DatabaseSnapshot

KIND = "unused_index"

WHY = ("an index no query uses still costs on every write (each insert, delete and update of an indexed "
       "field writes it) and takes disk and cache; the counters restart with the server and are per member, "
       "so check that they cover a full cycle of the application (month-end jobs too) before dropping it")
HOW = "drop the index (or hide it first with collMod hidden: true, to see whether anything slows down)"
SEE = (LessonRef("01", "Indexes come from queries"),)


def unused(indexes: Mapping[str, IndexInfo], stats: Iterable[Mapping]) -> list[tuple[IndexInfo, Mapping]]:
    """(index, its ``$indexStats`` row) for each index with no recorded use that is not exempt."""
    found = []
    for row in stats:
        info = indexes.get(row.get("name"))
        if info is None or info.name == "_id_" or info.unique or info.ttl is not None:
            continue
        if int((row.get("accesses") or {}).get("ops", 0)) == 0:
            found.append((info, row))
    return sorted(found, key=lambda pair: pair[0].name)


def _examine(collection: CollectionSnapshot) -> list[Finding]:
    findings = []
    for info, row in unused(indexes_of(collection), collection.index_stats or []):
        since = (row.get("accesses") or {}).get("since")
        evidence = {"index": info.name, "keys": info.keys_json(), "ops": 0, "since": since,
                    "size_bytes": (collection.index_sizes or {}).get(info.name)}
        summary = f"index {info.name} has not been used since {since}"
        findings.append(Finding(KIND, collection.name, ", ".join(info.fields), "low", evidence, summary,
                                WHY, HOW, SEE))
    return findings


def examine(snapshot: DatabaseSnapshot) -> list:
    """The ``unused_index`` findings, or what could not be examined and why."""
    results: list = []
    blind = {c.name: c.index_stats_reason for c in snapshot.collections.values() if c.index_stats is None}
    reasons = set(blind.values())
    if blind and len(blind) == len(snapshot.collections) and len(reasons) == 1:
        results.append(NotExamined(KIND, None, reasons.pop()))
    else:
        results += [NotExamined(KIND, name, reason) for name, reason in sorted(blind.items())]
    for collection in snapshot.collections.values():
        if collection.index_stats is not None:
            results += _examine(collection)
    return results
