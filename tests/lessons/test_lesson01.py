"""Lab 01's checkers: right, realistic wrong answers, and not attempted, on every backend."""

import pytest

from course import ____
from course.lessons.lesson01 import MAX_ADDRESSES
from tests.support.verdicts import assert_correct, assert_incorrect, assert_not_attempted, solution


@pytest.fixture
def lab(make_lab):
    return make_lab("01")


# 01.1 ----------------------------------------------------------------------
KETTLE = {"_id": 91, "schema_version": 2, "name": "Kettle", "category": "kitchen",
          "price_pence": 2499, "tags": ["steel", "1.7l"]}


def test_kettle_right(lab):
    assert_correct(lab.q1, solution(lab, 1))


def test_kettle_wrong(lab):
    assert_incorrect(lab.q1, {"kettle": {**KETTLE, "price_pence": "2499"}}, "should be an int")
    assert_incorrect(lab.q1, {"kettle": {**KETTLE, "price_pence": 24.99}}, "should be an int")
    assert_incorrect(lab.q1, {"kettle": {k: v for k, v in KETTLE.items() if k != "schema_version"}},
                     "schema_version")
    assert_incorrect(lab.q1, {"kettle": {**KETTLE, "tags": "steel,1.7l"}}, "list of strings")
    assert_incorrect(lab.q1, {"kettle": {**KETTLE, "reviews": list(range(50))}}, "must stay bounded")
    assert_incorrect(lab.q1, {"kettle": [KETTLE]}, "should be a dict")


def test_kettle_not_attempted(lab):
    assert_not_attempted(lab.q1, {"kettle": ____})


# 01.2 ----------------------------------------------------------------------
def test_search_right(lab):
    assert_correct(lab.q2, solution(lab, 2))


def test_search_wrong(lab):
    def by_id(products, category, page, page_size=20):
        cursor = products.find({"category": category}, {"name": 1, "price_pence": 1})
        return list(cursor.sort("_id", 1).skip((page - 1) * page_size).limit(page_size))

    def off_by_one(products, category, page, page_size=20):
        cursor = products.find({"category": category}, {"name": 1, "price_pence": 1})
        return list(cursor.sort("name", 1).skip(page * page_size).limit(page_size))

    def whole_documents(products, category, page, page_size=20):
        cursor = products.find({"category": category}).sort("name", 1)
        return list(cursor.skip((page - 1) * page_size).limit(page_size))

    def ignores_page_size(products, category, page, page_size=20):
        cursor = products.find({"category": category}, {"name": 1, "price_pence": 1}).sort("name", 1)
        return list(cursor.skip((page - 1) * 20).limit(20))

    assert_incorrect(lab.q2, {"search_page": by_id}, "not the products expected")
    assert_incorrect(lab.q2, {"search_page": off_by_one}, "page 1 of kitchen")
    assert_incorrect(lab.q2, {"search_page": whole_documents}, "project away")
    assert_incorrect(lab.q2, {"search_page": ignores_page_size}, "7 per page")
    assert_incorrect(lab.q2, {"search_page": lambda *a: 1 / 0}, "ZeroDivisionError")


def test_search_not_attempted(lab):
    assert_not_attempted(lab.q2, {"search_page": ____})
    assert_not_attempted(lab.q2, {"search_page": lambda *args, **kwargs: ____})


# 01.3 ----------------------------------------------------------------------
def test_indexes_right(lab):
    namespace = solution(lab, 3)
    lab.db.products.insert_one({"_id": 1, "category": "kitchen", "name": "Kettle"})
    namespace["create_catalog_indexes"](lab.db.products)
    assert_correct(lab.q3, namespace)


def test_indexes_wrong(lab):
    lab.db.products.insert_one({"_id": 1, "category": "kitchen", "name": "Kettle"})
    lab.db.products.create_index([("category", 1), ("name", 1)])
    assert_incorrect(lab.q3, {"create_catalog_indexes": lambda p: p.create_index("category")}, "sorts in memory")
    assert_incorrect(lab.q3, {"create_catalog_indexes": lambda p: p.create_index([("name", 1), ("category", 1)])},
                     "scans the whole collection")
    assert_incorrect(lab.q3, {"create_catalog_indexes": lambda p: None}, "scans the whole collection")

    def with_extra(products):
        products.create_index([("category", 1), ("name", 1)])
        products.create_index("price_pence")

    assert_incorrect(lab.q3, {"create_catalog_indexes": with_extra}, "index price_pence_1 serves none")


def test_indexes_lab_database_must_be_indexed(lab):
    lab.db.products.insert_one({"_id": 1, "category": "kitchen", "name": "Kettle"})
    assert_incorrect(lab.q3, solution(lab, 3), "still scans")


def test_indexes_not_attempted(lab):
    assert_not_attempted(lab.q3, {"create_catalog_indexes": ____})
    assert_not_attempted(lab.q3, {"create_catalog_indexes": lambda products: ____})


# 01.4 ----------------------------------------------------------------------
def test_update_price_right(lab):
    assert_correct(lab.q4, solution(lab, 4))


def test_update_price_wrong(lab):
    def replaces(products, product_id, price_pence):
        doc = products.find_one({"_id": product_id})
        if doc is None:
            return False
        doc["price_pence"] = price_pence
        products.replace_one({"_id": product_id}, doc)
        return True

    def no_validation(products, product_id, price_pence):
        return products.update_one({"_id": product_id}, {"$set": {"price_pence": price_pence}}).matched_count == 1

    def upserts(products, product_id, price_pence):
        if not isinstance(price_pence, int) or isinstance(price_pence, bool) or price_pence < 0:
            raise ValueError(price_pence)
        products.update_one({"_id": product_id}, {"$set": {"price_pence": price_pence}}, upsert=True)
        return True

    def stamps_more(products, product_id, price_pence):
        if not isinstance(price_pence, int) or isinstance(price_pence, bool) or price_pence < 0:
            raise ValueError(price_pence)
        update = {"$set": {"price_pence": price_pence, "name": "changed"}}
        return products.update_one({"_id": product_id}, update).matched_count == 1

    assert_incorrect(lab.q4, {"update_price": replaces}, "use update_one with $set")
    assert_incorrect(lab.q4, {"update_price": no_validation}, "accepted '2499'")
    assert_incorrect(lab.q4, {"update_price": upserts}, "do not upsert")
    assert_incorrect(lab.q4, {"update_price": stamps_more}, "name changed too")


def test_update_price_not_attempted(lab):
    assert_not_attempted(lab.q4, {"update_price": ____})


# 01.5 ----------------------------------------------------------------------
RIGHT_PLANS = {"A": ("category_1_name_1", False), "B": ("price_pence_1", True),
               "C": (None, False), "D": (None, False)}


def test_plans_right(lab):
    assert_correct(lab.q5, solution(lab, 5))
    assert_correct(lab.q5, {"plan_predictions": RIGHT_PLANS})


def test_plans_wrong(lab):
    assert_incorrect(lab.q5, {"plan_predictions": {**RIGHT_PLANS, "B": ("price_pence_1", False)}},
                     "query B", "sort in memory")
    assert_incorrect(lab.q5, {"plan_predictions": {**RIGHT_PLANS, "D": ("category_1_name_1", False)}},
                     "query D")
    assert_incorrect(lab.q5, {"plan_predictions": {**RIGHT_PLANS, "A": "category_1_name_1"}}, "should be (index name")
    assert_incorrect(lab.q5, {"plan_predictions": [RIGHT_PLANS]}, "should be a dict")


def test_plans_not_attempted(lab):
    assert_not_attempted(lab.q5, {"plan_predictions": ____})


# 01.6 ----------------------------------------------------------------------
def test_customer_design_right(lab):
    assert_correct(lab.q6, solution(lab, 6))


def test_customer_design_wrong(lab):
    right = solution(lab, 6)

    def unbounded_address(db, customer_id, address):
        return db.customers.update_one({"_id": customer_id}, {"$push": {"addresses": address}}).modified_count == 1

    def embedded_order(db, customer_id, order):
        db.customers.update_one({"_id": customer_id}, {"$push": {"orders": order}})
        db.orders.insert_one({**order, "customer_id": customer_id, "schema_version": 1})

    def oldest_first(db, customer_id, limit=10):
        return list(db.orders.find({"customer_id": customer_id}).sort("placed_at", 1).limit(limit))

    def index_without_sort(db):
        db.orders.create_index("customer_id")

    assert_incorrect(lab.q6, {**right, "add_address": unbounded_address}, f"must stop at {MAX_ADDRESSES}")
    assert_incorrect(lab.q6, {**right, "place_order": embedded_order}, "grew a list")
    assert_incorrect(lab.q6, {**right, "recent_orders": oldest_first}, "[50, 40, 25]")
    assert_incorrect(lab.q6, {**right, "create_order_indexes": index_without_sort}, "sorts in memory")


def test_customer_design_not_attempted(lab):
    right = solution(lab, 6)
    assert_not_attempted(lab.q6, {**right, "place_order": ____})
    assert_not_attempted(lab.q6, {name: ____ for name in right})
