"""mixed_types: a field holding several BSON types is reported with counts per type (lesson 03's classification)."""

from __future__ import annotations

from bson.int64 import Int64

from tests.audit.conftest import audit_kind, only

KIND = "mixed_types"


def test_a_counter_that_turned_long(db, backend):
    documents = [{"_id": i, "views": 10 * i} for i in range(1, 21)]
    documents[6]["views"] = Int64(2 ** 31)
    db.products.insert_many(documents)
    finding = only(audit_kind(db, backend, KIND), KIND, "products")
    assert finding.field == "views"
    assert finding.evidence["types"] == {"int": 19, "long": 1}
    assert finding.evidence["examples"] == {"long": [7]} and finding.evidence["most_common"] == "int"
    assert finding.evidence["counter_turned_long"] is True


def test_a_small_int64_is_a_long_too(db, backend):
    db.counters.insert_many([{"_id": 1, "n": 5}, {"_id": 2, "n": Int64(5)}, {"_id": 3, "n": 6}])
    assert only(audit_kind(db, backend, KIND), KIND, "counters").evidence["types"] == {"int": 2, "long": 1}


def test_three_types_with_missing_and_null_counted(db, backend):
    prices = [1250] * 10 + ["12.50"] * 5 + [12.5] * 4 + [None]
    documents = [{"_id": i, "price": p} for i, p in enumerate(prices)] + [{"_id": 100}]
    db.items.insert_many(documents)
    evidence = only(audit_kind(db, backend, KIND), KIND, "items").evidence
    assert evidence["types"] == {"int": 10, "double": 4, "string": 5, "null": 1, "missing": 1}
    assert evidence["examples"]["string"] == [10, 11, 12, 13, 14] and evidence["counter_turned_long"] is False


def test_fields_of_embedded_objects(db, backend):
    db.pages.insert_many([{"_id": i, "stats": {"count": i if i % 4 else str(i)}} for i in range(1, 13)])
    finding = only(audit_kind(db, backend, KIND), KIND, "pages")
    assert finding.field == "stats.count" and finding.evidence["types"] == {"int": 9, "string": 3}


def test_one_type_or_an_optional_null_is_not_reported(db, backend):
    db.people.insert_many([{"_id": i, "name": f"p{i}", "nickname": None if i % 3 else "x", "age": 20 + i}
                           for i in range(30)])
    db.tags.insert_many([{"_id": i, "tags": ["a", 1] if i else []} for i in range(5)])  # arrays count as array
    assert audit_kind(db, backend, KIND).findings == []
