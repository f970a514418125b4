"""redundant_index: an index that is a prefix of another; unique, partial, sparse or TTL ones are not."""

from __future__ import annotations

from course.audit.indexes import IndexInfo
from course.audit.redundant_index import covering
from tests.audit.conftest import audit_kind, only

KIND = "redundant_index"


def test_a_prefix_of_another_index(db, backend):
    db.orders.insert_many([{"_id": i, "customer_id": i % 5, "placed_at": i} for i in range(20)])
    db.orders.create_index([("customer_id", 1)])
    db.orders.create_index([("customer_id", 1), ("placed_at", -1)])
    finding = only(audit_kind(db, backend, KIND), KIND, "orders")
    assert finding.field == "customer_id"
    assert finding.evidence["index"] == "customer_id_1"
    assert finding.evidence["keys"] == [["customer_id", 1]]
    assert finding.evidence["covered_by"] == "customer_id_1_placed_at_-1"
    assert finding.evidence["covered_by_keys"] == [["customer_id", 1], ["placed_at", -1]]


def test_the_longest_covering_index_is_named(db, backend):
    db.t.insert_one({"_id": 1})
    for keys in ([("a", 1)], [("a", 1), ("b", 1)], [("a", 1), ("b", 1), ("c", 1)]):
        db.t.create_index(keys)
    found = {f.evidence["index"]: f.evidence["covered_by"] for f in audit_kind(db, backend, KIND).findings}
    assert found == {"a_1": "a_1_b_1_c_1", "a_1_b_1": "a_1_b_1_c_1"}


def test_indexes_that_are_not_prefixes(db, backend):
    db.t.insert_one({"_id": 1})
    db.t.create_index([("email", 1)], unique=True)  # enforces a rule: never redundant
    db.t.create_index([("email", 1), ("name", 1)])
    db.t.create_index([("b", 1)])  # not a prefix of (a, b)
    db.t.create_index([("a", 1), ("b", 1)])
    db.t.create_index([("c", -1)])  # other direction than (c: 1, d: 1)
    db.t.create_index([("c", 1), ("d", 1)])
    assert audit_kind(db, backend, KIND).findings == []


def info(name, keys, **options):
    return IndexInfo(name=name, keys=tuple(keys), unique=options.get("unique", False),
                     sparse=options.get("sparse", False), partial=options.get("partial"),
                     ttl=options.get("ttl"), collation=options.get("collation"))


def test_covering_rules():
    short, long = info("a_1", [("a", 1)]), info("a_1_b_1", [("a", 1), ("b", 1)])
    assert covering(short, long) and not covering(long, short)
    assert not covering(info("a_1", [("a", 1)], unique=True), long)
    assert not covering(info("a_1", [("a", 1)], sparse=True), long)
    assert not covering(info("a_1", [("a", 1)], ttl=3600), long)
    assert not covering(short, info("p", [("a", 1), ("b", 1)], partial={"b": {"$gt": 0}}))
    assert not covering(info("a_1", [("a", 1)], collation={"locale": "fr"}), long)
    assert not covering(info("a_text", [("a", "text")]), info("x", [("a", "text"), ("b", 1)]))
    assert not covering(info("_id_", [("_id", 1)]), info("x", [("_id", 1), ("b", 1)]))
    assert covering(info("a_1", [("a", 1)]), info("a_again", [("a", 1)]))  # same keys, another name
