"""``bloated_document``: documents near the 16 MiB ceiling, or far above their collection's median.

Each sampled document's BSON size (``len(bson.encode(doc))``, what the limit
counts) against the sample's median: reported when a document is over
:data:`NEAR_CEILING` (half the ceiling), or over :data:`LARGE` and
:data:`RATIO` times the median.  The evidence names the fields that make up
most of each large document's bytes.
"""

from __future__ import annotations

import bson

from course.audit.distribution import median
from course.audit.report import Finding, LessonRef
from course.audit.snapshot import CollectionSnapshot, DatabaseSnapshot
from course.toolkit.sizes import MAX_BSON_SIZE

KIND = "bloated_document"
#: Half the ceiling: a document this large is one burst of growth away from refusal.
NEAR_CEILING = MAX_BSON_SIZE // 2
#: A document this large costs on every read (the course's threshold: 1 MiB).
LARGE = 1024 * 1024
#: ... when it is also this many times the collection's median.
RATIO = 10
#: Large documents listed in the evidence.
LISTED = 5

WHY = ("a read of the document carries all of it, and the cache holds all of it, for the few fields most "
       "reads want; measured for lesson 02 on MongoDB 8.3.11: reading a whole 10.9 MB document took about "
       "50 ms against 0.15 ms for a 10.8 KB one, and a $inc of a 4-byte counter in the large document made "
       "the next checkpoint write about 10.9 MB")
HOW = ("move the field that makes up most of the bytes to its own collection (referencing the document), "
       "keeping at most a small subset embedded; read it only when it is needed")
SEE = (LessonRef("02", "The 16 MiB ceiling"),
       LessonRef("04", "Part 1 · What a large document costs"),
       LessonRef("04", "1. Subset: keep the part that is read, move the rest"))


def field_bytes(document: dict) -> list[tuple[str, int]]:
    """(top-level field, bytes it takes in the document's BSON), largest first."""
    sizes = [(key, len(bson.encode({key: value})) - 5) for key, value in document.items()]
    return sorted(sizes, key=lambda item: (-item[1], item[0]))


def _heaviest(document: dict, size: int) -> list[dict]:
    """The fields that together make up most (over half) of the document's bytes."""
    chosen, total = [], 0
    for key, nbytes in field_bytes(document):
        chosen.append({"field": key, "bytes": nbytes, "share": round(nbytes / size, 3)})
        total += nbytes
        if total > size / 2:
            break
    return chosen


def _examine(collection: CollectionSnapshot) -> Finding | None:
    if not collection.sample:
        return None
    sized = [(len(bson.encode(d)), d) for d in collection.sample]
    middle = median([s for s, _ in sized])
    bloated = sorted(((s, d) for s, d in sized if s >= NEAR_CEILING or (s >= LARGE and s >= RATIO * middle)),
                     key=lambda item: -item[0])
    if not bloated:
        return None
    listed = [{"_id": d.get("_id"), "bytes": s, "times_median": round(s / max(middle, 1), 1),
               "ceiling_share": round(s / MAX_BSON_SIZE, 3), "fields": _heaviest(d, s)}
              for s, d in bloated[:LISTED]]
    top = listed[0]
    evidence = {"examined": len(collection.sample), "documents": collection.documents, "median_bytes": middle,
                "bloated": len(bloated), "largest": listed}
    severity = "high" if top["bytes"] >= NEAR_CEILING else "medium"
    heaviest = top["fields"][0]
    summary = (f"{len(bloated)} document(s) far above the median of {middle:,} bytes: the largest, "
               f"{top['_id']!r}, is {top['bytes']:,} bytes ({top['times_median']:,}x the median, "
               f"{top['ceiling_share']:.1%} of 16 MiB), {heaviest['share']:.0%} of it in {heaviest['field']}")
    return Finding(KIND, collection.name, heaviest["field"], severity, evidence, summary, WHY, HOW, SEE)


def examine(snapshot: DatabaseSnapshot) -> list:
    """The ``bloated_document`` findings of every collection of ``snapshot``."""
    found = (_examine(c) for c in snapshot.collections.values())
    return [f for f in found if f is not None]
