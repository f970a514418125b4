"""``missing_version``: documents without a schema version field, in a collection where others have one.

The version field is ``schema_version`` (the course's spelling) or
``schemaVersion`` (the camelCase one some applications use), whichever most documents use.  A document without it can only
be read by guessing its shape; lesson 04's convention reads "no field" as
version 1, which holds only until someone writes a new document without it.
A collection where no document has a version field is not reported.
"""

from __future__ import annotations

from course.audit.report import Finding, LessonRef
from course.audit.shapes import VERSION_FIELDS, version_field
from course.audit.snapshot import CollectionSnapshot, DatabaseSnapshot

KIND = "missing_version"
EXAMPLES = 5

WHY = ("a reader cannot tell which shape a document without a version has, so it guesses from the fields "
       "present; every query, migration and validator that selects by version misses these documents")
HOW = ("write the version the documents' shape really is (usually 1) into every document without one, with "
       "an idempotent update filtered on the field's absence, and make every writer set it")
SEE = (LessonRef("04", "7. Schema versioning: say which shape a document has"),
       LessonRef("03", "Read every version that is still alive"))


def _examine(collection: CollectionSnapshot) -> Finding | None:
    field = version_field(collection.sample)
    if field is None:
        return None
    without = [d.get("_id") for d in collection.sample if not any(f in d for f in VERSION_FIELDS)]
    if not without:
        return None
    examined = len(collection.sample)
    evidence = {"examined": examined, "documents": collection.documents, "version_field": field,
                "missing": len(without), "with_version": examined - len(without), "examples": without[:EXAMPLES]}
    summary = f"{len(without):,} of {examined:,} documents have no {field}"
    return Finding(KIND, collection.name, field, "medium", evidence, summary, WHY, HOW, SEE)


def examine(snapshot: DatabaseSnapshot) -> list:
    """The ``missing_version`` findings of every collection of ``snapshot``."""
    found = (_examine(c) for c in snapshot.collections.values())
    return [f for f in found if f is not None]
