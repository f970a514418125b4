"""copy_drift: copies declared by name (lesson 02's customer_copy) that disagree with their source."""

from __future__ import annotations

from tests.audit.conftest import audit_kind, only

KIND = "copy_drift"


def shop(db, rename=(), orphan=False):
    customers = [{"_id": c, "name": f"Customer {c}", "phone": f"0700{c}"} for c in range(1, 6)]
    orders = [{"_id": o, "customer_id": 1 + o % 5,
               "customer_copy": {"name": f"Customer {1 + o % 5}", "phone": f"0700{1 + o % 5}"},
               "ship_to_at_order": {"postcode": "N1"}} for o in range(10)]
    if orphan:
        orders.append({"_id": 99, "customer_id": 42, "customer_copy": {"name": "Gone", "phone": "0"}})
    for customer in customers:
        if customer["_id"] in rename:
            customer["name"] += " (renamed)"
    db.customers.insert_many(customers)
    db.orders.insert_many(orders)


def test_copies_of_a_renamed_customer(db, backend):
    shop(db, rename=(2,), orphan=True)
    finding = only(audit_kind(db, backend, KIND), KIND, "orders")
    evidence = finding.evidence
    assert finding.field == "customer_copy" and evidence["source"] == "customers"
    assert (evidence["copies"], evidence["drifted"], evidence["missing_sources"]) == (11, 2, 1)
    assert evidence["fields"] == {"name": 2} and evidence["reference"] == "customer_id"
    assert {e["_id"] for e in evidence["examples"]} == {1, 6}
    assert evidence["examples"][0]["source"] == "Customer 2 (renamed)"


def test_copies_in_sync_and_snapshots_are_fine(db, backend):
    shop(db)
    db.customers.update_many({}, {"$set": {"address": {"postcode": "E2"}}})  # snapshots differ: on purpose
    assert audit_kind(db, backend, KIND).findings == []


def test_camel_case_and_an_id_inside_the_copy(db, backend):
    db.users.insert_many([{"_id": u, "name": f"u{u}"} for u in range(1, 4)])
    db.posts.insert_many([{"_id": 1, "authorCopy": {"_id": 1, "name": "u1"}},
                          {"_id": 2, "authorCopy": {"_id": 2, "name": "old"}}])
    db.comments.insert_many([{"_id": 1, "userId": 3, "userCopy": {"name": "stale"}}])
    report = audit_kind(db, backend, KIND)
    assert only(report, KIND, "comments").evidence["drifted"] == 1
    assert report.of_kind(KIND, "posts") == []  # no collection "authors": it says so
    assert "no collection authors" in report.cannot_know(KIND, "posts")[0].reason
