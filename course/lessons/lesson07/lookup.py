"""Lesson 07, exercise 07.7: a ``$lookup`` for the order screen, filtered before it joins.

The learner returns the pipeline itself (plain data); the checks run it on seeded orders and customers
and read its first stage.  A server's optimizer moves a ``$match`` that does not use the ``$lookup``'s ``as``
field ahead of the join by itself (the manual's "Aggregation Pipeline Optimization" page); the statement asks
for the order to be written down all the same, so that the join runs only for the listed orders whatever
engine or optimizer runs the pipeline.
"""

from __future__ import annotations

import random

from course.datasets.more_patterns import shop_customers, shop_orders
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04.common import data, seeded
from course.lessons.lesson06.text import clipped

ROW_FIELDS = ("_id", "total", "customerName")


def shuffled_orders() -> list[dict]:
    """The seeded orders in a fixed shuffled order, so that their natural order is not their ``_id`` order."""
    orders = data(shop_orders)
    random.Random(707).shuffle(orders)
    return orders


def expected_rows(order_ids) -> list[dict]:
    """The order screen's rows for ``order_ids``, in ``_id`` order, from the seeded data (pure)."""
    names = {c["_id"]: c["name"] for c in shop_customers()}
    return [{"_id": o["_id"], "total": o["total"], "customerName": names[o["customerId"]]}
            for o in shop_orders() if o["_id"] in set(order_ids)]


class Lookup(Exercise):
    id = "07.7"
    title = "$lookup: the order screen's join, filtered first"
    answers = ("order_rows",)
    requirements = {
        "rows": "run on db.orders, the pipeline gives one row {_id, total, customerName} per order listed, "
                "customerName taken from db.customers, and nothing more",
        "match_first": "the pipeline's first stage is a $match on the listed _ids, so the join runs only for them "
                       "as written, without relying on an optimizer to move the filter",
        "sorted": "the rows come sorted by _id",
    }
    hints = (
        "Stages: $match {'_id': {'$in': order_ids}}, $lookup from customers (localField customerId, foreignField "
        "_id), then $project.",
        "$lookup gives an array: {'$first': '$customer.name'} (or $arrayElemAt, or $unwind first) takes the name.",
        "End with {'$sort': {'_id': 1}}.",
    )
    solution_code = """
def order_rows(order_ids):
    \"\"\"The pipeline for db.orders: the listed orders with their customer's name.\"\"\"
    return [
        {"$match": {"_id": {"$in": order_ids}}},
        {"$lookup": {"from": "customers", "localField": "customerId", "foreignField": "_id", "as": "customer"}},
        {"$project": {"total": 1, "customerName": {"$first": "$customer.name"}}},
        {"$sort": {"_id": 1}},
    ]
"""

    def _pipeline(self, answer, order_ids):
        pipeline = self.call("order_rows", answer.order_rows, list(order_ids))
        if not isinstance(pipeline, list) or not all(isinstance(stage, dict) for stage in pipeline):
            raise Incorrect(f"order_rows should return a pipeline, a list of stage dicts; got {clipped(pipeline, 100)}")
        return pipeline

    def _rows(self, answer, order_ids):
        pipeline = self._pipeline(answer, order_ids)
        db = seeded(self.lab, orders=shuffled_orders(), customers=data(shop_customers))
        return list(db.orders.aggregate(pipeline))

    def _check_rows(self, answer, order_ids):
        got = self._rows(answer, order_ids)
        want = {row["_id"]: row for row in expected_rows(order_ids)}
        ids = [row.get("_id") for row in got]
        if sorted(ids, key=str) != sorted(want, key=str):
            raise Incorrect(f"for orders {list(order_ids)} the pipeline gave rows for orders {ids}")
        for row in got:
            extra = sorted(set(row) - set(ROW_FIELDS))
            if extra:
                raise Incorrect(f"the row of order {row['_id']} has {', '.join(extra)} too: a row holds only "
                                "_id, total and customerName")
            if row != want[row["_id"]]:
                raise Incorrect(f"the row of order {row['_id']} is {clipped(row, 120)}, expected {want[row['_id']]!r}: "
                                "customerName is the name of the customer the order's customerId names")

    @visible(points=2, checks="rows")
    def three_orders(self, answer):
        """Orders 3, 7 and 12: their totals and customers' names"""
        self._check_rows(answer, [12, 3, 7])

    @hidden(points=1, checks="rows")
    def many_orders(self, answer):
        """Twenty orders, and an id no order has"""
        self._check_rows(answer, list(range(40, 60)) + [999])

    def _check_first(self, answer, order_ids):
        pipeline = self._pipeline(answer, order_ids)
        first = pipeline[0] if pipeline else {}
        if "$match" not in first:
            where = next((k for k, stage in enumerate(pipeline) if "$match" in stage), None)
            raise Incorrect("the pipeline's first stage should be the $match on the listed _ids" +
                            (f"; it is stage {where + 1}: a server's optimizer moves a filter that does not use the "
                             "join's result ahead of the $lookup, but an engine that runs the stages as written "
                             "joins every order in the collection first" if where is not None
                             else f"; it starts with {list(first) or 'nothing'}"))
        db = seeded(self.lab, orders=data(shop_orders))
        passed = [row.get("_id") for row in db.orders.aggregate(pipeline[:1])]
        listed = [o["_id"] for o in data(shop_orders) if o["_id"] in set(order_ids)]
        if sorted(passed, key=str) != sorted(listed, key=str):
            extra = [i for i in passed if i not in listed]
            raise Incorrect(f"the first stage, {clipped(first, 100)}, lets {len(passed)} orders through for orders "
                            f"{list(order_ids)}" + (f" (order {extra[0]} too)" if extra else "")
                            + ": it should keep exactly the listed _ids, so the join runs only for them")

    @visible(points=1, checks="match_first")
    def match_comes_first(self, answer):
        """The first stage is the $match"""
        self._check_first(answer, [12, 3, 7])

    @hidden(points=1, checks="match_first")
    def match_first_for_one(self, answer):
        """One order: still a $match first"""
        self._check_first(answer, [5])

    def _check_sorted(self, answer, order_ids):
        ids = [row.get("_id") for row in self._rows(answer, order_ids)]
        if ids != sorted(ids, key=str) and ids != sorted(ids):
            raise Incorrect(f"the rows came in the order {ids}, not in _id order (the orders are not stored in "
                            "_id order)")
        if not any("$sort" in stage for stage in self._pipeline(answer, order_ids)):
            raise Incorrect(f"the rows came in the order {ids} only because this engine read them so: the pipeline "
                            "has no stage that sorts, and a server may return them in any order (by the index it "
                            "uses for the filter, for one)")

    @visible(points=1, checks="sorted")
    def sorted_rows(self, answer):
        """Orders listed out of order, stored out of order too, come back sorted by _id"""
        self._check_sorted(answer, [12, 3, 7, 30, 1])

    @hidden(points=1, checks="sorted")
    def sorted_many(self, answer):
        """Twenty orders listed backwards"""
        self._check_sorted(answer, list(range(59, 39, -1)))
