"""Lab 00, start here: the warm-up exercises."""

from __future__ import annotations

from course.datasets import catalog_products
from course.exercise import Exercise, Incorrect, hidden, visible

TITLE = "Start here"
SLUG = "start-here"

#: The lab seeds this many products with this seed; the checks use the same.
PRODUCTS, SEED = 200, 7


def _catalog() -> list[dict]:
    return catalog_products(n=PRODUCTS, seed=SEED)


class CheapGardenCount(Exercise):
    id = "00.1"
    title = "Count the garden products at £9.99 or less"
    answers = ("cheap_garden_count",)
    hints = (
        "Use products.count_documents(filter) with a filter on two fields.",
        "Prices are integers in pence: at most £9.99 means price_pence less than or equal to 999 ($lte).",
    )
    solution_code = """
cheap_garden_count = products.count_documents(
    {"category": "garden", "price_pence": {"$lte": 999}}
)
"""

    @visible(points=1)
    def is_a_whole_number(self, answer):
        """The answer is a whole number"""
        value = answer.cheap_garden_count
        if isinstance(value, bool) or not isinstance(value, int):
            self.expect_type("cheap_garden_count", value, int, "products.count_documents({...})")

    @visible(points=2)
    def counts_the_right_products(self, answer):
        """The count is of garden products at 999 pence or less"""
        catalog = _catalog()
        expected = sum(p["category"] == "garden" and p["price_pence"] <= 999 for p in catalog)
        value = answer.cheap_garden_count
        if value == expected:
            return
        if value == sum(p["category"] == "garden" for p in catalog):
            raise Incorrect("that counts every garden product: add the price condition")
        if value == sum(p["category"] == "garden" and p["price_pence"] < 999 for p in catalog):
            raise Incorrect("'at most £9.99' includes exactly 999 pence: use $lte, not $lt")
        if value == sum(p["price_pence"] <= 999 for p in catalog):
            raise Incorrect("that counts cheap products in every category: filter on category too")
        raise Incorrect(f"{value} is not the number of garden products at 999 pence or less")

    @hidden(points=1)
    def matches_the_lab_database(self, answer):
        """The count agrees with the lab's own products collection"""
        products = self.lab.db.products
        actual = products.count_documents({"category": "garden", "price_pence": {"$lte": 999}})
        if answer.cheap_garden_count != actual:
            raise Incorrect("the count does not match the lab's products collection: "
                            "compute it with count_documents rather than typing a number")


class CheapestGardenNames(Exercise):
    id = "00.2"
    title = "Name the five cheapest garden products"
    answers = ("cheapest_garden_names",)
    hints = (
        "find() with a filter, then .sort(...) and .limit(5); keep only the names.",
        'products.find({"category": "garden"}, {"name": 1}).sort([("price_pence", 1), ("_id", 1)]).limit(5)',
    )
    solution_code = """
cursor = (
    products.find({"category": "garden"}, {"_id": 0, "name": 1})
    .sort([("price_pence", 1), ("_id", 1)])
    .limit(5)
)
cheapest_garden_names = [doc["name"] for doc in cursor]
"""

    @visible(points=1)
    def is_a_list_of_names(self, answer):
        """The answer is a list of five names"""
        value = self.expect_type("cheapest_garden_names", answer.cheapest_garden_names, list,
                                 '["Oak Trowel No. 12", ...]')
        if not all(isinstance(name, str) for name in value):
            raise Incorrect("cheapest_garden_names should hold the product names (strings), not whole documents")
        if len(value) != 5:
            raise Incorrect(f"expected 5 names, got {len(value)}: use .limit(5)")

    @visible(points=2)
    def cheapest_first(self, answer):
        """The names are the cheapest garden products, cheapest first"""
        garden = sorted((p for p in _catalog() if p["category"] == "garden"),
                        key=lambda p: (p["price_pence"], p["_id"]))
        expected = [p["name"] for p in garden[:5]]
        value = answer.cheapest_garden_names
        if value == expected:
            return
        if sorted(value) == sorted(expected):
            raise Incorrect("the right products, in the wrong order: sort by price_pence ascending")
        dearest = [p["name"] for p in reversed(garden[-5:])]
        if value == dearest:
            raise Incorrect("those are the dearest: sort ascending (1), not descending (-1)")
        raise Incorrect("those are not the five cheapest garden products")

    @hidden(points=1)
    def reads_only(self, answer):
        """Answering only read: the lab's products collection still holds the seeded catalog"""
        products = self.lab.db.products
        if products.count_documents({}) != PRODUCTS:
            raise Incorrect(f"the lab's products collection should still hold {PRODUCTS} products: "
                            "this exercise only reads (re-run the notebook from the top)")


EXERCISES = (CheapGardenCount, CheapestGardenNames)
