"""Lab 00, start here: the warm-up exercises.

00.1 is a value computed in the notebook, checked against the lab's own
``products`` collection.  00.2 is a function, so its checks call it on small
catalogs built for the purpose: prices that tie (the ``_id`` tie-break must
show), another category, other sizes.
"""

from __future__ import annotations

import functools

from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson01.reads import (document_reads, fields_beyond, is_a_list, returned_documents,
                                          returned_type)
from course.engine.recording import RecordingCollection

TITLE = "Start here"
SLUG = "start-here"

#: The lab seeds this many products with this seed.
PRODUCTS, SEED = 200, 7
CHEAP_PENCE = 999  #: "£9.99 or less"
#: the field a read may bring back besides the names (it comes unless excluded; a $group's key is there too)
ID_FIELD = "_id"


def _as_number(value):
    """The number ``value`` stands for (an int or float as it is, a str such as "12" read as one), else None.

    The count and its type are two requirements: "12" is the right number in the wrong type, and only
    the type check says so.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        for kind in (int, float):
            try:
                return kind(value.strip())
            except ValueError:
                continue
    return None


class CheapGardenCount(Exercise):
    id = "00.1"
    fixed_answer = True  #: a value computed once, in the notebook: nothing to vary
    title = "Count the garden products at £9.99 or less"
    answers = ("cheap_garden_count",)
    requirements = {
        "int": "cheap_garden_count is an int (a whole number, not a str or a float)",
        "count": "it is the number of garden products with price_pence at most 999 in the lab's products",
    }
    hints = (
        "Use products.count_documents(filter) with a filter on two fields.",
        "Prices are integers in pence: at most £9.99 means price_pence less than or equal to 999 ($lte).",
    )
    solution_code = """
cheap_garden_count = products.count_documents(
    {"category": "garden", "price_pence": {"$lte": 999}}
)
"""

    @visible(points=1, checks="int")
    def is_an_int(self, answer):
        """The answer is an int"""
        value = answer.cheap_garden_count
        if isinstance(value, bool) or not isinstance(value, int):
            self.expect_type("cheap_garden_count", value, int, "12")

    @visible(points=3, checks="count")
    def counts_the_right_products(self, answer):
        """The count is of the garden products at 999 pence or less in the lab's products collection"""
        products = self.lab.db.products
        if products.estimated_document_count() == 0:
            raise Incorrect("the lab's products collection is empty: run the notebook from the top")
        shown = answer.cheap_garden_count
        value = _as_number(shown)  # its type is the "int" requirement's business
        if value is not None \
                and value == products.count_documents({"category": "garden", "price_pence": {"$lte": CHEAP_PENCE}}):
            return
        if value == products.count_documents({"category": "garden"}):
            raise Incorrect(f"{shown!r} is the number of every garden product, whatever its price: the question "
                            "counts only those at £9.99 or less")
        if value == products.count_documents({"category": "garden", "price_pence": {"$lt": CHEAP_PENCE}}):
            exactly = products.count_documents({"category": "garden", "price_pence": CHEAP_PENCE})
            which = "the garden product" if exactly == 1 else f"the {exactly} garden products"
            raise Incorrect(f"{shown!r} leaves out {which} priced exactly 999 pence: 'at most £9.99' includes "
                            "£9.99 itself")
        if value == products.count_documents({"price_pence": {"$lte": CHEAP_PENCE}}):
            raise Incorrect(f"{shown!r} is the number of products at £9.99 or less in every category: the "
                            "question counts garden products only")
        raise Incorrect(f"{shown!r} is not the number of garden products at 999 pence or less "
                        "in the lab's products collection")


# ---------------------------------------------------------------------------
def _product(product_id: int, category: str, price: int) -> dict:
    # names sort against the _id order, so a tie broken on name differs from one broken on _id
    return {"_id": product_id, "schema_version": 2, "name": f"{chr(ord('Z') - product_id % 26)} Item No. {product_id}",
            "category": category, "price_pence": price, "tags": ["gift"]}


@functools.cache
def tied_catalog() -> tuple[dict, ...]:
    """A small catalog whose cheapest garden products tie on price.

    Ties come in with the higher ``_id`` first and names that sort against the ``_id``,
    so neither insertion order nor a name tie-break gives the ``_id`` order; a tie also
    straddles the fifth place.  Some kitchen products are cheaper than every garden one.
    """
    rows = [  # (_id, category, price)
        (14, "garden", 299), (6, "garden", 299), (9, "garden", 450), (21, "garden", 199),
        (30, "garden", 650), (12, "garden", 650), (3, "garden", 650), (17, "garden", 900),
        (25, "garden", 1200), (2, "garden", 5000),
        (40, "kitchen", 99), (41, "kitchen", 150), (42, "kitchen", 150), (43, "kitchen", 7000),
        (50, "toys", 350), (51, "toys", 350),
    ]
    return tuple(_product(*row) for row in rows)


def _expected(category: str, n: int) -> list[dict]:
    mine = sorted((p for p in tied_catalog() if p["category"] == category),
                  key=lambda p: (p["price_pence"], p["_id"]))
    return mine[:n]


class CheapestNames(Exercise):
    id = "00.2"
    title = "Name the cheapest products of a category"
    answers = ("cheapest_names",)
    requirements = {
        "names": "cheapest_names returns a list (not a tuple, cursor or other iterable) of names (str), not "
                 "documents",
        "category": "only products of the given category",
        "order": "the cheapest first: no product of the category left out is cheaper than one returned",
        "tie": "products of the same price come in _id order, the lower _id first (also at the cut)",
        "limit": "n names when asked for n",
        "projection": "it asks the database for the names only: what its read brings back holds the names "
                      "(and _id) and nothing else",
    }
    hints = (
        "find() with a filter and a projection, then .sort(...) and .limit(n); keep only the names.",
        "Sort on two keys: [(\"price_pence\", 1), (\"_id\", 1)]. The projection {\"name\": 1} keeps the rest "
        "of each document on the server.",
    )
    solution_code = """
def cheapest_names(products, category, n=5):
    \"\"\"The names of the n cheapest products of category, cheapest first, ties by _id.\"\"\"
    cursor = (
        products.find({"category": category}, {"_id": 0, "name": 1})
        .sort([("price_pence", 1), ("_id", 1)])
        .limit(n)
    )
    return [doc["name"] for doc in cursor]
"""

    def _call_on_tied(self, answer, category: str, n: int):
        """Call cheapest_names on a fresh copy of the tied catalog.

        Returns (the recorded collection, what it returned, that as a list, the product each item names).
        """
        products = RecordingCollection(self.lab.scratch().products)
        products.wrapped.insert_many([dict(p) for p in tied_catalog()])
        returned = self.call("cheapest_names", answer.cheapest_names, products, category, n)
        try:
            got = [returned] if isinstance(returned, (str, bytes, dict)) else list(returned)
        except TypeError:
            got = [returned]
        by_name = {p["name"]: p for p in tied_catalog()}
        by_id = {p["_id"]: p for p in tied_catalog()}
        found = []
        for item in got:  # every check but "names" reads a document's name too
            key = item.get("name", item.get("_id")) if isinstance(item, dict) else item
            product = by_name.get(key) if isinstance(key, str) else by_id.get(key)
            found.append(product)
        return products, returned, got, found

    def _names(self, answer, category: str, n: int):
        _, returned, got, _ = self._call_on_tied(answer, category, n)
        if isinstance(returned, (str, bytes, dict)) or not all(isinstance(name, str) for name in got):
            shown = next((x for x in got if not isinstance(x, str)), returned)
            raise Incorrect(f"cheapest_names should return a list of names (str), got an item {shown!r:.80}: "
                            "a name is the string itself, not a document that holds it")
        if not is_a_list(returned):  # the other checks read the items of any iterable
            raise Incorrect(f"cheapest_names(products, {category!r}, {n}) returned a {returned_type(returned)} "
                            "of names: the statement asks for a list")

    def _category(self, answer, category: str, n: int):
        _, _, got, found = self._call_on_tied(answer, category, n)
        for item, product in zip(got, found):
            if product is None or product["category"] != category:
                what = f"a {product['category']} product" if product else "not a product of the catalog"
                raise Incorrect(f"cheapest_names(products, {category!r}, {n}) returned {item!r:.60}, {what}: "
                                f"asked for {category!r}, only products of that category may come back")

    def _order(self, answer, category: str, n: int):
        _, _, _, found = self._call_on_tied(answer, category, n)
        mine = [p for p in found if p is not None]  # each judged within its own category
        call = f"cheapest_names(products, {category!r}, {n})"
        prices = [p["price_pence"] for p in mine]
        if prices != sorted(prices):
            raise Incorrect(f"{call}: the prices of the products it names go {prices}, not cheapest first")
        returned = {p["_id"] for p in mine}
        for kind in dict.fromkeys(p["category"] for p in mine):
            dearest = max((p for p in mine if p["category"] == kind), key=lambda p: p["price_pence"])
            cheaper = sorted((p for p in tied_catalog() if p["category"] == kind and p["_id"] not in returned
                              and p["price_pence"] < dearest["price_pence"]), key=lambda p: p["price_pence"])
            if cheaper:
                raise Incorrect(f"{call} leaves out {cheaper[0]['name']!r} ({cheaper[0]['price_pence']} pence) "
                                f"but names {dearest['name']!r} ({dearest['price_pence']} pence): the n cheapest "
                                "come back, cheapest first")

    def _tie(self, answer, category: str, n: int):
        _, _, _, found = self._call_on_tied(answer, category, n)
        mine = [p for p in found if p is not None]  # each judged within its own category
        call = f"cheapest_names(products, {category!r}, {n})"
        for first, second in zip(mine, mine[1:]):
            if first["price_pence"] == second["price_pence"] and first["_id"] > second["_id"]:
                raise Incorrect(f"{call}: two products cost {first['price_pence']} pence and the one with _id "
                                f"{first['_id']} comes before _id {second['_id']}: at the same price the lower "
                                "_id comes first")
        if mine:
            last = mine[-1]
            returned = {p["_id"] for p in mine}
            passed_over = [p for p in tied_catalog() if p["category"] == last["category"]
                           and p["_id"] not in returned and p["price_pence"] == last["price_pence"]
                           and p["_id"] < last["_id"]]
            if passed_over:
                raise Incorrect(f"{call}: at the cut, _id {last['_id']} is in and _id {passed_over[0]['_id']} at "
                                "the same price is out: at the same price the lower _id comes first, also "
                                "when only one of them fits")

    def _limit(self, answer, category: str, n: int):
        _, _, got, _ = self._call_on_tied(answer, category, n)
        wanted = len(_expected(category, n))
        if len(got) != wanted:
            raise Incorrect(f"cheapest_names(products, {category!r}, {n}) returned {len(got)} names, "
                            f"not {wanted}: asked for n names it returns n (fewer only when the category has "
                            "fewer products)")

    # -- visible: every requirement, on the tied catalog -----------------------
    @visible(points=1, checks="names")
    def returns_names(self, answer):
        """It returns a list of names"""
        self._names(answer, "garden", 5)

    @visible(points=1, checks="category")
    def only_the_category(self, answer):
        """Only garden products when asked for garden, only toys when asked for toys"""
        self._category(answer, "garden", 5)
        self._category(answer, "toys", 2)

    @visible(points=2, checks="order")
    def cheapest_first(self, answer):
        """The five cheapest garden products and the three cheapest kitchen ones, cheapest first"""
        self._order(answer, "garden", 5)
        self._order(answer, "kitchen", 3)

    @visible(points=1, checks="tie")
    def ties_by_id(self, answer):
        """Equal prices come in _id order"""
        self._tie(answer, "garden", 5)

    @visible(points=1, checks="limit")
    def n_names(self, answer):
        """Four garden names when asked for four, two toys when asked for two"""
        self._limit(answer, "garden", 4)
        self._limit(answer, "toys", 2)

    @visible(points=2, checks="projection")
    def asks_for_names_only(self, answer):
        """The database is asked for the names only"""
        products, _, _, _ = self._call_on_tied(answer, "garden", 5)
        reads = document_reads(products.ops())
        if not reads:
            raise Incorrect("cheapest_names should read the products with find() (or aggregate)")
        names = {p["name"] for p in tied_catalog()}
        for op in reads:
            extra = fields_beyond(returned_documents(products.wrapped, op), names, allowed=(ID_FIELD,))
            if extra:
                raise Incorrect(f"its {op.method}() brings back {', '.join(extra)} too: the statement asks the "
                                "database for the names only (and _id), so the rest of each document should "
                                "stay on the server")

    # -- hidden: the same rules on other data ---------------------------------
    @hidden(points=1, checks="tie")
    def tie_at_the_cut(self, answer):
        """A tie that straddles the last place: the lower _id is the one kept"""
        self._tie(answer, "garden", 6)

    @hidden(points=1, checks="category")
    def kitchen_only(self, answer):
        """Only kitchen products when asked for kitchen"""
        self._category(answer, "kitchen", 3)

    @hidden(points=1, checks="order")
    def another_category(self, answer):
        """Other sizes: every kitchen product, nine garden ones"""
        self._order(answer, "kitchen", 4)
        self._order(answer, "garden", 9)

    @hidden(points=1, checks="limit")
    def just_one(self, answer):
        """One name when asked for one"""
        self._limit(answer, "kitchen", 1)


EXERCISES = (CheapGardenCount, CheapestNames)
