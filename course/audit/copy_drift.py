"""``copy_drift``: copies in an extended reference that disagree with their source.

Lesson 02's convention declares a copy by its name: a field ``customer_copy``
(or ``customerCopy``) is an object of fresh copies of the customer's fields,
found through the sibling reference ``customer_id`` (or ``customerId``, or an
``_id`` inside the copy) in the collection ``customers`` (or ``customer``).
Every copied field (``_id`` aside) of each sampled document is compared with
the source's field of the same name.  Snapshots (lesson 02's ``..._at_order``
fields) record the past on purpose and are never compared.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from course.audit.report import Finding, LessonRef, NotExamined
from course.audit.snapshot import CollectionSnapshot, DatabaseSnapshot

KIND = "copy_drift"
COPY_FIELD = re.compile(r"^(?P<base>[A-Za-z0-9]+?)(_copy|Copy)$")
EXAMPLES = 5
_ABSENT = object()

WHY = ("a page that reads the copy shows a value the source no longer has (an old name, a phone that no "
       "longer rings); nothing in the database keeps copies fresh, so each write to the source that skipped "
       "the update path left one more stale copy")
HOW = ("run the update path for every source (set, never increment, so it can be repeated), keyed on the "
       "reference and served by an index on it; then make every write to the source run it")
SEE = (LessonRef("02", "Copies need an update path"),
       LessonRef("04", "2. Extended reference: a reference plus the few fields read with it"))


def source_collection(base: str, names) -> str | None:
    """The collection a copy named after ``base`` comes from (``customer`` -> ``customers``), or None."""
    candidates = [base + "s", base, base + "es", base[:-1] + "ies" if base.endswith("y") else None]
    return next((c for c in candidates if c and c in names), None)


def reference(document: Mapping, base: str, copy: Mapping) -> tuple[str, Any] | None:
    """(the reference's field name, its value) for the copy named after ``base``, or None."""
    for name in (f"{base}_id", f"{base}Id"):
        if name in document:
            return name, document[name]
    if "_id" in copy:
        return "_id", copy["_id"]
    return None


def _copies(collection: CollectionSnapshot) -> dict[str, list[tuple[Mapping, Mapping]]]:
    found: dict[str, list[tuple[Mapping, Mapping]]] = {}
    for document in collection.sample:
        for name, value in document.items():
            if COPY_FIELD.match(name) and isinstance(value, Mapping):
                found.setdefault(name, []).append((document, value))
    return found


def _compare(snapshot, collection, field, holders) -> list:
    base = COPY_FIELD.match(field).group("base")
    source = source_collection(base, snapshot.collections)
    if source is None:
        return [NotExamined(KIND, collection.name, f"{field}: no collection {base}s to compare the copies with")]
    keyed = [(d, c, reference(d, base, c)) for d, c in holders]
    keyed = [(d, c, ref) for d, c, ref in keyed if ref is not None]
    if not keyed:
        return [NotExamined(KIND, collection.name, f"{field}: no {base}_id beside it to find the source by")]
    copied = {k for _, c, _ in keyed for k in c}
    sources = snapshot.documents_by_id(source, [ref[1] for _, _, ref in keyed], fields=copied)
    per_field: dict[str, int] = {}
    drifted, missing, examples = 0, 0, []
    for document, copy, (_, key) in keyed:
        original = sources.get(key)
        if original is None:
            missing += 1
            continue
        differing = [k for k in copy if k != "_id" and original.get(k, _ABSENT) != copy[k]]
        if differing:
            drifted += 1
        for k in differing:
            per_field[k] = per_field.get(k, 0) + 1
            if len(examples) < EXAMPLES:
                value = original.get(k, _ABSENT)
                examples.append({"_id": document.get("_id"), "field": k, "copy": copy[k],
                                 "source": None if value is _ABSENT else value, "source_id": key})
    if not drifted and not missing:
        return []
    evidence = {"examined": len(collection.sample), "documents": collection.documents, "source": source,
                "reference": keyed[0][2][0], "copies": len(keyed), "drifted": drifted,
                "fields": dict(sorted(per_field.items())), "missing_sources": missing, "examples": examples}
    summary = (f"{drifted:,} of {len(keyed):,} copies in {field} disagree with {source}"
               + (f" ({', '.join(f'{k}: {n:,}' for k, n in sorted(per_field.items()))})" if per_field else "")
               + (f"; {missing:,} reference a {base} that does not exist" if missing else ""))
    return [Finding(KIND, collection.name, field, "medium", evidence, summary, WHY, HOW, SEE)]


def examine(snapshot: DatabaseSnapshot) -> list:
    """The ``copy_drift`` findings of every collection of ``snapshot``."""
    results: list = []
    for collection in snapshot.collections.values():
        for field, holders in sorted(_copies(collection).items()):
            results += _compare(snapshot, collection, field, holders)
    return results
