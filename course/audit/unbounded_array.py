"""``unbounded_array``: an embedded array with a long tail, or one that grows with the document's age.

For every array field (top level and inside embedded objects) of a
collection's sample: its length in each document, the largest, the median
and p99, and, when the documents say how old they are (a date field named
like ``created_at``, ``since`` or ``joined``, else an ObjectId ``_id``), how the
length grows with age.  Reported when the largest reaches :data:`MIN_LARGEST`
elements and either it is :data:`TAIL_RATIO` times the median (a long tail) or
length and age correlate (Spearman's rank correlation
r >= :data:`GROWTH_CORRELATION`, so that a few outliers do not decide it).  An array whose
largest length is shared by several documents looks capped (lesson 04's
subset, bucket and outlier patterns stop at a limit) and is not reported.

The projection follows the largest document: ``growth_per_year`` is its own
rate (its length over its age), ``projected_in_5_years`` and ``years_to_16_mib``
extrapolate that rate with the array's average element size.  Ages are
measured from the newest document of the sample, never from the clock, so the
same data gives the same evidence.
"""

from __future__ import annotations

import datetime
import re
from typing import Any, Mapping

import bson
from bson.objectid import ObjectId

from course.audit.distribution import median, percentile, rank_correlation
from course.audit.report import Finding, LessonRef
from course.audit.shapes import field_values
from course.audit.snapshot import CollectionSnapshot, DatabaseSnapshot
from course.toolkit.sizes import MAX_BSON_SIZE

KIND = "unbounded_array"
#: Arrays shorter than this are not reported, however skewed.
MIN_LARGEST = 200
#: The largest is at least this many times the median: a long tail.
TAIL_RATIO = 10
#: Length and age rank-correlate at least this much: the array grows with the document's age.
GROWTH_CORRELATION = 0.5
#: Documents with a known age needed before growth is judged.
MIN_AGED = 10
#: Years ahead for the projection.
HORIZON_YEARS = 5
#: A field holding a document's creation date.
AGE_FIELD = re.compile(r"creat|since|joined|sign_?up|registered|opened|first_?seen|inserted", re.IGNORECASE)
_YEAR = 365.25 * 24 * 3600

WHY = ("an array that keeps growing makes its document grow: every read of the document carries the whole "
       "array, every change rewrites it, its index entries multiply, and at 16 MiB the server refuses the "
       "write that crosses the line, and every later one (lesson 02's measurement on MongoDB 8.3.11: a whole "
       "10.9 MB document took about 50 ms to read against 0.15 ms for a 10.8 KB one)")
HOW = ("give the growing set its own collection, each element referencing its parent; keep at most a bounded "
       "subset embedded (the newest few), or bucket the elements in capped documents, or embed up to a "
       "threshold and overflow the outliers")
SEE = (LessonRef("02", "Is this embed safe?"),
       LessonRef("04", "1. Subset: keep the part that is read, move the rest"),
       LessonRef("04", "4. Bucket: group a long series into capped documents"),
       LessonRef("04", "5. Outlier: design for the many, handle the few"))


def _naive(moment: datetime.datetime) -> datetime.datetime:
    if moment.tzinfo is not None:
        return moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return moment


def age_field(documents: list[Mapping]) -> str | None:
    """The field that dates the documents: a date field named like a creation date, else an ObjectId ``_id``."""
    names = sorted({k for d in documents for k, v in d.items()
                    if isinstance(v, datetime.datetime) and AGE_FIELD.search(k)})
    if names:
        return names[0]
    if documents and all(isinstance(d.get("_id"), ObjectId) for d in documents):
        return "_id"
    return None


def _created(document: Mapping, field: str) -> datetime.datetime | None:
    value = document.get(field)
    if field == "_id" and isinstance(value, ObjectId):
        return _naive(value.generation_time)
    return _naive(value) if isinstance(value, datetime.datetime) else None


def _arrays(document: Mapping) -> dict[str, list]:
    return {path: value for path, value in field_values(document) if isinstance(value, list)}


def _examine(collection: CollectionSnapshot) -> list[Finding]:
    documents = collection.sample
    dated_by = age_field(documents)
    created = {id(d): _created(d, dated_by) for d in documents} if dated_by else {}
    known = [c for c in created.values() if c is not None]
    newest = max(known) if known else None
    per_path: dict[str, list[tuple[Mapping, list]]] = {}
    for document in documents:
        for path, array in _arrays(document).items():
            per_path.setdefault(path, []).append((document, array))
    findings = []
    for path, holders in sorted(per_path.items()):
        finding = _judge(collection, path, holders, dated_by, created, newest)
        if finding is not None:
            findings.append(finding)
    return findings


def _judge(collection, path, holders, dated_by, created, newest) -> Finding | None:
    lengths = [len(array) for _, array in holders]
    largest = max(lengths)
    if largest < MIN_LARGEST:
        return None
    at_largest = lengths.count(largest)
    if at_largest >= 3 and at_largest >= 0.01 * len(lengths):
        return None  # several documents stop at the same length: a cap
    p50, p99 = median(lengths), percentile(lengths, 99)
    biggest_doc, biggest_array = max(holders, key=lambda h: len(h[1]))
    aged = [((newest - created[id(d)]).total_seconds() / _YEAR, len(a)) for d, a in holders
            if newest is not None and created.get(id(d)) is not None]
    r = rank_correlation([a for a, _ in aged], [n for _, n in aged]) if len(aged) >= MIN_AGED else 0.0
    grows = len(aged) >= MIN_AGED and r >= GROWTH_CORRELATION
    long_tail = largest >= TAIL_RATIO * max(p50, 1)
    if not (grows or long_tail):
        return None
    document_bytes = len(bson.encode(biggest_doc))
    element_bytes = max(1, round((len(bson.encode({"a": biggest_array})) - 7) / largest))
    evidence: dict[str, Any] = {
        "examined": len(collection.sample), "documents": collection.documents, "with_array": len(lengths),
        "largest": largest, "largest_id": biggest_doc.get("_id"), "p50": p50, "p99": p99,
        "largest_document_bytes": document_bytes, "element_bytes": element_bytes,
        "long_tail": long_tail, "grows_with_age": grows, "age_field": dated_by,
        "correlation": round(r, 2) if len(aged) >= MIN_AGED else None,
        "growth_per_year": None, f"projected_in_{HORIZON_YEARS}_years": None, "years_to_16_mib": None,
    }
    age = ((newest - created[id(biggest_doc)]).total_seconds() / _YEAR
           if newest is not None and created.get(id(biggest_doc)) is not None else 0.0)
    if age > 0:
        per_year = largest / age
        evidence["growth_per_year"] = round(per_year, 1)
        evidence[f"projected_in_{HORIZON_YEARS}_years"] = {
            "elements": round(largest + per_year * HORIZON_YEARS),
            "bytes": round(document_bytes + per_year * HORIZON_YEARS * element_bytes)}
        evidence["years_to_16_mib"] = round(max(0, MAX_BSON_SIZE - document_bytes) / (per_year * element_bytes), 1)
    soon = evidence["years_to_16_mib"] is not None and evidence["years_to_16_mib"] <= HORIZON_YEARS
    severity = "high" if soon or document_bytes >= 1024 * 1024 else "medium"
    shape = "a long tail" if long_tail else "no long tail"
    growth = (f", grows about {evidence['growth_per_year']:,} elements a year in the largest document"
              if evidence["growth_per_year"] is not None and grows else "")
    summary = (f"{path}: largest {largest:,} elements (document {biggest_doc.get('_id')!r}, {document_bytes:,} "
               f"bytes), median {p50:,}, p99 {p99:,}: {shape}{growth}")
    return Finding(KIND, collection.name, path, severity, evidence, summary, WHY, HOW, SEE)


def examine(snapshot: DatabaseSnapshot) -> list:
    """The ``unbounded_array`` findings of every collection of ``snapshot``."""
    return [f for collection in snapshot.collections.values() for f in _examine(collection)]
