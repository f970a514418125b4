"""``version_mix``: several schema versions alive in one collection, with counts per version.

Counts the values of the version field (see :mod:`course.audit.missing_version`)
among the sampled documents; documents without one are counted as
``"missing"`` in the evidence but do not make a mix on their own (that is
``missing_version``).  Reported when two or more versions are present.
"""

from __future__ import annotations

from collections import Counter

from course.audit.report import Finding, LessonRef
from course.audit.shapes import version_field
from course.audit.snapshot import CollectionSnapshot, DatabaseSnapshot

KIND = "version_mix"
EXAMPLES = 5

WHY = ("each live version is a branch in every reader, a place every query must look and may need an index "
       "for, and a case every migration and validator must handle; versions are for passing through a change, "
       "not for collecting")
HOW = ("finish the migration: convert the older versions with an idempotent, resumable background batch, "
       "then stage a validator that accepts only the current version and delete the old reader branches")
SEE = (LessonRef("05", "Step 3: the background batch"),
       LessonRef("04", "7. Schema versioning: say which shape a document has"))


def _label(value) -> str:
    return str(value)


def _examine(collection: CollectionSnapshot) -> Finding | None:
    field = version_field(collection.sample)
    if field is None:
        return None
    counts: Counter = Counter()
    examples: dict[str, list] = {}
    for document in collection.sample:
        label = _label(document[field]) if field in document else "missing"
        counts[label] += 1
        if len(examples.setdefault(label, [])) < EXAMPLES:
            examples[label].append(document.get("_id"))
    present = sorted((v for v in counts if v != "missing"), key=lambda v: (len(v), v))
    if len(present) < 2:
        return None
    versions = {v: counts[v] for v in present}
    if counts.get("missing"):
        versions["missing"] = counts["missing"]
    evidence = {"examined": len(collection.sample), "documents": collection.documents, "version_field": field,
                "versions": versions, "newest": present[-1], "examples": {v: examples[v] for v in present[:-1]}}
    listed = ", ".join(f"{n:,} at {v}" if v != "missing" else f"{n:,} without" for v, n in versions.items())
    summary = f"{len(present)} versions of {field} alive: {listed}"
    return Finding(KIND, collection.name, field, "medium", evidence, summary, WHY, HOW, SEE)


def examine(snapshot: DatabaseSnapshot) -> list:
    """The ``version_mix`` findings of every collection of ``snapshot``."""
    found = (_examine(c) for c in snapshot.collections.values())
    return [f for f in found if f is not None]
