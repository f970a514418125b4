"""Lab 01, exercise 01.4: a price feed that writes only the price.

Its checks call ``update_price`` through a recording wrapper with a race
injector: when the learner's code reads the product and then writes, another
writer renames the product in between, as a competing client would.  A single
``$set`` of ``price_pence`` (``update_one``, ``update_many`` on the ``_id``,
``find_one_and_update``, a one-operation ``bulk_write``) keeps that change; a
read-modify-write that sends the whole document back undoes it.
"""

from __future__ import annotations

import functools
from typing import Any

from course.datasets.catalog import catalog_products
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.engine.recording import RecordingCollection

SEED = 7
FEED_PRODUCTS = 12  #: the small catalog the checks use
UNKNOWN_ID = 999_999
RACE_NAME = "Renamed by the catalog team"


@functools.cache
def feed_catalog() -> tuple[dict, ...]:
    """The products the price-feed checks start from (generated once)."""
    return tuple(catalog_products(n=FEED_PRODUCTS, seed=SEED))


def _stored(product_id: int) -> dict:
    return next(p for p in feed_catalog() if p["_id"] == product_id)


class UpdatePrice(Exercise):
    id = "01.4"
    title = "A price feed that writes only the price"
    answers = ("update_price",)
    requirements = {
        "validate": "raises TypeError or ValueError for anything but a non-negative int (a str, a float such as "
                    "2499.0, a bool, a negative number), before writing; 0 is a price",
        "set": "sets price_pence to the new price and changes no other field, even when another writer changes "
               "the product between your read and your write",
        "no_create": "never creates a product (no upsert)",
        "returns": "returns True when the product exists (also when the price was already that), False "
                   "otherwise: a bool",
    }
    hints = (
        "update_one with {'$set': {'price_pence': ...}} changes one field and leaves the rest alone.",
        "Check the value before writing: an int (not a bool, str or float) that is not negative.",
        "Return result.matched_count == 1, and do not upsert: the feed must not create products.",
    )
    solution_code = """
def update_price(products, product_id, price_pence):
    \"\"\"Set one product's price; return True if the product exists.\"\"\"
    if isinstance(price_pence, bool) or not isinstance(price_pence, int):
        raise TypeError(f"price_pence must be an int, got {price_pence!r}")
    if price_pence < 0:
        raise ValueError(f"price_pence must not be negative, got {price_pence}")
    result = products.update_one({"_id": product_id}, {"$set": {"price_pence": price_pence}})
    return result.matched_count == 1
"""

    def _products(self, race: bool = False) -> RecordingCollection:
        """A fresh scratch catalog behind a recording wrapper (with the renaming race if asked)."""
        products = self.lab.scratch().products
        products.insert_many([dict(p) for p in feed_catalog()])
        if not race:
            return RecordingCollection(products)
        return RecordingCollection(products, race=lambda: products.update_many({}, {"$set": {"name": RACE_NAME}}))

    def _accepts_zero(self, answer) -> None:
        raised = self.raised("update_price", answer.update_price, self._products(), 9, 0)
        if raised is not None:
            raise Incorrect(f"update_price(products, 9, 0) raised {raised.type_name}: 0 is a non-negative int")

    def _rejects(self, answer, bad_prices: tuple[Any, ...]) -> None:
        for bad in bad_prices:
            products = self._products()
            raised = self.raised("update_price", answer.update_price, products, 9, bad)
            if raised is None:
                raise Incorrect(f"update_price(products, 9, {bad!r}) returned instead of raising: {bad!r} is "
                                "not a non-negative int, and the feed refuses anything else with TypeError or "
                                "ValueError")
            if not (raised.is_a("TypeError") or raised.is_a("ValueError")):
                raise Incorrect(f"update_price(products, 9, {bad!r}) raised {raised.type_name}: the statement "
                                "names TypeError or ValueError for a price that is not a non-negative int")
            if products.wrapped.find_one({"_id": 9}) != _stored(9):
                raise Incorrect(f"update_price(products, 9, {bad!r}) raised, but only after changing the "
                                "product: a bad price is refused before anything is written")

    def _sets(self, answer, product_id: int, price: int) -> None:
        products = self._products(race=True)
        self.call("update_price", answer.update_price, products, product_id, price)
        after = products.wrapped.find_one({"_id": product_id}) or {}
        call = f"update_price(products, {product_id}, {price})"
        if after.get("price_pence") != price:
            raise Incorrect(f"after {call} product {product_id}'s price_pence is {after.get('price_pence')!r}, "
                            f"not {price}")
        before = dict(_stored(product_id), name=RACE_NAME if products.raced else _stored(product_id)["name"])
        changed = sorted(str(k) for k in set(before) | set(after)
                         if k != "price_pence" and before.get(k) != after.get(k))
        if products.raced and after.get("name") != RACE_NAME:
            raise Incorrect(f"another writer renamed the product between your read and your write, and {call} "
                            f"wrote the old name back ({_stored(product_id)['name']!r}): the feed may change the "
                            "price and nothing else, whatever else happens to the product meanwhile")
        if changed:
            raise Incorrect(f"{call} changed {', '.join(changed)} too: the feed only sends prices")

    # -- visible ------------------------------------------------------------------
    @visible(points=2, checks="validate")
    def rejects_bad_prices(self, answer):
        """A str, a float (also a whole one), a bool and a negative price are refused before writing; 0 is accepted"""
        self._rejects(answer, ("2499", 24.99, 2499.0, True, -5))
        self._accepts_zero(answer)

    @visible(points=3, checks="set")
    def sets_only_the_price(self, answer):
        """The price changes and nothing else does, even with another writer at work"""
        self._sets(answer, 5, 1999)

    @visible(points=1, checks="no_create")
    def creates_nothing(self, answer):
        """A price for an unknown product creates nothing"""
        products = self._products()
        self.call("update_price", answer.update_price, products, UNKNOWN_ID, 1000)
        if products.wrapped.count_documents({}) != FEED_PRODUCTS:
            raise Incorrect(f"update_price(products, {UNKNOWN_ID}, 1000) created a product: "
                            "the feed never creates a product")

    @visible(points=1, checks="returns")
    def tells_whether_it_exists(self, answer):
        """True for an existing product, even at an unchanged price; False for an unknown one"""
        products = self._products()
        same = _stored(3)["price_pence"]
        for product_id, price, wanted in ((4, 1500, True), (3, same, True), (UNKNOWN_ID, 1000, False)):
            got = self.call("update_price", answer.update_price, products, product_id, price)
            if got is not wanted:
                note = " (its price already was that: the product still exists)" if product_id == 3 else ""
                raise Incorrect(f"update_price(products, {product_id}, {price}) returned {got!r}, "
                                f"not {wanted}{note}")

    # -- hidden: the same rules at the boundaries -------------------------------
    @hidden(points=1, checks="validate")
    def rejects_the_boundaries(self, answer):
        """Another whole float, False, None and -1 are rejected"""
        self._rejects(answer, (1999.0, False, None, -1))

    @hidden(points=1, checks="set")
    def another_product(self, answer):
        """Another product, another price"""
        self._sets(answer, 11, 12_345)
