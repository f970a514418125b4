"""Lab 01, design for reads: the catalog exercises (01.1-01.3) and the lab's exercise list.

Behavioural checks run the learner's code against a scratch database seeded
with a smaller copy of the lab's catalog, so a learner's experiments in the
lab database cannot make a right answer look wrong.  The check catalog is in
:mod:`course.lessons.lesson01_catalog`; the price feed (01.4) lives in
:mod:`course.lessons.lesson01_prices`, the plan predictions (01.5) in
:mod:`course.lessons.lesson01_plans`, the customer design (01.6) in
:mod:`course.lessons.lesson01_customers`.
"""

from __future__ import annotations

import functools
from typing import Any

from course.datasets import CATALOG_SCHEMA_VERSION
from course.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson01_catalog import SEED, SharedCatalog, check_catalog
from course.lessons.lesson01_customers import MAX_ADDRESSES, CustomerDesign
from course.lessons.lesson01_plans import ReadThePlan
from course.lessons.lesson01_prices import UpdatePrice
from course.lessons.lesson01_reads import document_reads, returned_fields
from course.plans import index_keys, plan_for, plan_problem
from course.recording import RecordingCollection

__all__ = ["EXERCISES", "MAX_ADDRESSES", "PRODUCTS", "SEED", "SLUG", "TITLE"]

TITLE = "Design for reads"
SLUG = "design-for-reads"

PRODUCTS = 2000  #: what the lab seeds (with SEED)
LISTING_FIELDS = {"_id", "name", "price_pence"}
CARD_FIELDS = ("_id", "schema_version", "name", "category", "price_pence", "tags")
#: The category search, as (filter, sort); the card and the feed go by _id.
SEARCH_QUERY = ({"category": "kitchen"}, [("name", 1)])
ALL_OF_IT = 1000  #: a page size larger than any category of the check catalog


def in_category(category: str) -> list[dict]:
    """The check catalog's products of ``category``, in name order."""
    return sorted((p for p in check_catalog() if p["category"] == category), key=lambda p: p["name"])


# ---------------------------------------------------------------------------
class KettleDocument(Exercise):
    id = "01.1"
    fixed_answer = True  #: a value computed once, in the notebook: nothing to vary
    title = "Shape the product document for its reads"
    answers = ("kettle",)
    requirements = {
        "card": 'kettle is a dict with _id 91 (an int), name "Kettle" and category "kitchen"',
        "price": "price_pence is an int number of pence: 2499 (not a str, a float or a nested document)",
        "tags": 'tags is an embedded list of the strings "steel" and "1.7l" (in any order)',
        "version": f"schema_version is {CATALOG_SCHEMA_VERSION}, an int",
        "shape": "the document has exactly the catalog's fields: " + ", ".join(CARD_FIELDS),
    }
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

    def _doc(self, answer) -> dict:
        if not isinstance(answer.kettle, dict):
            raise Incorrect(f"kettle should be a dict (one document), got a {type(answer.kettle).__name__}")
        return answer.kettle

    @visible(points=1, checks="card")
    def is_product_91(self, answer):
        """It is product 91, the Kettle in the kitchen category"""
        doc = self.expect_type("kettle", answer.kettle, dict, '{"_id": 91, "name": "Kettle", ...}')
        for field, wanted in (("_id", 91), ("name", "Kettle"), ("category", "kitchen")):
            if field not in doc:
                raise Incorrect(f"the document has no {field}: the product card reads it from the document itself")
            if doc[field] != wanted or isinstance(doc[field], bool):
                raise Incorrect(f"{field} should be {wanted!r}, not {doc[field]!r}")
            if not isinstance(doc[field], type(wanted)):  # 91.0 == 91, but the statement says an int
                raise Incorrect(f"{field} should be the {type(wanted).__name__} {wanted!r}, not the "
                                f"{type(doc[field]).__name__} {doc[field]!r}: the catalog's _id is an int")

    @visible(points=2, checks="price")
    def price_in_pence(self, answer):
        """The price is an int number of pence"""
        price = self._doc(answer).get("price_pence")
        if "price_pence" not in answer.kettle:
            raise Incorrect("the document has no price_pence: the catalog keeps the price there")
        if isinstance(price, bool) or not isinstance(price, int):
            raise Incorrect(f"price_pence should be an int number of pence, not the {type(price).__name__} "
                            f"{price!r}: money must add up exactly and compare as a number")
        if price != 2499:
            raise Incorrect(f"price_pence is {price}: £24.99 in pence is not that")

    @visible(points=2, checks="tags")
    def embedded_tags(self, answer):
        """The tags are embedded, as a list of strings"""
        tags = self._doc(answer).get("tags")
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise Incorrect(f"tags should be a list of strings embedded in the document, got {tags!r:.60}")
        if sorted(tags) != ["1.7l", "steel"]:
            raise Incorrect(f'tags should hold "steel" and "1.7l" and nothing else, got {tags!r:.60}')

    @visible(points=1, checks="version")
    def carries_its_version(self, answer):
        """The document says which shape it has"""
        version = self._doc(answer).get("schema_version")
        if isinstance(version, bool) or not isinstance(version, int) or version != CATALOG_SCHEMA_VERSION:
            raise Incorrect(f"schema_version should be the current shape's number, the int "
                            f"{CATALOG_SCHEMA_VERSION}, not {version!r}")

    @visible(points=1, checks="shape")
    def catalog_shape(self, answer):
        """It has the catalog's fields, and no others"""
        doc = self._doc(answer)
        extra = [field for field in doc if field not in CARD_FIELDS]
        if extra:
            raise Incorrect(f"{', '.join(map(str, extra))} is not a field of the catalog's shape: every reader "
                            "of the catalog expects the same fields (one price, in price_pence)")
        missing = [field for field in CARD_FIELDS if field not in doc]
        if missing:
            raise Incorrect(f"the catalog's shape also has {', '.join(missing)}")


# ---------------------------------------------------------------------------
@functools.cache
def _catalog_index() -> tuple[dict, dict]:
    """The check catalog by _id and by name."""
    return {p["_id"]: p for p in check_catalog()}, {p["name"]: p for p in check_catalog()}


def _identify(document: Any) -> dict | None:
    """The check-catalog product a returned document stands for (by _id, else by name)."""
    if not isinstance(document, dict):
        return None
    by_id, by_name = _catalog_index()
    try:
        return by_id.get(document["_id"]) if "_id" in document else by_name.get(document.get("name"))
    except TypeError:  # an unhashable _id or name
        return None


class SearchPage(Exercise):
    id = "01.2"
    title = "Search a category, one page at a time, in name order"
    answers = ("search_page",)
    requirements = {
        "category": "the products of `category`, all of them and no others",
        "order": "sorted by name, ascending",
        "page": "page `page` (counting from 1) of `page_size` products: the right slice, shorter at the end, "
                "empty past it",
        "projection": "each product holds only _id, name and price_pence, and the read asks the server for no more",
    }
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

    def _products(self) -> RecordingCollection:
        """The check catalog behind a recording wrapper (shared by this exercise's read-only checks)."""
        return self.__dict__.setdefault("_catalog", SharedCatalog()).get(self.lab)

    def _page(self, answer, category, page, page_size, products=None):
        """Call search_page; the documents it returned, as a list."""
        products = products if products is not None else self._products()
        result = self.call("search_page", answer.search_page, products, category, page, page_size)
        if isinstance(result, (str, bytes, dict)):
            raise Incorrect(f"search_page should return a list of documents, got a {type(result).__name__}")
        try:
            result = list(result)
        except TypeError:
            raise Incorrect(f"search_page should return a list of documents, got {type(result).__name__}") from None
        if not all(isinstance(d, dict) for d in result):
            raise Incorrect("search_page should return documents (dicts), one per product")
        return result

    def _category(self, answer, category):
        got = self._page(answer, category, 1, ALL_OF_IT)
        call = f"search_page(products, {category!r}, 1, {ALL_OF_IT})"
        found = [_identify(d) for d in got]
        for document, product in zip(got, found):
            if product is None or product["category"] != category:
                raise Incorrect(f"{call} returned {document!r:.80}, which is not a {category} product: "
                                "filter on category")
        wanted = {p["_id"] for p in in_category(category)}
        missing = wanted - {p["_id"] for p in found}
        if missing:
            raise Incorrect(f"{call} returned {len(wanted) - len(missing)} of the {len(wanted)} {category} products")

    def _order(self, answer, category):
        got = self._page(answer, category, 1, ALL_OF_IT)
        names = [p["name"] for p in map(_identify, got) if p is not None]
        for first, second in zip(names, names[1:]):
            if first > second:
                raise Incorrect(f"search_page(products, {category!r}, 1, {ALL_OF_IT}) lists {first!r} before "
                                f"{second!r}: sort on name, ascending")

    def _slices(self, answer, category, pages, page_size):
        """Each page must be its slice of the learner's own full listing (so this checks paging alone)."""
        products = self._products()
        listing = [_identify(d) for d in self._page(answer, category, 1, ALL_OF_IT, products)]
        ids = [p["_id"] if p else None for p in listing]
        for page in pages:
            got = [p["_id"] if p else None for p in map(_identify, self._page(answer, category, page, page_size,
                                                                               products))]
            start = (page - 1) * page_size
            wanted = ids[start:start + page_size]
            call = f"search_page(products, {category!r}, {page}, {page_size})"
            if len(got) != len(wanted):
                raise Incorrect(f"{call} returned {len(got)} products, but the same search as one page "
                                f"(page 1 of {ALL_OF_IT}) returned {len(ids)}: with {page_size} per page and "
                                f"page 1 first, page {page} holds {len(wanted)}")
            if got != wanted:
                k = next(i for i, (mine, right) in enumerate(zip(got, wanted)) if mine != right)
                where = ids.index(got[k]) + 1 if got[k] in ids else None
                shown = f"the listing's product number {where}" if where else "a product the listing does not hold"
                raise Incorrect(f"{call}: its product {k + 1} is {shown}, but with {page_size} per page and page 1 "
                                f"first, that place holds the listing's number {start + k + 1}")

    @visible(points=1, checks="category")
    def the_category(self, answer):
        """The kitchen search lists every kitchen product and nothing else"""
        self._category(answer, "kitchen")

    @visible(points=1, checks="order")
    def name_order(self, answer):
        """The kitchen search is in name order"""
        self._order(answer, "kitchen")

    @visible(points=2, checks="page")
    def pages(self, answer):
        """Pages 1 and 3 of kitchen, 20 per page, are the right slices"""
        self._slices(answer, "kitchen", (1, 3), 20)

    @visible(points=2, checks="projection")
    def listing_fields(self, answer):
        """Each product holds _id, name and price_pence only, projected by the server"""
        products = self._products()
        got = self._page(answer, "kitchen", 1, 20, products)
        keys = {k for d in got for k in d}
        if keys - LISTING_FIELDS:
            raise Incorrect(f"the listing only needs _id, name and price_pence: project away "
                            f"{', '.join(sorted(keys - LISTING_FIELDS))}")
        if got and LISTING_FIELDS - keys:
            raise Incorrect(f"the listing needs {', '.join(sorted(LISTING_FIELDS - keys))} too")
        for op in document_reads(products.ops()):
            extra = sorted(returned_fields(products.wrapped, op) - LISTING_FIELDS)
            if extra:
                raise Incorrect(f"its {op.method}() brings back {', '.join(extra)} from the server: put the "
                                "projection in the query, not in Python")

    @hidden(points=1, checks="page")
    def other_category_and_size(self, answer):
        """Another category and page size, the short last page and a page past the end"""
        count = len(in_category("garden"))
        last = (count + 6) // 7
        self._slices(answer, "garden", (2, last, last + 1), 7)

    @hidden(points=1, checks="category")
    def unknown_category(self, answer):
        """An unknown category gives an empty page; another category its own products"""
        if self._page(answer, "no-such-category", 1, 20):
            raise Incorrect("search_page(products, 'no-such-category', 1, 20) should return an empty list")
        self._category(answer, "toys")

    @hidden(points=1, checks="order")
    def another_order(self, answer):
        """Another category is in name order too"""
        self._order(answer, "bathroom")


# ---------------------------------------------------------------------------
class CatalogIndexes(Exercise):
    id = "01.3"
    title = "Index exactly what the reads need"
    answers = ("create_catalog_indexes",)
    requirements = {
        "search": "the category search (filter on category, sort on name) is served by an index: no collection "
                  "scan, no in-memory sort",
        "no_extra": "no index that none of the three reads uses",
    }
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

    def _indexed(self, answer, documents: int = 60, calls: int = 1):
        products = self.lab.scratch().products
        if documents:
            products.insert_many([dict(p) for p in check_catalog()[:documents]])
        for _ in range(calls):
            self.call("create_catalog_indexes", answer.create_catalog_indexes, products)
        return products

    def _unused(self, products) -> None:
        used = {"_id_", plan_for(products, self.lab.backend, *SEARCH_QUERY).index}
        for name in index_keys(products):
            if name not in used:
                raise Incorrect(f"index {name} serves none of the three reads: an index nobody uses is pure "
                                "cost on every write")

    @visible(points=3, checks="search")
    def search_uses_an_index(self, answer):
        """The category search is served by an index, sort included"""
        problem = plan_problem(self._indexed(answer), self.lab.backend, *SEARCH_QUERY, read="the category search")
        if problem:
            raise Incorrect(problem)

    @visible(points=1, checks="no_extra")
    def no_unused_index(self, answer):
        """Every index serves one of the planned reads"""
        self._unused(self._indexed(answer))

    @hidden(points=1, checks="search")
    def empty_collection_other_category(self, answer):
        """Indexes created before any data serve the search of another category"""
        problem = plan_problem(self._indexed(answer, documents=0), self.lab.backend, {"category": "garden"},
                               [("name", 1)], read="the garden search")
        if problem:
            raise Incorrect(problem)

    @hidden(points=1, checks="no_extra")
    def run_again(self, answer):
        """Run on a catalog that already has its indexes, it still adds none that no read uses"""
        self._unused(self._indexed(answer, calls=2))


EXERCISES = (KettleDocument, SearchPage, CatalogIndexes, UpdatePrice, ReadThePlan, CustomerDesign)
