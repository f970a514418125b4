"""Lab 00's checkers: right answers in other idioms, wrong answers that each break one requirement,
and not attempted, on every backend."""

import importlib
import re

import pytest

from course import ____
from course.datasets.catalog import catalog_products
from course.lessons.lesson00 import PRODUCTS, SEED
from tests.support.requirements import Right, Wrong, check_right, check_wrong
from tests.support.verdicts import assert_correct, assert_not_attempted, solution


def _seeded(lab):
    """The lab's products, seeded as the notebook seeds them (once: answers are built more than once)."""
    if lab.db.products.estimated_document_count() == 0:
        lab.db.products.insert_many(catalog_products(n=PRODUCTS, seed=SEED))
    return lab.db.products


def _count(filter_):
    """00.1's answer computed with ``filter_`` on the lab's seeded products."""
    return lambda lab: {"cheap_garden_count": _seeded(lab).count_documents(filter_)}


GARDEN_CHEAP = {"category": "garden", "price_pence": {"$lte": 999}}


def _aggregate_count(lab):
    found = list(_seeded(lab).aggregate([{"$match": GARDEN_CHEAP}, {"$count": "n"}]))
    return {"cheap_garden_count": found[0]["n"] if found else 0}


# 00.2 answers -----------------------------------------------------------------
def names_aggregate(products, category, n=5):
    pipeline = [{"$match": {"category": category}}, {"$sort": {"price_pence": 1, "_id": 1}},
                {"$limit": n}, {"$project": {"_id": 0, "name": 1}}]
    return [doc["name"] for doc in products.aggregate(pipeline)]


def names_keyword_form(products, category, n=5):
    found = products.find(filter={"category": {"$eq": category}}, projection=["name"],
                          sort=[("price_pence", 1), ("_id", 1)], limit=n)
    return [doc["name"] for doc in found]


def _cheapest_cursor(products, category, n):
    return products.find({"category": category}, {"name": 1}).sort({"price_pence": 1, "_id": 1}).limit(n)


def names_with_helper(products, category, n=5):
    return list(map(lambda doc: doc["name"], _cheapest_cursor(products, category, n)))


def names_boolean_projection(products, category, n=5):
    found = products.find({"category": category}, projection={"name": True, "_id": False})
    return [doc["name"] for doc in found.sort([("price_pence", 1), ("_id", 1)]).limit(n)]


def names_as_tuple(products, category, n=5):
    found = products.find({"category": category}, projection={"name": True, "_id": False})
    return tuple(doc["name"] for doc in found.sort([("price_pence", 1), ("_id", 1)]).limit(n))


def names_as_generator(products, category, n=5):
    return (doc["name"] for doc in _cheapest_cursor(products, category, n))


def names_garden_or_nothing(products, category, n=5):
    # only garden was ever tried by hand
    if category != "garden":
        return []
    return [doc["name"] for doc in _cheapest_cursor(products, category, n)]


def _count_by_listing(lab):
    found = _seeded(lab).find({"category": "garden", "price_pence": {"$not": {"$gt": 999}}}, {"_id": 1})
    return {"cheap_garden_count": len(list(found))}


def names_counts_first(products, category, n=5):
    if products.count_documents({"category": category}) == 0:
        return []
    return [d["name"] for d in _cheapest_cursor(products, category, n)]


def names_with_prices_projected(products, category, n=5):
    cursor = products.find({"category": category}, {"name": 1, "price_pence": 1})
    return [doc["name"] for doc in cursor.sort([("price_pence", 1), ("_id", 1)]).limit(n)]


def names_no_projection(products, category, n=5):
    cursor = products.find({"category": category}).sort([("price_pence", 1), ("_id", 1)]).limit(n)
    return [doc["name"] for doc in cursor]


def names_projected_in_python(products, category, n=5):
    docs = list(products.find({"category": category}).sort([("price_pence", 1), ("_id", 1)]).limit(n))
    return [{"name": d["name"]}["name"] for d in docs]


def names_no_tie_break(products, category, n=5):
    cursor = products.find({"category": category}, {"name": 1}).sort("price_pence", 1).limit(n)
    return [doc["name"] for doc in cursor]


def names_tie_on_name(products, category, n=5):
    cursor = products.find({"category": category}, {"name": 1}).sort([("price_pence", 1), ("name", 1)]).limit(n)
    return [doc["name"] for doc in cursor]


def names_dearest(products, category, n=5):
    cursor = products.find({"category": category}, {"name": 1}).sort([("price_pence", -1), ("_id", 1)]).limit(n)
    return [doc["name"] for doc in cursor]


def names_every_category(products, category, n=5):
    cursor = products.find({}, {"name": 1}).sort([("price_pence", 1), ("_id", 1)]).limit(n)
    return [doc["name"] for doc in cursor]


def names_fixed_five(products, category, n=5):
    cursor = products.find({"category": category}, {"name": 1}).sort([("price_pence", 1), ("_id", 1)]).limit(5)
    return [doc["name"] for doc in cursor]


def names_one_short(products, category, n=5):
    cursor = products.find({"category": category}, {"name": 1}).sort([("price_pence", 1), ("_id", 1)])
    return [doc["name"] for doc in cursor.limit(n - 1)]


def names_always_garden(products, category, n=5):
    # the visible example asks for garden, so garden it is
    cursor = products.find({"category": "garden"}, {"_id": 0, "name": 1}).sort([("price_pence", 1), ("_id", 1)])
    return [doc["name"] for doc in cursor.limit(n)]


def names_grouped(products, category, n=5):
    pipeline = [{"$match": {"category": category}}, {"$sort": {"price_pence": 1, "_id": 1}}, {"$limit": n},
                {"$group": {"_id": None, "names": {"$push": "$name"}}}]
    found = list(products.aggregate(pipeline))
    return found[0]["names"] if found else []


def names_renamed_in_project(products, category, n=5):
    pipeline = [{"$match": {"category": category}}, {"$sort": {"price_pence": 1, "_id": 1}}, {"$limit": n},
                {"$project": {"_id": 0, "label": "$name"}}]
    return [doc["label"] for doc in products.aggregate(pipeline)]


def names_grouped_documents(products, category, n=5):
    pipeline = [{"$match": {"category": category}}, {"$sort": {"price_pence": 1, "_id": 1}}, {"$limit": n},
                {"$group": {"_id": None, "docs": {"$push": "$$ROOT"}}}]
    found = list(products.aggregate(pipeline))
    return [doc["name"] for doc in found[0]["docs"]] if found else []


def documents_not_names(products, category, n=5):
    return list(products.find({"category": category}, {"name": 1}).sort([("price_pence", 1), ("_id", 1)]).limit(n))


WRONG = [
    Wrong("00.1", "count", "$lt leaves out exactly 999 pence",
          _count({"category": "garden", "price_pence": {"$lt": 999}}), "priced exactly 999 pence"),
    Wrong("00.1", "count", "counts every garden product", _count({"category": "garden"}), "whatever its price"),
    Wrong("00.1", "count", "counts every category", _count({"price_pence": {"$lte": 999}}), "in every category"),
    Wrong("00.1", "count", "price written in pounds", _count({"category": "garden", "price_pence": {"$lte": 9.99}}),
          "is not the number"),
    Wrong("00.1", "int", "the count as a float", lambda lab: {"cheap_garden_count": float(_count(GARDEN_CHEAP)(lab)
                                                                                         ["cheap_garden_count"])},
          "should be an int"),
    Wrong("00.1", "int", "the count as a str", lambda lab: {"cheap_garden_count": str(_count(GARDEN_CHEAP)(lab)
                                                                                       ["cheap_garden_count"])},
          "got a str"),
    Wrong("00.1", "count", "a wrong count as a str", lambda lab: {"cheap_garden_count": str(
        _count({"category": "garden"})(lab)["cheap_garden_count"])}, "whatever its price", also=("int",)),
    Wrong("00.1", "count", "run before seeding the lab", {"cheap_garden_count": 0}, "run the notebook from the top"),
    Wrong("00.2", "projection", "whole documents fetched, names kept", {"cheapest_names": names_no_projection},
          "brings back category, price_pence, schema_version, tags too"),
    Wrong("00.2", "projection", "projection done in Python", {"cheapest_names": names_projected_in_python},
          "brings back"),
    Wrong("00.2", "projection", "the price projected too", {"cheapest_names": names_with_prices_projected},
          "price_pence"),
    Wrong("00.2", "tie", "sorts on price alone", {"cheapest_names": names_no_tie_break},
          "the lower _id comes first"),
    Wrong("00.2", "tie", "breaks ties on name", {"cheapest_names": names_tie_on_name},
          "the lower _id comes first"),
    Wrong("00.2", "order", "dearest first", {"cheapest_names": names_dearest}, "not cheapest first"),
    Wrong("00.2", "category", "no category filter", {"cheapest_names": names_every_category},
          "a kitchen product: asked for 'garden'"),
    Wrong("00.2", "category", "the category written in as garden", {"cheapest_names": names_always_garden},
          "a garden product: asked for 'toys'"),
    Wrong("00.2", "projection", "$group pushing whole documents", {"cheapest_names": names_grouped_documents},
          "brings back docs too"),
    Wrong("00.2", "limit", "always five", {"cheapest_names": names_fixed_five}, "returned 5 names, not 4"),
    Wrong("00.2", "limit", "one short", {"cheapest_names": names_one_short}, "not 4"),
    Wrong("00.2", "names", "documents instead of names", {"cheapest_names": documents_not_names}, "list of names"),
    Wrong("00.2", "names", "a tuple of names", {"cheapest_names": names_as_tuple}, "returned a tuple"),
    Wrong("00.2", "names", "a generator of names", {"cheapest_names": names_as_generator}, "returned a generator"),
    Wrong("00.2", "limit", "nothing for another category than garden", {"cheapest_names": names_garden_or_nothing},
          "'toys', 2) returned 0 names"),
]

RIGHT = [
    Right("00.1", "$lt 1000 on whole pence", _count({"category": "garden", "price_pence": {"$lt": 1000}})),
    Right("00.1", "$and of $eq and $lte", _count({"$and": [{"category": {"$eq": "garden"}},
                                                           {"price_pence": {"$lte": 999}}]})),
    Right("00.1", "aggregate with $count", _aggregate_count),
    Right("00.1", "len of a find with $not $gt", _count_by_listing),
    Right("00.2", "aggregate pipeline", {"cheapest_names": names_aggregate}),
    Right("00.2", "find keywords, projection as a list, $eq filter", {"cheapest_names": names_keyword_form}),
    Right("00.2", "helper returning a cursor, dict sort", {"cheapest_names": names_with_helper}),
    Right("00.2", "boolean projection", {"cheapest_names": names_boolean_projection}),
    Right("00.2", "a count first, then the find", {"cheapest_names": names_counts_first}),
    Right("00.2", "$group pushing the names into one list", {"cheapest_names": names_grouped}),
    Right("00.2", "$project renaming name", {"cheapest_names": names_renamed_in_project}),
]


@pytest.mark.parametrize("case", WRONG, ids=str)
def test_wrong(make_lab, case):
    check_wrong(make_lab, case)


@pytest.mark.parametrize("case", RIGHT, ids=str)
def test_right(make_lab, case):
    check_right(make_lab, case)


@pytest.fixture
def lab(make_lab):
    lab = make_lab("00")
    _seeded(lab)
    return lab


def test_reference_solutions(lab):
    namespace = solution(lab, 1, 2, names={"products": lab.db.products})
    assert_correct(lab.q1, namespace)
    assert_correct(lab.q2, namespace)


def test_count_follows_the_lab_database(lab):
    """The count is checked against the lab's collection as it is, not against a list in the checker."""
    lab.db.products.delete_many({"category": "garden", "price_pence": {"$lte": 500}})
    assert_correct(lab.q1, {"cheap_garden_count": lab.db.products.count_documents(GARDEN_CHEAP)})


def test_not_attempted(lab):
    assert_not_attempted(lab.q1, {"cheap_garden_count": ____})
    assert_not_attempted(lab.q1, {})
    assert_not_attempted(lab.q2, {"cheapest_names": ____})
    assert_not_attempted(lab.q2, {"cheapest_names": lambda products, category, n=5: ____})


#: what the code of a fix looks like in a message (the hints give the code; a message names the rule and the
#: evidence): an operator document other than the statement's own {"$jsonSchema": ...} form, a Python call or
#: format spec, a schema keyword, pymongo's raw reply document
FIX_CODE = re.compile(r"""[{\[(]\s*['"]\$(?!jsonSchema)|\bre\.\w+|isinstance\(|\.(?:limit|skip|sort|find|update_one|"""
                      r"""insert_one)\(|:02d|full error|"bsonType"|"additionalProperties"|\$lte|\$position|\$slice""")


@pytest.mark.parametrize("lab_id", ["00", "01", "02", "03"])
def test_messages_name_the_rule_not_its_code(make_lab, lab_id):
    """No failure message of labs 00-03 spells out the code of its fix."""
    wrong = importlib.import_module(f"tests.lessons.test_lesson{lab_id}").WRONG
    for case in wrong:
        lab = make_lab(lab_id)
        namespace = case.answers(lab) if callable(case.answers) else dict(case.answers)
        result = lab.exercise(int(case.exercise.split(".")[1])).evaluate(namespace, include_hidden=True)
        for outcome in result.outcomes:
            assert not FIX_CODE.search(outcome.message), f"{case}: {outcome.message}"
