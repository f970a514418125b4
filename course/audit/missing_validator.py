"""``missing_validator``: a collection with no ``$jsonSchema`` validator although its documents agree.

The documents *agree* when the sample holds at least :data:`MIN_DOCUMENTS`
documents, all of one kind (see :mod:`course.audit.shapes`), at most one
schema version, and every field holds one BSON type (null aside).  Then the
shape is known and nothing keeps the next write to it: the evidence proposes
the validator (fields every document has are required).  Collections whose
documents disagree are the business of ``mixed_types``, ``mixed_kinds`` and
``version_mix`` first.  On a backend that cannot store validators (mongomock)
nothing is reported, and the report says so.
"""

from __future__ import annotations

from collections import Counter

from course.audit.report import Finding, LessonRef, NotExamined
from course.audit.shapes import kinds_of, version_field
from course.audit.snapshot import CollectionSnapshot, DatabaseSnapshot
from course.store.capabilities import Capability
from course.toolkit.census import bson_type_of

KIND = "missing_validator"
#: Documents needed before a shape is taken as agreed.
MIN_DOCUMENTS = 5

WHY = ("nothing stops the next write from adding a misspelt field, a string where a number belongs or a "
       "document without a required field; each such document is found later, by a reader that breaks")
HOW = ("add the $jsonSchema validator the documents already satisfy (the evidence proposes one); on a "
       "collection that still holds old documents, stage it: validationLevel moderate and validationAction "
       "warn first, then error")
SEE = (LessonRef("03", "The server's validator"),
       LessonRef("03", "Putting a validator on a collection that already holds old documents"),
       LessonRef("05", "Step 5: stage the validator"))


def agreed_shape(documents: list[dict]) -> tuple[dict[str, list[str]], list[str]] | None:
    """({field: its BSON types}, required fields) when the documents agree on a shape, else None."""
    if len(documents) < MIN_DOCUMENTS or len(kinds_of(documents)) != 1:
        return None
    field = version_field(documents)
    if field is not None and len({repr(d.get(field)) for d in documents}) > 1:
        return None
    types: dict[str, Counter] = {}
    for document in documents:
        for name, value in document.items():
            types.setdefault(name, Counter())[bson_type_of(value)] += 1
    if any(len(set(counter) - {"null"}) > 1 for counter in types.values()):
        return None
    required = sorted(name for name in types if all(name in d for d in documents))
    return {name: sorted(counter) for name, counter in sorted(types.items())}, required


def suggested_validator(types: dict[str, list[str]], required: list[str]) -> dict:
    """The ``$jsonSchema`` validator the agreed shape describes."""
    properties = {name: {"bsonType": names[0] if len(names) == 1 else names} for name, names in types.items()}
    return {"$jsonSchema": {"bsonType": "object", "required": required, "properties": properties}}


def _examine(collection: CollectionSnapshot) -> Finding | None:
    if "$jsonSchema" in (collection.validator or {}):
        return None
    agreed = agreed_shape(collection.sample)
    if agreed is None:
        return None
    types, required = agreed
    evidence = {"examined": len(collection.sample), "documents": collection.documents,
                "validator": collection.validator, "required": required,
                "types": {name: names[0] if len(names) == 1 else names for name, names in types.items()},
                "suggested_validator": suggested_validator(types, required)}
    summary = (f"no $jsonSchema validator, although all {len(collection.sample):,} documents examined agree on "
               f"{len(types)} fields ({len(required)} in every document)")
    return Finding(KIND, collection.name, None, "low", evidence, summary, WHY, HOW, SEE)


def examine(snapshot: DatabaseSnapshot) -> list:
    """The ``missing_validator`` findings, or why they cannot be known here."""
    if not snapshot.supports(Capability.VALIDATORS):
        return [NotExamined(KIND, None, f"{snapshot.backend} cannot store $jsonSchema validators, so "
                                        "a missing one says nothing about the database")]
    if snapshot.options_reason:
        return [NotExamined(KIND, None, snapshot.options_reason)]
    found = (_examine(c) for c in snapshot.collections.values())
    return [f for f in found if f is not None]
