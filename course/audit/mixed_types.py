"""``mixed_types``: a field holding several BSON types, with counts (lesson 03's census).

Every field of the sampled documents (top level and inside embedded objects)
is classified with lesson 03's :func:`course.toolkit.census.bson_type_of`: an
``Int64``, or an int outside the int32 range, is a long, so a counter that
turned long shows up beside its ints.  Reported when a field holds two or more
types other than null (a field that is sometimes null is optional, not mixed;
nulls and documents without the field are still counted in the evidence).
"""

from __future__ import annotations

from collections import Counter

from course.audit.report import Finding, LessonRef
from course.audit.shapes import field_values
from course.audit.snapshot import CollectionSnapshot, DatabaseSnapshot
from course.toolkit.census import CANDIDATE_TYPES, bson_type_of

KIND = "mixed_types"
#: Example ``_id`` values given per minority type.
EXAMPLES = 5

WHY = ("every query, index, sort and validator meets the field in each of its types: a range query on a "
       "number skips the strings, {$type: 'int'} misses the longs, a validator written for one type rejects "
       "the next write of a document holding another, and application code needs a branch per type")
HOW = ("decide the field's one type, convert the others with an idempotent batch (filter on the old type), "
       "then let a validator keep it that way; a counter that may outgrow int32 should be a long everywhere")
SEE = (LessonRef("03", "Audit before you validate"),
       LessonRef("03", "The server's validator"),
       LessonRef("05", "Step 3: the background batch"))


def _order(counter: Counter) -> dict[str, int]:
    known = [t for t in CANDIDATE_TYPES if counter.get(t)]
    others = sorted(t for t in counter if t not in CANDIDATE_TYPES and t != "missing")
    result = {t: counter[t] for t in known + others}
    if counter.get("missing"):
        result["missing"] = counter["missing"]
    return result


def _examine(collection: CollectionSnapshot) -> list[Finding]:
    types: dict[str, Counter] = {}
    ids: dict[tuple[str, str], list] = {}
    for document in collection.sample:
        for path, value in field_values(document):
            type_name = bson_type_of(value)
            types.setdefault(path, Counter())[type_name] += 1
            examples = ids.setdefault((path, type_name), [])
            if len(examples) < EXAMPLES:
                examples.append(document.get("_id"))
    findings = []
    for path in sorted(types):
        counts = types[path]
        real = [t for t in counts if t != "null"]
        if len(real) < 2:
            continue
        counts["missing"] = len(collection.sample) - sum(counts.values())
        ordered = _order(counts)
        main = max(real, key=lambda t: (counts[t], t))
        minority = {t: ids[(path, t)] for t in ordered if t not in (main, "missing")}
        evidence = {"examined": len(collection.sample), "documents": collection.documents, "types": ordered,
                    "most_common": main, "examples": minority,
                    "counter_turned_long": set(real) == {"int", "long"}}
        listed = ", ".join(f"{n:,} {t}" for t, n in ordered.items())
        note = " (a counter that turned long)" if evidence["counter_turned_long"] else ""
        summary = f"{path} holds {len(real)} types: {listed}{note}"
        findings.append(Finding(KIND, collection.name, path, "medium", evidence, summary, WHY, HOW, SEE))
    return findings


def examine(snapshot: DatabaseSnapshot) -> list:
    """The ``mixed_types`` findings of every collection of ``snapshot``."""
    return [f for collection in snapshot.collections.values() for f in _examine(collection)]
