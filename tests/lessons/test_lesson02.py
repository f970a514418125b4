"""Lab 02's checkers: right, realistic wrong answers, and not attempted, on every backend."""

import pytest

from course import ____
from course.datasets_orders import KIND_COLLECTIONS, MAX_LINES, RECENT_REVIEWS
from tests.support.verdicts import assert_correct, assert_incorrect, assert_not_attempted, solution


@pytest.fixture
def lab(make_lab):
    return make_lab("02")


# 02.1 ----------------------------------------------------------------------
def test_orders_right(lab):
    assert_correct(lab.q1, solution(lab, 1))


def test_orders_wrong(lab):
    right = solution(lab, 1)

    def embeds_in_customer(db, customer_id, order_id, lines, placed_at):
        if not 1 <= len(lines) <= MAX_LINES:
            raise ValueError(len(lines))
        right["place_order"](db, customer_id, order_id, lines, placed_at)
        db.customers.update_one({"_id": customer_id}, {"$push": {"order_ids": order_id}})
        return order_id

    def lines_apart(db, customer_id, order_id, lines, placed_at):
        if not 1 <= len(lines) <= MAX_LINES:
            raise ValueError(len(lines))
        db.orders.insert_one({"_id": order_id, "schema_version": 1, "customer_id": customer_id,
                              "placed_at": placed_at, "total_pence": sum(l["qty"] * l["price_pence"] for l in lines)})
        db.order_lines.insert_many([{**line, "order_id": order_id} for line in lines])
        return order_id

    def unbounded(db, customer_id, order_id, lines, placed_at):
        db.orders.insert_one({"_id": order_id, "schema_version": 1, "customer_id": customer_id,
                              "placed_at": placed_at, "lines": list(lines),
                              "total_pence": sum(l["qty"] * l["price_pence"] for l in lines)})
        return order_id

    def add_line_unbounded(db, order_id, line):
        result = db.orders.update_one({"_id": order_id}, {"$push": {"lines": line},
                                                          "$inc": {"total_pence": line["qty"] * line["price_pence"]}})
        return result.modified_count == 1

    def add_line_two_writes(db, order_id, line):
        filter = {"_id": order_id, f"lines.{MAX_LINES - 1}": {"$exists": False}}
        result = db.orders.update_one(filter, {"$push": {"lines": line}})
        if result.modified_count:
            db.orders.update_one({"_id": order_id}, {"$inc": {"total_pence": line["qty"] * line["price_pence"]}})
        return result.modified_count == 1

    def add_line_no_total(db, order_id, line):
        filter = {"_id": order_id, f"lines.{MAX_LINES - 1}": {"$exists": False}}
        return db.orders.update_one(filter, {"$push": {"lines": line}}).modified_count == 1

    assert_incorrect(lab.q1, {**right, "place_order": embeds_in_customer}, "customer 4 went from")
    assert_incorrect(lab.q1, {**right, "place_order": lines_apart}, "lines should be embedded")
    assert_incorrect(lab.q1, {**right, "place_order": unbounded}, f"accepted an order with {MAX_LINES + 1} lines")
    assert_incorrect(lab.q1, {**right, "add_line": add_line_unbounded}, f"must stop at {MAX_LINES}")
    assert_incorrect(lab.q1, {**right, "add_line": add_line_two_writes}, "in one update_one")
    assert_incorrect(lab.q1, {**right, "add_line": add_line_no_total}, "should be 860")


def test_orders_not_attempted(lab):
    right = solution(lab, 1)
    assert_not_attempted(lab.q1, {**right, "add_line": ____})
    assert_not_attempted(lab.q1, {"place_order": lambda *a: ____, "add_line": right["add_line"]})


# 02.2 ----------------------------------------------------------------------
def test_reviews_right(lab):
    assert_correct(lab.q2, solution(lab, 2))


def test_reviews_wrong(lab):
    def embeds_all(db, product_id, review):
        review = {**review, "product_id": product_id}
        db.reviews.insert_one(review)
        db.products.update_one({"_id": product_id}, {"$push": {"recent_reviews": {"$each": [review], "$position": 0}}})

    def read_modify_write(db, product_id, review):
        review = {**review, "product_id": product_id}
        db.reviews.insert_one(review)
        product = db.products.find_one({"_id": product_id})
        product["recent_reviews"] = ([review] + product.get("recent_reviews", []))[:RECENT_REVIEWS]
        db.products.replace_one({"_id": product_id}, product)

    def oldest_first(db, product_id, review):
        review = {**review, "product_id": product_id}
        db.reviews.insert_one(review)
        db.products.update_one({"_id": product_id},
                               {"$push": {"recent_reviews": {"$each": [review], "$slice": -RECENT_REVIEWS}}})

    def embeds_only(db, product_id, review):
        db.products.update_one({"_id": product_id}, {"$push": {"recent_reviews": {
            "$each": [review], "$position": 0, "$slice": RECENT_REVIEWS}}})

    assert_incorrect(lab.q2, {"add_review": embeds_all}, "keep only the")
    assert_incorrect(lab.q2, {"add_review": read_modify_write}, "loses reviews")
    assert_incorrect(lab.q2, {"add_review": oldest_first}, "newest first")
    assert_incorrect(lab.q2, {"add_review": embeds_only}, "db.reviews should hold all")


def test_reviews_not_attempted(lab):
    assert_not_attempted(lab.q2, {"add_review": ____})


# 02.3 ----------------------------------------------------------------------
def test_copies_right(lab):
    assert_correct(lab.q3, solution(lab, 3))


def test_copies_wrong(lab):
    right = solution(lab, 3)

    def source_only(db, customer_id, changes):
        return db.customers.update_one({"_id": customer_id}, {"$set": changes}).matched_count == 1

    def copies_everything(db, customer_id, changes):
        db.customers.update_one({"_id": customer_id}, {"$set": changes})
        db.orders.update_many({"customer_id": customer_id},
                              {"$set": {f"customer_copy.{k}": v for k, v in changes.items()}})

    def replaces_copy(db, customer_id, changes):
        db.customers.update_one({"_id": customer_id}, {"$set": changes})
        copy = {k: v for k, v in changes.items() if k in ("name", "phone")}
        db.orders.update_many({"customer_id": customer_id}, {"$set": {"customer_copy": copy}})

    def appends_history(db, customer_id, changes):
        right["update_customer"](db, customer_id, changes)
        db.orders.update_many({"customer_id": customer_id}, {"$push": {"copy_history": changes}})

    def upserts(db, customer_id, changes):
        db.customers.update_one({"_id": customer_id}, {"$set": changes}, upsert=True)
        right["update_customer"](db, customer_id, changes)

    assert_incorrect(lab.q3, {**right, "update_customer": source_only}, "still copies name")
    assert_incorrect(lab.q3, {**right, "update_customer": copies_everything}, "the email stays on the customer")
    assert_incorrect(lab.q3, {**right, "update_customer": replaces_copy}, "still copies phone")
    assert_incorrect(lab.q3, {**right, "update_customer": appends_history}, "changed the data the second time")
    assert_incorrect(lab.q3, {**right, "update_customer": upserts}, "do not upsert")
    assert_incorrect(lab.q3, {**right, "create_copy_index": lambda db: db.orders.create_index("placed_at")},
                     "index customer_id")


def test_copies_not_attempted(lab):
    right = solution(lab, 3)
    assert_not_attempted(lab.q3, {**right, "update_customer": ____})
    assert_not_attempted(lab.q3, {"update_customer": ____, "create_copy_index": ____})


# 02.4 ----------------------------------------------------------------------
def test_split_right(lab):
    assert_correct(lab.q4, solution(lab, 4))


def test_split_wrong(lab):
    def keeps_kind(db):
        for doc in db.records.find():
            target = KIND_COLLECTIONS.get(doc.get("kind"), "unclassified")
            db[target].replace_one({"_id": doc["_id"]}, doc, upsert=True)

    def drops_strays(db):
        for doc in db.records.find({"kind": {"$exists": True}}):
            target = KIND_COLLECTIONS[doc.pop("kind")]
            db[target].replace_one({"_id": doc["_id"]}, doc, upsert=True)

    def not_rerunnable(db):
        for doc in db.records.find():
            target = KIND_COLLECTIONS.get(doc.get("kind"))
            if target is None:
                db.unclassified.insert_one(doc)
            else:
                doc.pop("kind")
                db[target].insert_one(doc)

    def moves(db):
        solution(lab, 4)["split_records"](db)
        db.records.delete_many({})

    def all_in_one(db):
        for doc in db.records.find():
            db.orders.replace_one({"_id": doc["_id"]}, doc, upsert=True)

    assert_incorrect(lab.q4, {"split_records": keeps_kind}, "still has its kind field")
    assert_incorrect(lab.q4, {"split_records": drops_strays}, "should be in unclassified exactly once")
    assert_incorrect(lab.q4, {"split_records": not_rerunnable}, "DuplicateKeyError")
    assert_incorrect(lab.q4, {"split_records": moves}, "keep the source")
    assert_incorrect(lab.q4, {"split_records": all_in_one}, "should be in customers exactly once")


def test_split_not_attempted(lab):
    assert_not_attempted(lab.q4, {"split_records": ____})
