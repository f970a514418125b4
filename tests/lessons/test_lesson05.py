"""Lab 05's checkers: right, realistic wrong answers, and not attempted, on every backend."""

import pytest

from course import ____
from course.capabilities import Capability
from course.migration_audit import group_census
from course.migration_sim import new_field_lookup, v2_only_reader
from tests.support.verdicts import assert_correct, assert_incorrect, assert_not_attempted, assert_unsupported, solution as reference_solution

PRELUDE = "import time\nfrom tqdm.auto import tqdm\n"


@pytest.fixture
def lab(make_lab):
    return make_lab("05")


def solution(lab, *numbers):
    """The exercises' reference solutions, after the imports the notebook's first cell makes."""
    return reference_solution(lab, *numbers, prelude=PRELUDE)


# 05.1 ----------------------------------------------------------------------
def test_audit_right(lab):
    if not lab.backend.supports(Capability.TYPE_QUERIES):
        assert_unsupported(lab.q1, solution(lab, 1), "$type queries")
        return
    assert_correct(lab.q1, solution(lab, 1))


def test_audit_wrong(lab):
    if not lab.backend.supports(Capability.TYPE_QUERIES):
        pytest.skip("no verdict without $type queries")

    def python_types(orders):
        census = {}
        for doc in orders.find({}):
            customer = doc["customer"]
            key = (doc.get("schemaVersion", 1),
                   "string" if "phone" in customer else "missing",
                   "array" if "phones" in customer else "missing",
                   type(doc["views"]).__name__)
            census[key] = census.get(key, 0) + 1
        return census

    def no_version(orders):
        rows = orders.aggregate([{"$group": {"_id": {"views": {"$type": "$views"}}, "n": {"$sum": 1}}}])
        return {(row["_id"]["views"],): row["n"] for row in rows}

    def v2_as_missing_version(orders):
        census = solution(lab, 1)["audit"](orders)
        return {(None if k[0] == 1 else k[0],) + k[1:]: n for k, n in census.items()}

    assert_incorrect(lab.q1, {"audit": python_types}, "no long counter")
    assert_incorrect(lab.q1, {"audit": no_version}, "should be a tuple")
    assert_incorrect(lab.q1, {"audit": v2_as_missing_version}, "is version 1")
    assert_incorrect(lab.q1, {"audit": lambda orders: [1, 2]}, "should be a dict")
    if lab.backend.name.startswith("mongoeco"):
        # the one-pipeline $group census: right on a server, but this engine reports the small long as int
        assert_incorrect(lab.q1, {"audit": lambda orders: group_census(orders)},
                         "two counters are longs", "your census reports 1")


def test_audit_not_attempted(lab):
    if not lab.backend.supports(Capability.TYPE_QUERIES):
        assert_unsupported(lab.q1, {"audit": ____}, "$type queries")
        return
    assert_not_attempted(lab.q1, {"audit": ____})
    assert_not_attempted(lab.q1, {"audit": lambda orders: ____})


# 05.2 ----------------------------------------------------------------------
def test_migrate_order_right(lab):
    if not lab.backend.supports(Capability.PIPELINE_UPDATES):
        assert_unsupported(lab.q2, solution(lab, 2), "pipeline updates")
        return
    assert_correct(lab.q2, solution(lab, 2))


def test_migrate_order_wrong(lab):
    if not lab.backend.supports(Capability.PIPELINE_UPDATES):
        pytest.skip("no verdict without pipeline updates")
    right = solution(lab, 2)
    seed_pipeline = [{"$set": {"schemaVersion": 2, "customer.phones": ["$customer.phone"]}},
                     {"$unset": "customer.phone"}]

    def no_version_filter(orders, order_id):
        return orders.update_one({"_id": order_id}, right["to_v2"]).modified_count

    def null_for_no_phone(orders, order_id):
        query = {"_id": order_id, "schemaVersion": {"$exists": False}}
        return orders.update_one(query, seed_pipeline).modified_count

    def two_steps(orders, order_id):
        query = {"_id": order_id, "schemaVersion": {"$exists": False}}
        doc = orders.find_one(query)
        if doc is None:
            return 0
        phone = doc["customer"].get("phone")
        orders.update_one(query, {"$set": {"customer.phones": [] if phone is None else [phone]}})
        orders.update_one({"_id": order_id}, {"$set": {"schemaVersion": 2}, "$unset": {"customer.phone": ""}})
        return 1

    def returns_bool(orders, order_id):
        return right["migrate_order"](orders, order_id) == 1

    assert_incorrect(lab.q2, {**right, "migrate_order": no_version_filter}, "a second run changed order 1")
    assert_incorrect(lab.q2, {"to_v2": seed_pipeline, "migrate_order": null_for_no_phone}, "has no phone")
    assert_incorrect(lab.q2, {**right, "migrate_order": two_steps}, "took 4 writes")
    assert_incorrect(lab.q2, {**right, "migrate_order": returns_bool}, "number of documents")


def test_migrate_order_not_attempted(lab):
    if not lab.backend.supports(Capability.PIPELINE_UPDATES):
        assert_unsupported(lab.q2, {"to_v2": ____, "migrate_order": ____}, "pipeline updates")
        return
    right = solution(lab, 2)
    assert_not_attempted(lab.q2, {"to_v2": ____, "migrate_order": ____})
    assert_not_attempted(lab.q2, {**right, "migrate_order": lambda orders, order_id: ____})


# 05.3 ----------------------------------------------------------------------
def test_readers_right(lab):
    assert_correct(lab.q3, solution(lab, 3))


def test_readers_wrong(lab):
    right = solution(lab, 3)

    def upgrade_without_empty_list(orders, order_id):
        doc = orders.find_one({"_id": order_id})
        if doc is None or doc.get("schemaVersion") == 2:
            return doc
        customer = dict(doc["customer"])
        customer["phones"] = [customer.pop("phone", None)]
        return {**doc, "schemaVersion": 2, "customer": customer}

    def migrates_on_read(orders, order_id):
        orders.update_one({"_id": order_id, "schemaVersion": {"$exists": False}}, {"$set": {"seen": True}})
        return right["read_order"](orders, order_id)

    def raw_v1_lookup(orders, phone):
        return list(orders.find({"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}))

    assert_incorrect(lab.q3, {**right, "read_order": v2_only_reader}, "customer.phones")
    assert_incorrect(lab.q3, {**right, "find_by_phone": new_field_lookup}, "versions 1 and 2")
    assert_incorrect(lab.q3, {**right, "read_order": upgrade_without_empty_list}, "[None]")
    assert_incorrect(lab.q3, {**right, "read_order": migrates_on_read}, "reading wrote to the database")
    assert_incorrect(lab.q3, {**right, "find_by_phone": raw_v1_lookup}, "reads went wrong", "wrong shape")


def test_readers_not_attempted(lab):
    right = solution(lab, 3)
    assert_not_attempted(lab.q3, {"read_order": ____, "find_by_phone": ____})
    assert_not_attempted(lab.q3, {**right, "find_by_phone": lambda orders, phone: ____})


# 05.4 ----------------------------------------------------------------------
def test_batch_right(lab):
    if not lab.backend.supports(Capability.PIPELINE_UPDATES):
        assert_unsupported(lab.q4, solution(lab, 2, 4), "pipeline updates")
        return
    assert_correct(lab.q4, solution(lab, 2, 4))


def test_batch_wrong(lab):
    if not lab.backend.supports(Capability.PIPELINE_UPDATES):
        pytest.skip("no verdict without pipeline updates")
    right = solution(lab, 2, 4)
    to_v2 = right["to_v2"]

    def not_idempotent(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        ids = [d["_id"] for d in orders.find({}, {"_id": 1}).sort("_id", 1)]
        for start in range(0, len(ids), batch_size):
            orders.update_many({"_id": {"$in": ids[start:start + batch_size]}}, to_v2)
            log("batch")
            sleep(pause)
        return len(ids)

    def null_phones(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        old = {"schemaVersion": {"$exists": False}}
        pipeline = [{"$set": {"schemaVersion": 2, "customer.phones": ["$customer.phone"]}},
                    {"$unset": "customer.phone"}]
        moved = 0
        while ids := [d["_id"] for d in orders.find(old, {"_id": 1}).limit(batch_size)]:
            moved += orders.update_many({"_id": {"$in": ids}, **old}, pipeline).modified_count
            log("batch")
            sleep(pause)
        return moved

    def by_position(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        total = orders.count_documents({})
        for skip in range(0, total, batch_size):
            ids = [d["_id"] for d in orders.find({}, {"_id": 1}).sort("_id", 1).skip(skip).limit(batch_size)]
            orders.update_many({"_id": {"$in": ids}}, to_v2)
            log("batch")
            sleep(pause)
        return total

    def all_at_once(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        result = orders.update_many({"schemaVersion": {"$exists": False}}, to_v2)
        log("done")
        return result.modified_count

    def swallows_interruption(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        try:
            return right["migrate_in_batches"](orders, batch_size, pause, sleep, log)
        except Exception:
            return 0

    def snapshot_of_ids(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        old = {"schemaVersion": {"$exists": False}}
        ids = [d["_id"] for d in orders.find(old, {"_id": 1})]
        for start in range(0, len(ids), batch_size):
            orders.update_many({"_id": {"$in": ids[start:start + batch_size]}, **old}, to_v2)
            log("batch")
            sleep(pause)
        return len(ids)

    assert_incorrect(lab.q4, {**right, "migrate_in_batches": not_idempotent}, "should be", "'phones': []}")
    assert_incorrect(lab.q4, {**right, "migrate_in_batches": null_phones}, "[None]")
    assert_incorrect(lab.q4, {**right, "migrate_in_batches": by_position}, "reported")
    assert_incorrect(lab.q4, {**right, "migrate_in_batches": all_at_once}, "log one line per batch")
    assert_incorrect(lab.q4, {**right, "migrate_in_batches": swallows_interruption}, "returned normally")
    assert_incorrect(lab.q4, {**right, "migrate_in_batches": snapshot_of_ids}, "still version 1")


def test_batch_not_attempted(lab):
    if not lab.backend.supports(Capability.PIPELINE_UPDATES):
        assert_unsupported(lab.q4, {"migrate_in_batches": ____}, "pipeline updates")
        return
    assert_not_attempted(lab.q4, {"migrate_in_batches": ____})
    assert_not_attempted(lab.q4, {"migrate_in_batches": lambda orders, **kw: ____})


# 05.5 ----------------------------------------------------------------------
def test_reconcile_right(lab):
    assert_correct(lab.q5, solution(lab, 5))


def test_reconcile_wrong(lab):
    def anywhere_in_list(orders):
        found = []
        for d in orders.find({"customer.phones": {"$exists": True}}).sort("_id", 1):
            phones = d["customer"]["phones"] or [None]
            if d["customer"].get("phone") not in phones:
                found.append(d["_id"])
        return found

    def only_where_both_exist(orders):
        query = {"customer.phone": {"$exists": True}, "customer.phones": {"$exists": True}}
        return [d["_id"] for d in orders.find(query).sort("_id", 1)
                if [d["customer"]["phone"]] != d["customer"]["phones"][:1]]

    def count_only(orders):
        return len(solution(lab, 5)["disagreements"](orders))

    def stamps_checked_orders(orders):
        found = solution(lab, 5)["disagreements"](orders)
        orders.update_many({"customer.phones": {"$exists": True}}, {"$set": {"reconciled": True}})
        return found

    def includes_unmigrated(orders):
        found = solution(lab, 5)["disagreements"](orders)
        return sorted(found + [d["_id"] for d in orders.find({"customer.phones": {"$exists": False}})])

    assert_incorrect(lab.q5, {"disagreements": anywhere_in_list}, "orders [7]")
    assert_incorrect(lab.q5, {"disagreements": only_where_both_exist}, "orders [10]")
    assert_incorrect(lab.q5, {"disagreements": count_only}, "should be a list")
    assert_incorrect(lab.q5, {"disagreements": stamps_checked_orders}, "should only read")
    assert_incorrect(lab.q5, {"disagreements": includes_unmigrated}, "expected [5, 7, 10, 12]")


def test_reconcile_not_attempted(lab):
    assert_not_attempted(lab.q5, {"disagreements": ____})
    assert_not_attempted(lab.q5, {"disagreements": lambda orders: ____})


# 05.6 ----------------------------------------------------------------------
def test_staging_right(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        assert_unsupported(lab.q6, solution(lab, 6), "validators")
        return
    assert_correct(lab.q6, solution(lab, 6))


def test_staging_wrong(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        pytest.skip("no verdict without validators")
    right = solution(lab, 6)
    schema = right["v2_validator"]["$jsonSchema"]
    int_views = {"$jsonSchema": {**schema, "properties": {**schema["properties"], "views": {"bsonType": "int"}}}}
    no_version = {"$jsonSchema": {**schema, "required": ["customer"], "properties": {"customer": {}}}}

    assert_incorrect(lab.q6, {**right, "stages": [("strict", "error")] * 3}, "every legacy order just became")
    assert_incorrect(lab.q6, {**right, "stages": [("moderate", "warn")] * 3}, "still accepts new version 1")
    assert_incorrect(lab.q6, {**right, "stages": [("moderate", "warn"), ("strict", "error"), ("strict", "error")]},
                     "keep validationLevel moderate")
    assert_incorrect(lab.q6, {**right, "stages": [("moderate", "warn"), ("moderate", "error"),
                                                  ("moderate", "error")]}, "finish with validationLevel strict")
    assert_incorrect(lab.q6, {**right, "v2_validator": int_views}, "rejects a valid version 2 order")
    assert_incorrect(lab.q6, {**right, "v2_validator": no_version}, "accepts a version 1 order")
    assert_incorrect(lab.q6, {**right, "stages": ["moderate", "warn"]}, "three (validationLevel")


def test_staging_not_attempted(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        assert_unsupported(lab.q6, {"v2_validator": ____, "stages": ____}, "validators")
        return
    assert_not_attempted(lab.q6, {"v2_validator": ____, "stages": ____})
    assert_not_attempted(lab.q6, {**solution(lab, 6), "stages": ____})
