"""Lab 01, design for reads: exercises and their checks.

Behavioural checks run the learner's code against a scratch database seeded
with the same catalog the lab uses, so a learner's experiments in the lab
database cannot make a right answer look wrong.
"""

from __future__ import annotations

from typing import Any

import bson

from course.datasets import CATALOG_SCHEMA_VERSION, MAX_TAGS, catalog_products, customers_with_orders
from course.exercise import Exercise, Incorrect, hidden, visible
from course.plans import index_keys, plan_for
from course.recording import RecordingCollection

TITLE = "Design for reads"
SLUG = "design-for-reads"

PRODUCTS, SEED = 2000, 7  #: what the lab seeds, and the checks too
CHECK_PRODUCTS = 300  #: a smaller catalog for the behavioural checks
LISTING_FIELDS = {"_id", "name", "price_pence"}
MAX_ADDRESSES = 3
#: The three reads of the catalog, as (filter, sort); the card and the feed go by _id.
SEARCH_QUERY = ({"category": "kitchen"}, [("name", 1)])


def seeded_products(lab) -> Any:
    """A scratch ``products`` collection holding the check catalog."""
    products = lab.scratch().products
    products.insert_many(catalog_products(n=CHECK_PRODUCTS, seed=SEED))
    return products


def expected_page(category: str, page: int, page_size: int) -> list[dict]:
    """The reference answer of :class:`SearchPage` on the check catalog."""
    matching = sorted((p for p in catalog_products(n=CHECK_PRODUCTS, seed=SEED) if p["category"] == category),
                      key=lambda p: p["name"])
    start = (page - 1) * page_size
    return [{k: p[k] for k in LISTING_FIELDS} for p in matching[start:start + page_size]]


# ---------------------------------------------------------------------------
class KettleDocument(Exercise):
    id = "01.1"
    title = "Shape the product document for its reads"
    answers = ("kettle",)
    hints = (
        "One document answers the product card: name, category, price and tags all inside it.",
        "Money as an integer number of pence (price_pence), tags as a short list of strings, "
        f"and schema_version = {CATALOG_SCHEMA_VERSION}.",
    )
    solution_code = f"""
kettle = {{
    "_id": 91,
    "schema_version": {CATALOG_SCHEMA_VERSION},
    "name": "Kettle",
    "category": "kitchen",
    "price_pence": 2499,
    "tags": ["steel", "1.7l"],
}}
"""

    @visible(points=1)
    def has_the_card_fields(self, answer):
        """The document holds everything the product card shows"""
        doc = self.expect_type("kettle", answer.kettle, dict, '{"_id": 91, "name": "Kettle", ...}')
        missing = [f for f in ("_id", "name", "category", "price_pence", "tags", "schema_version") if f not in doc]
        if missing:
            raise Incorrect(f"the product card needs {', '.join(missing)} in the document itself")
        if doc["_id"] != 91 or doc["name"] != "Kettle" or doc["category"] != "kitchen":
            raise Incorrect('this is product 91, the "Kettle" in category "kitchen"')

    @visible(points=1)
    def price_in_pence(self, answer):
        """The price is an integer number of pence"""
        price = answer.kettle.get("price_pence")
        if isinstance(price, bool) or not isinstance(price, int):
            raise Incorrect(f"price_pence should be an int (2499 for £24.99), not {type(price).__name__} {price!r}")
        if price != 2499:
            raise Incorrect(f"£24.99 is 2499 pence, not {price}")
        if "price" in answer.kettle:
            raise Incorrect("keep one price field, price_pence: a second 'price' is a copy with no update path")

    @visible(points=1)
    def bounded_embedded_tags(self, answer):
        """The tags are embedded: a short list of strings"""
        tags = answer.kettle.get("tags")
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise Incorrect("tags should be a list of strings embedded in the document")
        if sorted(tags) != ["1.7l", "steel"]:
            raise Incorrect('the kettle\'s tags are "steel" and "1.7l"')

    @visible(points=1)
    def carries_its_version(self, answer):
        """The document says which shape it has"""
        version = answer.kettle.get("schema_version")
        if version != CATALOG_SCHEMA_VERSION or isinstance(version, bool):
            raise Incorrect(f"schema_version should be the current shape's number, {CATALOG_SCHEMA_VERSION}")

    @hidden(points=2)
    def serves_the_reads(self, answer):
        """Stored beside the catalog, it answers the card in one read and appears in search"""
        products = seeded_products(self.lab)
        products.delete_one({"_id": 91})
        products.insert_one(dict(answer.kettle))
        card = products.find_one({"_id": 91})
        if card is None or card.get("price_pence") != 2499 or sorted(card.get("tags", [])) != ["1.7l", "steel"]:
            raise Incorrect("reading _id 91 back should give the whole card: price and tags included")
        names = [d["name"] for d in products.find(SEARCH_QUERY[0], {"name": 1}).sort(SEARCH_QUERY[1])]
        if "Kettle" not in names:
            raise Incorrect("the kettle should show up in a search of the kitchen category")
        lists = [k for k, v in answer.kettle.items() if isinstance(v, list) and len(v) > MAX_TAGS]
        if lists:
            raise Incorrect(f"{', '.join(lists)} holds more than {MAX_TAGS} items: embedded lists must stay bounded")


# ---------------------------------------------------------------------------
class SearchPage(Exercise):
    id = "01.2"
    title = "Search a category, one page at a time, in name order"
    answers = ("search_page",)
    hints = (
        "find() with the category filter and a projection of the listing fields, then sort, skip and limit.",
        "Page 1 starts at 0: skip((page - 1) * page_size). Sort on name, ascending.",
        'Projection: {"name": 1, "price_pence": 1} (the _id comes along unless you exclude it).',
    )
    solution_code = """
def search_page(products, category, page, page_size=20):
    \"\"\"One page of a category's products in name order: _id, name and price only.\"\"\"
    cursor = (
        products.find({"category": category}, {"name": 1, "price_pence": 1})
        .sort("name", 1)
        .skip((page - 1) * page_size)
        .limit(page_size)
    )
    return list(cursor)
"""

    def _page(self, answer, products, category, page, page_size=20):
        result = self.call("search_page", answer.search_page, products, category, page, page_size)
        try:
            result = list(result)
        except TypeError:
            raise Incorrect(f"search_page should return a list of documents, got {type(result).__name__}") from None
        if not all(isinstance(d, dict) for d in result):
            raise Incorrect("search_page should return documents (dicts)")
        return result

    def _compare(self, got, expected, what):
        if got == expected:
            return
        got_names = [d.get("name") for d in got]
        want_names = [d["name"] for d in expected]
        if got_names == want_names:
            extra = sorted({k for d in got for k in d} - LISTING_FIELDS)
            missing = sorted(LISTING_FIELDS - {k for d in got for k in d})
            if extra:
                raise Incorrect(f"{what}: the listing only needs _id, name and price_pence; "
                                f"project away {', '.join(extra)}")
            raise Incorrect(f"{what}: the listing needs {', '.join(missing)}")
        if len(got) != len(expected):
            raise Incorrect(f"{what}: expected {len(expected)} products, got {len(got)}")
        if sorted(got_names, key=str) == sorted(want_names):
            raise Incorrect(f"{what}: the right products in the wrong order: sort by name")
        raise Incorrect(f"{what}: not the products expected (first expected {want_names[0]!r}, "
                        f"got {got_names[0]!r})")

    @visible(points=2)
    def first_page(self, answer):
        """Page 1 of the kitchen category is right"""
        products = seeded_products(self.lab)
        self._compare(self._page(answer, products, "kitchen", 1), expected_page("kitchen", 1, 20),
                      "page 1 of kitchen")

    @visible(points=1)
    def later_page(self, answer):
        """Page 3 starts where page 2 ended"""
        products = seeded_products(self.lab)
        self._compare(self._page(answer, products, "kitchen", 3), expected_page("kitchen", 3, 20),
                      "page 3 of kitchen")

    @hidden(points=1)
    def other_category_and_size(self, answer):
        """Another category with another page size"""
        products = seeded_products(self.lab)
        self._compare(self._page(answer, products, "garden", 2, 7), expected_page("garden", 2, 7),
                      "page 2 of garden with 7 per page")

    @hidden(points=1)
    def last_and_empty_pages(self, answer):
        """The last page is short and a page past the end is empty"""
        products = seeded_products(self.lab)
        count = len(expected_page("toys", 1, 10_000))
        last = count // 20 + 1
        self._compare(self._page(answer, products, "toys", last), expected_page("toys", last, 20),
                      f"the last page ({last}) of toys")
        self._compare(self._page(answer, products, "toys", last + 1), [], "a page past the end")
        self._compare(self._page(answer, products, "no-such-category", 1), [], "an unknown category")


# ---------------------------------------------------------------------------
def _bounded_by_filter(collection, plan, query) -> bool:
    """True when the plan's index starts with a field the filter constrains."""
    keys = index_keys(collection).get(plan.index or "", [])
    return bool(keys) and keys[0][0] in query


class CatalogIndexes(Exercise):
    id = "01.3"
    title = "Index exactly what the reads need"
    answers = ("create_catalog_indexes",)
    hints = (
        "The product card and the price feed find a product by _id, which is always indexed.",
        "The search filters on category and sorts on name: one compound index serves both, "
        "if its fields are in that order.",
        "An index that no planned read uses costs every write and serves nothing: do not create it.",
    )
    solution_code = """
def create_catalog_indexes(products):
    \"\"\"Create the indexes the catalog's reads need, and no others.\"\"\"
    products.create_index([("category", 1), ("name", 1)])
"""

    def _indexed(self, answer):
        products = seeded_products(self.lab)
        self.call("create_catalog_indexes", answer.create_catalog_indexes, products)
        return products

    def _check_search(self, products):
        query, sort = SEARCH_QUERY
        plan = plan_for(products, self.lab.backend, query, sort)
        if plan.stage != "IXSCAN" or not _bounded_by_filter(products, plan, query):
            raise Incorrect(f"the category search still scans the whole collection ({plan}): "
                            "index the field it filters on")
        if plan.in_memory_sort:
            raise Incorrect(f"the search still sorts in memory ({plan}): "
                            "the index must continue with the sort field, name")

    @visible(points=2)
    def search_uses_an_index(self, answer):
        """The category search is served by an index, sort included"""
        self._check_search(self._indexed(answer))

    @visible(points=1)
    def no_unused_index(self, answer):
        """Every index serves one of the planned reads"""
        products = self._indexed(answer)
        query, sort = SEARCH_QUERY
        used = plan_for(products, self.lab.backend, query, sort).index
        for name in index_keys(products):
            if name not in ("_id_", used):
                raise Incorrect(f"index {name} serves none of the three reads: "
                                "an index nobody uses is pure cost on every write")

    @hidden(points=1)
    def idempotent(self, answer):
        """Creating the indexes twice is harmless"""
        products = self._indexed(answer)
        before = index_keys(products)
        self.call("create_catalog_indexes", answer.create_catalog_indexes, products)
        if index_keys(products) != before:
            raise Incorrect("calling create_catalog_indexes twice changed the indexes")

    @hidden(points=1)
    def lab_database_indexed(self, answer):
        """The lab's own products collection was left with the search index"""
        products = self.lab.db.products
        if products.count_documents({}) == 0:
            raise Incorrect("the lab's products collection is empty: run the notebook from the top")
        self._check_search(products)


# ---------------------------------------------------------------------------
class UpdatePrice(Exercise):
    id = "01.4"
    title = "A price feed that writes only the price"
    answers = ("update_price",)
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

    def _recorded(self):
        return RecordingCollection(seeded_products(self.lab))

    @visible(points=2)
    def sets_only_the_price(self, answer):
        """The price changes and nothing else does"""
        products = self._recorded()
        before = products.find_one({"_id": 5})
        returned = self.call("update_price", answer.update_price, products, 5, 1999)
        after = products.find_one({"_id": 5})
        if after.get("price_pence") != 1999:
            raise Incorrect(f"product 5's price_pence should be 1999 after the update, found {after.get('price_pence')!r}")
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k) and k != "price_pence")
        if changed:
            raise Incorrect(f"the feed only sends prices, but {', '.join(changed)} changed too")
        if returned is not True:
            raise Incorrect(f"update_price should return True when the product exists, got {returned!r}")

    @visible(points=1)
    def one_targeted_update(self, answer):
        """It sends one update of price_pence, not a whole replacement document"""
        products = self._recorded()
        self.call("update_price", answer.update_price, products, 7, 2099)
        writes = products.writes()
        if any(name in ("replace_one", "find_one_and_replace", "insert_one", "delete_one") for name, _ in writes):
            raise Incorrect("rewriting the whole document can undo a concurrent change to another field: "
                            "use update_one with $set on price_pence")
        updates = [args for name, args in writes if name in ("update_one", "find_one_and_update")]
        if len(updates) != 1:
            raise Incorrect(f"expected one update_one call, saw {len(writes)} writes: {[n for n, _ in writes]}")
        update = updates[0][1] if len(updates[0]) > 1 else {}
        if not isinstance(update, dict) or set(update) != {"$set"} or set(update["$set"]) != {"price_pence"}:
            raise Incorrect("the update should be exactly {'$set': {'price_pence': ...}}")

    @hidden(points=1)
    def unknown_product(self, answer):
        """An unknown product id changes nothing and returns False"""
        products = self._recorded()
        returned = self.call("update_price", answer.update_price, products, 999_999, 1000)
        if products.count_documents({"_id": 999_999}):
            raise Incorrect("a price for an unknown product created a document: do not upsert from the feed")
        if returned is not False:
            raise Incorrect(f"update_price should return False for an unknown product, got {returned!r}")

    @hidden(points=2)
    def rejects_bad_prices(self, answer):
        """Strings, floats, booleans and negative prices are rejected before writing"""
        products = self._recorded()
        for bad in ("2499", 24.99, True, -5):
            try:
                answer.update_price(products, 9, bad)
            except (TypeError, ValueError):
                pass
            except Exception as error:
                raise Incorrect(f"a bad price {bad!r} should raise TypeError or ValueError, "
                                f"not {type(error).__name__}") from None
            else:
                raise Incorrect(f"update_price accepted {bad!r}: validate at the boundary and raise")
        if products.find_one({"_id": 9})["price_pence"] != catalog_products(n=9, seed=SEED)[8]["price_pence"]:
            raise Incorrect("a rejected price must leave the stored price unchanged")


# ---------------------------------------------------------------------------
PLAN_QUERIES = {
    "A": ({"category": "garden"}, [("name", 1)]),
    "B": ({"price_pence": {"$lt": 500}}, [("name", 1)]),
    "C": ({"tags": "eco"}, None),
    "D": ({"name": "Oak Kite No. 7"}, None),
}
PLAN_INDEXES = ([("category", 1), ("name", 1)], [("price_pence", 1)])


class ReadThePlan(Exercise):
    id = "01.5"
    title = "Predict the plan"
    answers = ("plan_predictions",)
    hints = (
        "An index can serve a query only if the filter constrains its first field (or the sort starts with it).",
        "When the index that filters does not continue with the sort field, the server sorts in memory.",
        "No index on the filtered field: COLLSCAN, written here as (None, False) when there is no sort.",
    )
    solution_code = """
plan_predictions = {
    "A": ("category_1_name_1", False),
    "B": ("price_pence_1", True),
    "C": (None, False),
    "D": (None, False),
}
"""

    def _actual(self):
        products = seeded_products(self.lab)
        for keys in PLAN_INDEXES:
            products.create_index(keys)
        return {letter: plan_for(products, self.lab.backend, query, sort)
                for letter, (query, sort) in PLAN_QUERIES.items()}

    def _prediction(self, answer, letter):
        predictions = self.expect_type("plan_predictions", answer.plan_predictions, dict,
                                       '{"A": ("category_1_name_1", False), ...}')
        if letter not in predictions:
            raise Incorrect(f"plan_predictions has no entry for query {letter}")
        value = predictions[letter]
        if not (isinstance(value, tuple) and len(value) == 2 and (value[0] is None or isinstance(value[0], str))
                and isinstance(value[1], bool)):
            raise Incorrect(f"prediction {letter} should be (index name or None, sorts in memory True/False), "
                            f"got {value!r}")
        return value

    def _judge(self, answer, letters):
        actual = self._actual()
        for letter in letters:
            index, sorts = self._prediction(answer, letter)
            plan = actual[letter]
            if index != plan.index:
                where = "no index (COLLSCAN)" if plan.index is None else f"index {plan.index}"
                raise Incorrect(f"query {letter}: the planner uses {where}, not {index or 'a COLLSCAN'}")
            if sorts != plan.in_memory_sort:
                raise Incorrect(f"query {letter}: right index, but does it sort in memory? Look at the sort "
                                "and the index's fields after the filter")

    @visible(points=1)
    def predicts_a_and_b(self, answer):
        """Queries A and B are predicted right"""
        self._judge(answer, "AB")

    @hidden(points=2)
    def predicts_all(self, answer):
        """All four queries are predicted right, checked against this backend's planner"""
        self._judge(answer, "ABCD")


# ---------------------------------------------------------------------------
class CustomerDesign(Exercise):
    id = "01.6"
    title = "Practice: a bounded part embedded, an unbounded part referenced"
    answers = ("add_address", "place_order", "recent_orders", "create_order_indexes")
    hints = (
        f"Addresses are few (at most {MAX_ADDRESSES}): embed them, and refuse the push when the list is full, "
        "in the same update (filter on the array's size or on a missing element).",
        "Orders grow without bound: each is its own document in db.orders with a customer_id reference. "
        "Never push orders into the customer.",
        "recent_orders filters on customer_id and sorts on placed_at descending: index exactly that.",
    )
    solution_code = f"""
MAX_ADDRESSES = {MAX_ADDRESSES}

def add_address(db, customer_id, address):
    \"\"\"Embed an address unless the customer already has MAX_ADDRESSES; True if added.\"\"\"
    result = db.customers.update_one(
        {{"_id": customer_id, f"addresses.{{MAX_ADDRESSES - 1}}": {{"$exists": False}}}},
        {{"$push": {{"addresses": address}}}},
    )
    return result.modified_count == 1

def place_order(db, customer_id, order):
    \"\"\"Store an order as its own document that references its customer.\"\"\"
    doc = {{**order, "customer_id": customer_id, "schema_version": 1}}
    db.orders.insert_one(doc)
    return doc["_id"]

def recent_orders(db, customer_id, limit=10):
    \"\"\"The customer's newest orders first.\"\"\"
    cursor = db.orders.find({{"customer_id": customer_id}}).sort("placed_at", -1).limit(limit)
    return list(cursor)

def create_order_indexes(db):
    \"\"\"The one index recent_orders needs.\"\"\"
    db.orders.create_index([("customer_id", 1), ("placed_at", -1)])
"""

    def _database(self):
        db = self.lab.scratch()
        people, _ = customers_with_orders(customers=5, orders_per_customer=0)
        db.customers.insert_many(people)
        return db

    def _place(self, answer, db, customer_id, days):
        for day in days:
            self.call("place_order", answer.place_order, db, customer_id,
                      {"placed_at": day, "total_pence": 100 * day})

    @visible(points=1)
    def addresses_are_bounded(self, answer):
        """Addresses are embedded, and a full list refuses another"""
        db = self._database()
        start = len(db.customers.find_one({"_id": 1})["addresses"])
        results = [self.call("add_address", answer.add_address, db, 1, {"label": f"extra {i}", "postcode": "E1 1AA"})
                   for i in range(MAX_ADDRESSES + 2)]
        stored = db.customers.find_one({"_id": 1}).get("addresses", [])
        if len(stored) != MAX_ADDRESSES:
            raise Incorrect(f"after adding {MAX_ADDRESSES + 2} addresses the customer holds {len(stored)}: "
                            f"the list must stop at {MAX_ADDRESSES}")
        accepted = MAX_ADDRESSES - start
        if results != [True] * accepted + [False] * (len(results) - accepted):
            raise Incorrect(f"add_address should return True while there is room and False after, got {results}")

    @visible(points=1)
    def orders_are_referenced(self, answer):
        """Orders live in their own collection and reference the customer"""
        db = self._database()
        self._place(answer, db, 2, [10, 20, 30])
        orders = list(db.orders.find({"customer_id": 2}))
        if len(orders) != 3:
            raise Incorrect(f"3 orders placed for customer 2, but db.orders holds {len(orders)} with customer_id 2")
        customer = db.customers.find_one({"_id": 2})
        arrays = [k for k, v in customer.items() if isinstance(v, list) and k != "addresses"]
        if arrays:
            raise Incorrect(f"the customer document grew a list ({', '.join(arrays)}): orders are unbounded, "
                            "reference them instead of embedding")

    @visible(points=1)
    def newest_first(self, answer):
        """recent_orders returns the customer's newest orders, newest first"""
        db = self._database()
        self._place(answer, db, 3, [5, 50, 25, 40, 1])
        self._place(answer, db, 4, [60])
        got = self.call("recent_orders", answer.recent_orders, db, 3, 3)
        days = [o.get("placed_at") for o in got]
        if days != [50, 40, 25]:
            raise Incorrect(f"recent_orders(db, 3, 3) should give the days [50, 40, 25], got {days}")

    @hidden(points=1)
    def customer_does_not_grow(self, answer):
        """Hundreds of orders leave the customer document the same size"""
        db = self._database()
        before = len(bson.encode(db.customers.find_one({"_id": 5})))
        self._place(answer, db, 5, range(1, 301))
        after = len(bson.encode(db.customers.find_one({"_id": 5})))
        if after != before:
            raise Incorrect(f"the customer document went from {before} to {after} bytes while orders were placed: "
                            "it must not grow with its orders")

    @hidden(points=1)
    def versioned_orders(self, answer):
        """Every order carries a schema_version"""
        db = self._database()
        self._place(answer, db, 1, [7, 8])
        if db.orders.count_documents({"schema_version": {"$exists": False}}):
            raise Incorrect("orders should carry schema_version, so a reader knows their shape")

    @hidden(points=1)
    def unknown_customer(self, answer):
        """An address for an unknown customer creates nothing"""
        db = self._database()
        returned = self.call("add_address", answer.add_address, db, 999, {"label": "home", "postcode": "E1 1AA"})
        if db.customers.count_documents({"_id": 999}) or returned is not False:
            raise Incorrect("adding an address to an unknown customer should return False and create nothing")

    @hidden(points=2)
    def recent_orders_indexed(self, answer):
        """The recent-orders query is served by an index, sort included, and no index is wasted"""
        db = self._database()
        self._place(answer, db, 1, [3, 2, 1])
        self.call("create_order_indexes", answer.create_order_indexes, db)
        plan = plan_for(db.orders, self.lab.backend, {"customer_id": 1}, [("placed_at", -1)])
        if plan.stage != "IXSCAN" or not _bounded_by_filter(db.orders, plan, {"customer_id": 1}):
            raise Incorrect(f"recent_orders scans every order ({plan}): index customer_id")
        if plan.in_memory_sort:
            raise Incorrect(f"recent_orders sorts in memory ({plan}): continue the index with placed_at")
        unused = [n for n in index_keys(db.orders) if n not in ("_id_", plan.index)]
        if unused:
            raise Incorrect(f"index {unused[0]} serves no planned read")


EXERCISES = (KettleDocument, SearchPage, CatalogIndexes, UpdatePrice, ReadThePlan, CustomerDesign)
