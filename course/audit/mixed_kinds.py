"""``mixed_kinds``: one collection holding several shapes of document, with no field saying which.

The sample is grouped into kinds (:func:`course.audit.shapes.kinds_of`: documents
sharing at least half their fields are one kind).  Reported when two or more
kinds each make up at least :data:`MIN_SHARE` of the sample and no
discriminator field tells them apart (a ``kind`` field present everywhere, or
a schema version field): readers must then guess a document's kind from the
fields it happens to have.
"""

from __future__ import annotations

from course.audit.report import Finding, LessonRef
from course.audit.shapes import discriminators, kinds_of
from course.audit.snapshot import CollectionSnapshot, DatabaseSnapshot

KIND = "mixed_kinds"
#: Share of the sample a kind needs to count (and at least two documents).
MIN_SHARE = 0.02
EXAMPLES = 3

WHY = ("without a discriminator every reader guesses a document's kind from the fields it has, a query for "
       "one kind must name fields only that kind has, an index on a kind-specific field holds every other "
       "document under null, and no validator can describe the collection")
HOW = ("add a discriminator field (kind) to every document, derived from the fields each kind has, give each "
       "kind its own validator branch (oneOf) and partial indexes; or split the kinds into their own "
       "collections when they are not read together")
SEE = (LessonRef("04", "6. Polymorphic: several shapes, one collection"),
       LessonRef("02", "One kind of entity per collection"))


def _examine(collection: CollectionSnapshot) -> Finding | None:
    documents = collection.sample
    kinds = kinds_of(documents)
    needed = max(2, MIN_SHARE * len(documents))
    significant = [k for k in kinds if k.documents >= needed]
    if len(significant) < 2 or discriminators(documents, kinds):
        return None
    common = frozenset.intersection(*(k.fields for k in significant))
    listed = [{"documents": k.documents, "fields": sorted(k.fields - common), "examples": k.ids[:EXAMPLES]}
              for k in significant]
    evidence = {"examined": len(documents), "documents": collection.documents, "kinds": listed,
                "common_fields": sorted(common)}
    described = "; ".join(f"{k['documents']:,} with {', '.join(k['fields'][:3]) or '(no other fields)'}"
                          for k in listed)
    summary = f"{len(significant)} shapes and no discriminator field: {described}"
    return Finding(KIND, collection.name, None, "medium", evidence, summary, WHY, HOW, SEE)


def examine(snapshot: DatabaseSnapshot) -> list:
    """The ``mixed_kinds`` findings of every collection of ``snapshot``."""
    found = (_examine(c) for c in snapshot.collections.values())
    return [f for f in found if f is not None]
