"""The simulated planner against the documented planner behaviour, and explain parsing."""

import pytest

from course.toolkit.plans import PlanSummary, classify_filter, plan_for, simulate, summarise_explain

ID = {"_id_": [("_id", 1)]}
CATALOG = {**ID, "category_1_name_1": [("category", 1), ("name", 1)], "price_pence_1": [("price_pence", 1)]}


@pytest.mark.parametrize("query, sort, indexes, expected", [
    # no usable index: a collection scan, and a blocking sort if there is a sort
    ({"category": "k"}, [("name", 1)], ID, ("COLLSCAN", None, True)),
    ({"tags": "eco"}, None, CATALOG, ("COLLSCAN", None, False)),
    # equality then sort: the compound index serves both, in either direction
    ({"category": "k"}, [("name", 1)], CATALOG, ("IXSCAN", "category_1_name_1", False)),
    ({"category": "k"}, [("name", -1)], CATALOG, ("IXSCAN", "category_1_name_1", False)),
    # a non-prefix field cannot use the compound index
    ({"name": "x"}, None, CATALOG, ("COLLSCAN", None, False)),
    # a range on an index's first field uses it, but the sort on another field is blocking
    ({"price_pence": {"$lt": 500}}, [("name", 1)], CATALOG, ("IXSCAN", "price_pence_1", True)),
    # _id equality
    ({"_id": 5}, None, CATALOG, ("IXSCAN", "_id_", False)),
    # equality, sort, range beats equality, range, sort
    ({"category": "k", "price_pence": {"$gte": 100}}, [("name", 1)],
     {**ID, "c_p_n": [("category", 1), ("price_pence", 1), ("name", 1)],
      "c_n_p": [("category", 1), ("name", 1), ("price_pence", 1)]}, ("IXSCAN", "c_n_p", False)),
    # mixed directions must match the index or its reverse
    ({"category": "k"}, [("name", 1), ("price_pence", -1)],
     {**ID, "c_n_p": [("category", 1), ("name", -1), ("price_pence", 1)]}, ("IXSCAN", "c_n_p", False)),
    ({"category": "k"}, [("name", 1), ("price_pence", 1)],
     {**ID, "c_n_p": [("category", 1), ("name", -1), ("price_pence", 1)]}, ("IXSCAN", "c_n_p", True)),
    # a sort alone can use an index that starts with the sort field
    ({}, [("price_pence", 1)], CATALOG, ("IXSCAN", "price_pence_1", False)),
])
def test_simulated_choices(query, sort, indexes, expected):
    plan = simulate(query, sort, indexes)
    assert (plan.stage, plan.index, plan.in_memory_sort) == expected
    assert plan.source == "simulated" and "simulated" in str(plan)


def test_filter_classification():
    assert classify_filter({"a": 1, "b": {"$eq": 2}, "c": {"$gt": 1}, "d": {"$in": [1]}}) == ({"a", "b", "d"}, {"c"})
    assert classify_filter({"$and": [{"a": 1}, {"b": {"$lt": 3}}]}) == ({"a"}, {"b"})
    with pytest.raises(ValueError, match=r"\$or"):
        classify_filter({"$or": [{"a": 1}, {"b": 2}]})


def test_summarise_classic_and_sbe_explain_shapes():
    classic = {"queryPlanner": {"winningPlan": {"stage": "FETCH", "inputStage": {
        "stage": "IXSCAN", "indexName": "category_1_name_1"}}}}
    assert summarise_explain(classic) == PlanSummary("IXSCAN", "category_1_name_1", False, "server")
    sbe = {"queryPlanner": {"winningPlan": {"queryPlan": {"stage": "SORT", "inputStage": {
        "stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": "price_pence_1"}}}}}}
    assert summarise_explain(sbe) == PlanSummary("IXSCAN", "price_pence_1", True, "server")
    collscan = {"queryPlanner": {"winningPlan": {"stage": "COLLSCAN"}}}
    assert summarise_explain(collscan).stage == "COLLSCAN"
    express = {"queryPlanner": {"winningPlan": {"stage": "EXPRESS_IXSCAN", "keyPattern": {"_id": 1}}}}
    assert summarise_explain(express).index == "_id_"
    assert "simulated" not in str(summarise_explain(classic))


def test_plan_for_reads_the_collections_indexes(make_lab):
    lab = make_lab("01")
    products = lab.db.products
    products.insert_many([{"_id": i, "category": "k", "name": f"n{i}"} for i in range(5)])
    before = plan_for(products, lab.backend, {"category": "k"}, [("name", 1)])
    assert before.stage == "COLLSCAN"
    products.create_index([("category", 1), ("name", 1)])
    after = plan_for(products, lab.backend, {"category": "k"}, [("name", 1)])
    assert (after.stage, after.index, after.in_memory_sort) == ("IXSCAN", "category_1_name_1", False)


def test_partial_index_serves_only_queries_that_contain_its_filter():
    from course.toolkit.plans import simulate

    indexes = {"_id_": [("_id", 1)], "isbn_books": [("specs.isbn", 1)]}
    partial = {"isbn_books": {"kind": "book"}}
    assert simulate({"specs.isbn": "978"}, None, indexes, partial).stage == "COLLSCAN"
    assert simulate({"specs.isbn": "978", "kind": "book"}, None, indexes, partial).index == "isbn_books"
    assert simulate({"specs.isbn": "978", "kind": {"$eq": "book"}}, None, indexes, partial).index == "isbn_books"
    assert simulate({"specs.isbn": "978", "kind": "phone"}, None, indexes, partial).stage == "COLLSCAN"
