"""Lab 04's checkers: right, realistic wrong answers, and not attempted, on every backend."""

import pytest
from pymongo import IndexModel

from course import ____
from course.capabilities import Capability
from course.lessons import lesson04
from tests.support.verdicts import assert_correct, assert_incorrect, assert_not_attempted, solution as reference_solution

CONSTANTS = {name: getattr(lesson04, name) for name in ("RECENT_REVIEWS", "BUCKET_CAP", "FOLLOWER_THRESHOLD",
                                                         "EXTRA_PAGE")}


@pytest.fixture
def lab(make_lab):
    return make_lab("04")


def solution(lab, number):
    """The exercise's reference solution, with the constants and imports the notebook provides."""
    return reference_solution(lab, number, names={**CONSTANTS, "IndexModel": IndexModel})


def with_(lab, number, **replaced):
    """The reference solution with some names replaced by wrong versions."""
    return {**solution(lab, number), **replaced}


# 04.1 subset -----------------------------------------------------------------
def _summary(review):
    return {"reviewId": review["_id"], "stars": review["stars"], "text": review["text"], "at": review["at"]}


def test_subset_right(lab):
    assert_correct(lab.q1, solution(lab, 1))


def test_subset_wrong(lab):
    def uncapped(db, review):
        db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
        db.products.update_one({"_id": review["productId"], "recentReviews.reviewId": {"$ne": review["_id"]}},
                               {"$push": {"recentReviews": {"$each": [_summary(review)], "$position": 0}}})

    def appended(db, review):
        db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
        db.products.update_one({"_id": review["productId"], "recentReviews.reviewId": {"$ne": review["_id"]}},
                               {"$push": {"recentReviews": {"$each": [_summary(review)], "$slice": -10}}})

    def not_idempotent(db, review):
        db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
        db.products.update_one({"_id": review["productId"]},
                               {"$push": {"recentReviews": {"$each": [_summary(review)], "$position": 0,
                                                            "$slice": 10}}})

    def product_only(db, review):
        db.products.update_one({"_id": review["productId"]},
                               {"$push": {"recentReviews": {"$each": [_summary(review)], "$position": 0,
                                                            "$slice": 10}}})

    def plain_insert(db, review):
        db.reviews.insert_one(review)
        db.products.update_one({"_id": review["productId"], "recentReviews.reviewId": {"$ne": review["_id"]}},
                               {"$push": {"recentReviews": {"$each": [_summary(review)], "$position": 0,
                                                            "$slice": 10}}})

    assert_incorrect(lab.q1, {"add_review": uncapped}, "cap the array at 10")
    assert_incorrect(lab.q1, {"add_review": appended}, "newest first")
    assert_incorrect(lab.q1, {"add_review": not_idempotent}, "a retried write must change nothing")
    assert_incorrect(lab.q1, {"add_review": product_only}, "db.reviews should hold all")
    assert_incorrect(lab.q1, {"add_review": plain_insert}, "DuplicateKeyError")


def test_subset_not_attempted(lab):
    assert_not_attempted(lab.q1, {"add_review": ____})
    assert_not_attempted(lab.q1, {"add_review": lambda db, review: ____})


# 04.2 extended reference -------------------------------------------------------
def test_extended_reference_right(lab):
    assert_correct(lab.q2, solution(lab, 2))


def test_extended_reference_wrong(lab):
    def copies_everything(db, order_id, customer_id, items):
        customer = db.customers.find_one({"_id": customer_id})
        db.orders.insert_one({"_id": order_id, "customer": customer, "items": items})

    def id_only(db, order_id, customer_id, items):
        db.orders.insert_one({"_id": order_id, "customer": {"_id": customer_id}, "items": items})

    def customer_only(db, customer_id, phone):
        db.orders.create_index("customer._id")
        db.customers.update_one({"_id": customer_id}, {"$set": {"phone": phone}})

    def first_order_only(db, customer_id, phone):
        db.orders.create_index("customer._id")
        db.customers.update_one({"_id": customer_id}, {"$set": {"phone": phone}})
        db.orders.update_one({"customer._id": customer_id}, {"$set": {"customer.phone": phone}})

    def unindexed(db, customer_id, phone):
        db.customers.update_one({"_id": customer_id}, {"$set": {"phone": phone}})
        db.orders.update_many({"customer._id": customer_id}, {"$set": {"customer.phone": phone}})

    assert_incorrect(lab.q2, with_(lab, 2, place_order=copies_everything), "copies email, lastSeenAt, loyaltyPoints")
    assert_incorrect(lab.q2, with_(lab, 2, place_order=id_only), "should be {_id, name, phone}")
    assert_incorrect(lab.q2, with_(lab, 2, change_phone=customer_only), "still show the old phone")
    assert_incorrect(lab.q2, with_(lab, 2, change_phone=first_order_only), "still show the old phone")
    assert_incorrect(lab.q2, with_(lab, 2, change_phone=unindexed), "index on 'customer._id'")


def test_extended_reference_not_attempted(lab):
    assert_not_attempted(lab.q2, {"place_order": ____, "change_phone": ____})
    assert_not_attempted(lab.q2, with_(lab, 2, change_phone=lambda db, c, p: ____))


# 04.3 computed -----------------------------------------------------------------
def test_computed_right(lab):
    assert_correct(lab.q3, solution(lab, 3))


def test_computed_wrong(lab):
    def no_total(db, order):
        db.orders.insert_one(order)
        total = sum(i["qty"] * i["unitPrice"] for i in order["items"])
        db.customers.update_one({"_id": order["customerId"]},
                                {"$inc": {"stats.orderCount": 1, "stats.totalSpent": total}})

    def count_only(db, order):
        total = sum(i["qty"] * i["unitPrice"] for i in order["items"])
        db.orders.insert_one({**order, "total": total})
        db.customers.update_one({"_id": order["customerId"]}, {"$inc": {"stats.orderCount": 1}})

    def reports_only(db):
        namespace = solution(lab, 3)
        drifted = []
        truth = {r["_id"]: (r["n"], r["s"]) for r in db.orders.aggregate(
            [{"$group": {"_id": "$customerId", "n": {"$sum": 1}, "s": {"$sum": "$total"}}}])}
        for customer in db.customers.find():
            n, s = truth.get(customer["_id"], (0, 0))
            if customer["stats"] != {"orderCount": n, "totalSpent": s}:
                drifted.append(customer["_id"])
        assert namespace  # the reference is not used: this version never fixes
        return drifted

    def counts_only(db):
        truth = {r["_id"]: r["n"] for r in db.orders.aggregate([{"$group": {"_id": "$customerId", "n": {"$sum": 1}}}])}
        drifted = []
        for customer in db.customers.find():
            if customer["stats"]["orderCount"] != truth.get(customer["_id"], 0):
                db.customers.update_one({"_id": customer["_id"]},
                                        {"$set": {"stats.orderCount": truth.get(customer["_id"], 0)}})
                drifted.append(customer["_id"])
        return drifted

    assert_incorrect(lab.q3, with_(lab, 3, record_order=no_total), "should store total")
    assert_incorrect(lab.q3, with_(lab, 3, record_order=count_only), "orders worth")
    assert_incorrect(lab.q3, with_(lab, 3, reconcile=reports_only), "customer 3 placed 3 orders")
    assert_incorrect(lab.q3, with_(lab, 3, reconcile=counts_only), "a wrong $inc")


def test_computed_not_attempted(lab):
    assert_not_attempted(lab.q3, {"record_order": ____, "reconcile": ____})


# 04.4 bucket -------------------------------------------------------------------
def test_bucket_right(lab):
    assert_correct(lab.q4, solution(lab, 4))


def test_bucket_wrong(lab):
    def uncapped(db, tenant_id, product_id, day, event):
        incoming = event["qty"] if event["type"] == "IN" else 0
        db.stock_events.update_one({"tenantId": tenant_id, "productId": product_id, "day": day},
                                   {"$push": {"events": event},
                                    "$inc": {"count": 1, "sumIn": incoming, "sumOut": event["qty"] - incoming}},
                                   upsert=True)

    def no_sums(db, tenant_id, product_id, day, event):
        db.stock_events.update_one({"tenantId": tenant_id, "productId": product_id, "day": day,
                                    "count": {"$lt": 50}},
                                   {"$push": {"events": event}, "$inc": {"count": 1}}, upsert=True)

    def one_per_event(db, tenant_id, product_id, day, event):
        incoming = event["qty"] if event["type"] == "IN" else 0
        db.stock_events.insert_one({"tenantId": tenant_id, "productId": product_id, "day": day, "count": 1,
                                    "events": [event], "sumIn": incoming, "sumOut": event["qty"] - incoming})

    def wrong_index(db):
        db.stock_events.create_index([("day", 1)])

    assert_incorrect(lab.q4, with_(lab, 4, record_stock_event=uncapped), "never more than 50")
    assert_incorrect(lab.q4, with_(lab, 4, record_stock_event=no_sums), "$inc them with each event")
    assert_incorrect(lab.q4, with_(lab, 4, record_stock_event=one_per_event), "fill up in turn")
    assert_incorrect(lab.q4, with_(lab, 4, create_bucket_index=wrong_index), "starts with tenantId, productId")


def test_bucket_not_attempted(lab):
    assert_not_attempted(lab.q4, {"record_stock_event": ____, "create_bucket_index": ____})


# 04.5 outlier ------------------------------------------------------------------
def test_outlier_right(lab):
    assert_correct(lab.q5, solution(lab, 5))


def test_outlier_wrong(lab):
    right = solution(lab, 5)

    def embeds_all(db, product_id, user_id):
        db.products.update_one({"_id": product_id}, {"$push": {"followers": user_id}})

    def off_by_one(db, product_id, user_id):
        embedded = db.products.update_one({"_id": product_id, "followers.48": {"$exists": False}},
                                          {"$push": {"followers": user_id}})
        if embedded.modified_count == 0:
            db.products.update_one({"_id": product_id}, {"$set": {"hasExtras": True}})
            db.product_followers_extra.update_one({"productId": product_id, "count": {"$lt": 100}},
                                                  {"$push": {"followers": user_id}, "$inc": {"count": 1}},
                                                  upsert=True)

    def embedded_count(db, product_id):
        return len(db.products.find_one({"_id": product_id}).get("followers", []))

    def always_both(db, product_id):
        product = db.products.find_one({"_id": product_id})
        pages = db.product_followers_extra.find({"productId": product_id})
        return len(product.get("followers", [])) + sum(p["count"] for p in pages)

    assert_incorrect(lab.q5, {**right, "add_follower": embeds_all}, "set hasExtras: true")
    assert_incorrect(lab.q5, {**right, "add_follower": off_by_one}, "nothing overflows")
    assert_incorrect(lab.q5, {**right, "follower_count": embedded_count}, "should add both places")
    assert_incorrect(lab.q5, {**right, "follower_count": always_both}, "check the flag first")


def test_outlier_not_attempted(lab):
    assert_not_attempted(lab.q5, {"add_follower": ____, "follower_count": ____})


# 04.6 polymorphic --------------------------------------------------------------
def test_polymorphic_right(lab):
    assert_correct(lab.q6, solution(lab, 6))


def test_polymorphic_wrong(lab):
    right = solution(lab, 6)

    def full_index(items):
        items.create_index([("tenantId", 1), ("name", 1)])
        items.create_index("specs.isbn")

    def no_shared(items):
        items.create_indexes([IndexModel([("specs.isbn", 1)], partialFilterExpression={"kind": "book"})])

    loose = {"$jsonSchema": {"bsonType": "object", "required": ["tenantId", "kind", "name", "price"]}}
    kinds_only = {"$jsonSchema": {"bsonType": "object", "required": ["tenantId", "kind", "name", "price", "specs"],
                                  "properties": {"kind": {"enum": ["phone", "shirt", "book"]}}}}

    assert_incorrect(lab.q6, {**right, "create_catalog_indexes": no_shared}, "tenantId")
    if lab.backend.supports(Capability.PARTIAL_INDEXES):
        assert_incorrect(lab.q6, {**right, "create_catalog_indexes": full_index}, "should be partial")
    if lab.backend.supports(Capability.VALIDATORS):
        assert_incorrect(lab.q6, {**right, "catalog_validator": loose}, "the validator accepted")
        assert_incorrect(lab.q6, {**right, "catalog_validator": kinds_only}, "a phone without ramGb")
        assert_incorrect(lab.q6, {**right, "catalog_validator": [loose]}, "should be a dict")
    else:
        result = assert_correct_where_checked(lab, right)
        assert "needs" in result.message


def assert_correct_where_checked(lab, namespace):
    """On a backend lacking validators and partial indexes, only the shared index gets a verdict."""
    result = lab.q6.evaluate(namespace, include_hidden=True)
    assert result.status.value == "correct", result
    unchecked = [o for o in result.outcomes if o.status.value == "unsupported"]
    assert len(unchecked) == 3 and all("needs" in o.message for o in unchecked)
    return result


def test_polymorphic_not_attempted(lab):
    assert_not_attempted(lab.q6, {"create_catalog_indexes": ____, "catalog_validator": ____})


# 04.7 schema versioning --------------------------------------------------------
def test_versioning_right(lab):
    assert_correct(lab.q7, solution(lab, 7))


def test_versioning_wrong(lab):
    right = solution(lab, 7)

    def v2_only_query(orders, phone):
        return list(orders.find({"customer.phones": phone}).sort("_id", 1))

    def unsorted(orders, phone):
        return list(orders.find({"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}).sort("_id", -1))

    def v1_crash(order):
        if order.get("schemaVersion", 1) == 1:
            return [order["customer"]["phone"]]
        return order["customer"]["phones"]

    def guesses(order):
        if "phones" in order["customer"]:
            return order["customer"]["phones"]
        phone = order["customer"].get("phone")
        return [phone] if phone else []

    assert_incorrect(lab.q7, {**right, "find_by_phone": v2_only_query}, "misses the v1 order 2")
    assert_incorrect(lab.q7, {**right, "find_by_phone": unsorted}, "should give orders [2, 9]")
    assert_incorrect(lab.q7, {**right, "phones_of": v1_crash}, "KeyError")
    assert_incorrect(lab.q7, {**right, "phones_of": guesses}, "should raise ValueError")


def test_versioning_not_attempted(lab):
    assert_not_attempted(lab.q7, {"phones_of": ____, "find_by_phone": ____})


# 04.8 self-check ---------------------------------------------------------------
def test_self_check_right(lab):
    assert_correct(lab.q8, solution(lab, 8))


def test_self_check_wrong(lab):
    right = solution(lab, 8)["self_check"]
    assert_incorrect(lab.q8, {"self_check": {**right, "projection_shrinks_working_set": "yes"}},
                     "projection_shrinks_working_set")
    assert_incorrect(lab.q8, {"self_check": {**right, "outliers_at_40_percent": "outlier"}},
                     "no longer an exception")
    assert_incorrect(lab.q8, {"self_check": {**right, "lazy_migration_phone_search": "maybe"}}, "should be one of")
    assert_incorrect(lab.q8, {"self_check": {k: v for k, v in right.items() if k != "outliers_at_40_percent"}},
                     "needs the key")
    assert_incorrect(lab.q8, {"self_check": ["no"]}, "should be a dict")


def test_self_check_not_attempted(lab):
    assert_not_attempted(lab.q8, {"self_check": ____})


def test_partial_index_unsupported_where_lacking(lab):
    if lab.backend.supports(Capability.PARTIAL_INDEXES):
        pytest.skip("this backend checks the partial index of 04.6")
    # mongomock: the verdict comes from the parts it can check; the partial index says what it needs
    result = lab.q6.evaluate(solution(lab, 6), include_hidden=True)
    assert any("needs partial indexes" in o.message for o in result.outcomes)
