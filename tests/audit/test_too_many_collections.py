"""too_many_collections: collections of one shape split by a name suffix, and a count past the threshold."""

from __future__ import annotations

from course.audit import too_many_collections
from course.audit.too_many_collections import stems
from tests.audit.conftest import audit_kind, only

KIND = "too_many_collections"


def carts(db, tenants):
    for tenant in tenants:
        db[f"carts_{tenant}"].insert_many([{"_id": i, "user_id": i, "items": []} for i in range(3)])


def test_per_tenant_collections(db, backend):
    carts(db, ("acme", "globex", "hooli", "initech"))
    db.products.insert_one({"_id": 1, "name": "x"})
    finding = only(audit_kind(db, backend, KIND), KIND, "carts_*")
    evidence = finding.evidence
    assert evidence["collections"] == ["carts_acme", "carts_globex", "carts_hooli", "carts_initech"]
    assert (evidence["count"], evidence["documents"], evidence["total_collections"]) == (4, 12, 5)
    assert evidence["suffixes"] == ["acme", "globex", "hooli", "initech"]
    assert evidence["shared_fields"] == ["items", "user_id"] and finding.field is None


def test_per_day_collections_group_under_the_shortest_stem(db, backend):
    for day in ("2026_10_01", "2026_10_02", "2026_11_01"):
        db[f"events_{day}"].insert_one({"_id": 1, "at": 1, "kind": "x"})
    assert only(audit_kind(db, backend, KIND), KIND).evidence["stem"] == "events_"


def test_the_count_past_the_threshold(db, backend, monkeypatch):
    monkeypatch.setattr(too_many_collections, "THRESHOLD", 3)
    for name in ("a", "b", "c", "d"):
        db[name].insert_one({"_id": 1, name: 1})
    finding = only(audit_kind(db, backend, KIND), KIND)
    assert finding.collection is None and finding.evidence == {"collections": 4, "threshold": 3}


def test_similar_names_of_other_shapes_or_too_few(db, backend):
    db.order_lines.insert_one({"_id": 1, "sku": "x", "qty": 1})
    db.order_events.insert_one({"_id": 1, "type": "PAID", "at": 1})
    db.order_audit.insert_one({"_id": 1, "who": "me", "what": "x", "when": 1})
    carts(db, ("acme", "globex"))
    assert audit_kind(db, backend, KIND).findings == []


def test_stems():
    assert stems("events_2026_10_01") == ["events_", "events_2026_", "events_2026_10_"]
    assert stems("customers") == [] and stems("_private") == [] and stems("tail_") == []
