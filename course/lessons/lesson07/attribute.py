"""Lesson 07, exercise 07.1: the attribute pattern, many similar fields as ``{k, v}`` pairs under one index.

The seeded products hold the trap the lesson warns about: product 2 is blue with a red trim, so a query
that matches ``k`` and ``v`` in different entries of ``attrs`` finds it among the red products.  The
searches run on the products inserted in a shuffled order (a fixed one), so a result in the collection's
natural order is not sorted by chance.
"""

from __future__ import annotations

import random

from course.datasets.more_patterns import attribute_products
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04.common import data, ordered, seeded
from course.lessons.lesson06.text import clipped
from course.toolkit.plans import index_keys


#: the order the searches' products are inserted in: neither ascending nor descending by _id
SHUFFLE_SEED = 7107


def _shuffled(products: list[dict]) -> list[dict]:
    """``products`` in a fixed shuffled order, so natural order differs from ``_id`` order."""
    found = list(products)
    random.Random(SHUFFLE_SEED).shuffle(found)
    return found


def _expected(products: list[dict], k: str, v) -> list:
    return sorted(p["_id"] for p in products if any(a == {"k": k, "v": v} for a in p["attrs"]))


class Attribute(Exercise):
    id = "07.1"
    title = "Attribute: specs as key-value pairs, one index for all of them"
    answers = ("create_attribute_index", "find_by_attribute")
    requirements = {
        "index": "db.products gets one compound index on attrs.k then attrs.v",
        "same_entry": "find_by_attribute finds the products with one entry of attrs whose k and v are both the "
                      "given ones (a k from one entry and a v from another do not count)",
        "ids": "find_by_attribute returns the products' _id values as a list sorted ascending ([] when none)",
    }
    hints = (
        "create_index takes a list of (field, direction) pairs: attrs.k first, then attrs.v.",
        "{'attrs.k': k, 'attrs.v': v} lets each condition match a different entry; $elemMatch makes one entry "
        "meet both.",
        "Return [p['_id'] for p in products.find(query, {'_id': 1}).sort('_id', 1)].",
    )
    solution_code = """
def create_attribute_index(db):
    \"\"\"One index that serves a search on any attribute.\"\"\"
    db.products.create_index([("attrs.k", 1), ("attrs.v", 1)])


def find_by_attribute(products, k, v):
    \"\"\"The _ids of the products with attribute k equal to v, sorted.\"\"\"
    query = {"attrs": {"$elemMatch": {"k": k, "v": v}}}
    return [p["_id"] for p in products.find(query, {"_id": 1}).sort("_id", 1)]
"""

    def _found(self, answer, k, v):
        products = data(attribute_products)
        db = seeded(self.lab, products=_shuffled(products))
        got = self.call("find_by_attribute", answer.find_by_attribute, db.products, k, v)
        return products, got

    @staticmethod
    def _loose(got) -> list:
        """The ids in whatever the learner returned (a list, set or documents), for the same_entry rule."""
        if isinstance(got, (dict, str, bytes)) or not hasattr(got, "__iter__"):
            raise Incorrect(f"find_by_attribute should return a list of _id values; got {clipped(got, 80)}")
        return [x.get("_id") if isinstance(x, dict) else x for x in got]

    def _check_entry(self, answer, k, v):
        products, got = self._found(answer, k, v)
        got = ordered(self._loose(got))
        want = _expected(products, k, v)
        if got != want:
            extra = [x for x in got if x not in want]
            detail = (f"; product {extra[0]} has no single entry with k {k!r} and v {v!r} (they are in different "
                      f"entries: match both in one entry with $elemMatch)") if extra else ""
            raise Incorrect(f"find_by_attribute(products, {k!r}, {v!r}) found {got}, expected {want}{detail}")

    @visible(points=2, checks="same_entry")
    def red_products(self, answer):
        """color red: only products whose color entry says red (product 2 has a red trim)"""
        self._check_entry(answer, "color", "red")

    @hidden(points=1, checks="same_entry")
    def other_pairs(self, answer):
        """size M, a number-valued weight, and a pair nobody has"""
        products = data(attribute_products)
        weight = next(a["v"] for p in products for a in p["attrs"] if a["k"] == "weightGrams")
        for k, v in (("size", "M"), ("weightGrams", weight), ("color", "purple")):
            self._check_entry(answer, k, v)

    def _check_ids(self, answer, k, v):
        _, got = self._found(answer, k, v)
        if not isinstance(got, list):
            raise Incorrect(f"find_by_attribute(products, {k!r}, {v!r}) should return a list of _id values; "
                            f"got a {type(got).__name__}: {clipped(got, 80)}")
        if any(isinstance(x, dict) for x in got):
            raise Incorrect(f"find_by_attribute should return the products' _id values, not documents: got "
                            f"{clipped(got, 80)}")
        if got != ordered(got):
            raise Incorrect(f"find_by_attribute(products, {k!r}, {v!r}) returned {got}: sort the _ids ascending")

    @visible(points=1, checks="ids")
    def sorted_ids(self, answer):
        """size S: a list of _id values, sorted"""
        self._check_ids(answer, "size", "S")

    @hidden(points=1, checks="ids")
    def nothing_found(self, answer):
        """A pair no product has: an empty list"""
        self._check_ids(answer, "color", "purple")

    def _check_index(self, answer, products):
        db = seeded(self.lab, products=products)
        self.call("create_attribute_index", answer.create_attribute_index, db)
        keys = [[f for f, _ in k] for name, k in index_keys(db.products).items() if name != "_id_"]
        if not any(k[:2] == ["attrs.k", "attrs.v"] for k in keys):
            raise Incorrect(f"db.products should get one index on attrs.k then attrs.v; its indexes are on "
                            f"{keys or 'nothing but _id'}")

    @visible(points=2, checks="index")
    def attribute_index(self, answer):
        """db.products has an index on attrs.k then attrs.v"""
        self._check_index(answer, data(attribute_products))

    @hidden(points=1, checks="index")
    def index_on_empty_collection(self, answer):
        """The index is made on a collection that holds no products yet"""
        self._check_index(answer, [])
