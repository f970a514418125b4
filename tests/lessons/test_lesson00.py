"""Lab 00's checkers: right, wrong and not attempted, on every backend."""

import pytest

from course import ____
from course.datasets import catalog_products
from course.lessons.lesson00 import PRODUCTS, SEED
from tests.support.verdicts import assert_correct, assert_incorrect, assert_not_attempted


@pytest.fixture
def lab(make_lab):
    lab = make_lab("00")
    lab.db.products.insert_many(catalog_products(n=PRODUCTS, seed=SEED))
    return lab


def _cheap_garden(products, strict=False):
    op = "$lt" if strict else "$lte"
    return products.count_documents({"category": "garden", "price_pence": {op: 999}})


def test_count_right(lab):
    assert_correct(lab.q1, {"cheap_garden_count": _cheap_garden(lab.db.products)})


def test_count_wrong(lab):
    products = lab.db.products
    assert_incorrect(lab.q1, {"cheap_garden_count": products.count_documents({"category": "garden"})},
                     "add the price condition")
    assert_incorrect(lab.q1, {"cheap_garden_count": _cheap_garden(products, strict=True)}, "use $lte, not $lt")
    assert_incorrect(lab.q1, {"cheap_garden_count": str(_cheap_garden(products))}, "should be a int")


def test_count_not_attempted(lab):
    assert_not_attempted(lab.q1, {"cheap_garden_count": ____})
    assert_not_attempted(lab.q1, {})


def _names(products, direction=1, limit=5):
    cursor = products.find({"category": "garden"}, {"name": 1}).sort([("price_pence", direction), ("_id", 1)])
    return [d["name"] for d in cursor.limit(limit)]


def test_names_right(lab):
    assert_correct(lab.q2, {"cheapest_garden_names": _names(lab.db.products)})


def test_names_wrong(lab):
    products = lab.db.products
    assert_incorrect(lab.q2, {"cheapest_garden_names": _names(products, -1)}, "sort ascending")
    assert_incorrect(lab.q2, {"cheapest_garden_names": list(reversed(_names(products)))}, "wrong order")
    assert_incorrect(lab.q2, {"cheapest_garden_names": _names(products, limit=6)}, "use .limit(5)")
    docs = list(products.find({"category": "garden"}).sort("price_pence", 1).limit(5))
    assert_incorrect(lab.q2, {"cheapest_garden_names": docs}, "not whole documents")


def test_names_not_attempted(lab):
    assert_not_attempted(lab.q2, {"cheapest_garden_names": ____})


def test_hidden_check_sees_the_lab_database(lab):
    answer = {"cheapest_garden_names": _names(lab.db.products)}
    lab.db.products.delete_many({"category": "toys"})
    assert_incorrect(lab.q2, answer, "still hold 200 products")
