"""Lab 01, exercise 01.2: one page of a category's search, in name order, with the listing's fields only.

Each requirement is judged on its own: the category and the order on every page the search returns (pages
1, 2, ... and the search as one large page), so a mistake in the paging arithmetic costs only "page"; a
product the pages miss counts against "category" only when the search's own read does not select it; and
the pages are compared with the expected pages (the category in name order), or, when the answer's
filter or sort is not that, with its own listing, so that "page" checks the paging alone.
"""

from __future__ import annotations

import functools
from typing import Any

from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson01.catalog import SharedCatalog, check_catalog
from course.lessons.lesson01.reads import (document_reads, is_a_list, returned_fields, returned_type,
                                          unpaged_documents)
from course.engine.recording import RecordingCollection

LISTING_FIELDS = {"_id", "name", "price_pence"}
ALL_OF_IT = 1000  #: a page size larger than any category of the check catalog


def in_category(category: str) -> list[dict]:
    """The check catalog's products of ``category``, in name order."""
    return sorted((p for p in check_catalog() if p["category"] == category), key=lambda p: p["name"])


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
        "list": "search_page returns a list (not a cursor, a tuple or a generator) of documents",
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
        "A cursor is not a list: list(cursor) reads it into one.",
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

    def _returned(self, answer, category, page, page_size, products=None):
        """Call search_page; what it returned, as it returned it."""
        products = products if products is not None else self._products()
        return self.call("search_page", answer.search_page, products, category, page, page_size)

    def _page(self, answer, category, page, page_size, products=None):
        """Call search_page; the documents it returned, as a list (any iterable is read: "list" checks the type)."""
        result = self._returned(answer, category, page, page_size, products)
        if isinstance(result, (str, bytes, dict)):
            raise Incorrect(f"search_page should return a list of documents, got a {type(result).__name__}")
        try:
            result = list(result)
        except TypeError:
            raise Incorrect(f"search_page should return a list of documents, got {type(result).__name__}") from None
        if not all(isinstance(d, dict) for d in result):
            raise Incorrect("search_page should return documents (dicts), one per product")
        return result

    def _every_page(self, answer, category, products) -> list[list]:
        """The search as one large page, then pages 1, 2, ... of 20 until an empty one (judged on their own,
        so a mistake in the paging arithmetic costs the "page" requirement only)."""
        pages = [self._page(answer, category, 1, ALL_OF_IT, products)]
        for page in range(1, len(in_category(category)) // 20 + 3):
            pages.append(self._page(answer, category, page, 20, products))
            if not pages[-1]:
                break
        return pages

    def _category(self, answer, category):
        products = self._products()
        pages = self._every_page(answer, category, products)
        for document in (d for page in pages for d in page):
            product = _identify(document)
            if product is None or product["category"] != category:
                raise Incorrect(f"search_page(products, {category!r}, ...) returned {document!r:.80}, which is not "
                                f"a {category} product: a {category} search lists {category} products only")
        wanted = {p["_id"] for p in in_category(category)}
        listed = {p["_id"] for p in map(_identify, (d for page in pages for d in page)) if p is not None}
        missing = wanted - listed
        if not missing:
            return
        # products the pages miss are the paging's fault when the search's own read selects them
        selected = {p["_id"] for op in document_reads(products.ops())
                    for p in map(_identify, unpaged_documents(products.wrapped, op)) if p is not None}
        lost = missing - selected
        if lost:
            raise Incorrect(f"search_page(products, {category!r}, ...) never returns {len(lost)} of the "
                            f"{len(wanted)} {category} products (its read does not select them, for example "
                            f"{_catalog_index()[0][min(lost)]['name']!r}): a search lists every product of its "
                            "category")

    def _order(self, answer, category):
        for page in self._every_page(answer, category, self._products()):
            names = [p["name"] for p in map(_identify, page) if p is not None]
            for first, second in zip(names, names[1:]):
                if first > second:
                    raise Incorrect(f"search_page(products, {category!r}, ...) lists {first!r} before {second!r}: "
                                    "the search lists products by name, ascending")

    def _slices(self, answer, category, pages, page_size):
        """Each page must be its slice of the expected listing: the category in name order (or, when the
        answer's filter or sort is not that, of its own listing, complete as one page, so that this
        checks the paging alone)."""
        products = self._products()
        expected = [p["_id"] for p in in_category(category)]
        own = [p["_id"] if p else None for p in map(_identify, self._page(answer, category, 1, ALL_OF_IT, products))]
        got = {page: [p["_id"] if p else None for p in map(_identify, self._page(answer, category, page, page_size,
                                                                                   products))]
               for page in pages}
        complete = own and len(set(own)) == len(own) and all(i in own for ids in got.values() for i in ids)
        listing = own if complete and own != expected else expected
        name = f"the {category} products in name order" if listing is expected else \
            "the products the search lists (in its own order, as one page)"
        for page, ids in got.items():
            start = (page - 1) * page_size
            wanted = listing[start:start + page_size]
            if ids == wanted:
                continue
            call = f"search_page(products, {category!r}, {page}, {page_size})"
            rule = f"with {page_size} per page and page 1 first, page {page} holds " + (
                f"numbers {start + 1} to {start + len(wanted)} of {len(listing)}" if len(wanted) > 1 else
                f"number {start + 1} of {len(listing)}" if wanted else f"nothing: {len(listing)} products end sooner")
            places = [listing.index(i) + 1 if i in listing else None for i in ids]
            if not ids:
                raise Incorrect(f"{call} returned nothing; {rule}")
            if None not in places and places == list(range(places[0], places[0] + len(ids))):
                held = f"numbers {places[0]} to {places[-1]}" if len(ids) > 1 else f"number {places[0]}"
                raise Incorrect(f"{call} returned {held} of {name}; {rule}")
            k = next((i for i, (mine, right) in enumerate(zip(ids, wanted)) if mine != right), min(len(ids),
                                                                                                   len(wanted)))
            if k >= len(ids):
                raise Incorrect(f"{call} returned {len(ids)} products; {rule}")
            shown = f"number {places[k]} of {name}" if places[k] else f"a product that is not one of {name}"
            raise Incorrect(f"{call}: its product {k + 1} is {shown}; {rule}, so its product {k + 1} should "
                            f"be number {start + k + 1}")

    @visible(points=1, checks="list")
    def returns_a_list(self, answer):
        """It returns a list"""
        returned = self._returned(answer, "kitchen", 1, 20)
        if not is_a_list(returned):
            raise Incorrect(f"search_page(products, 'kitchen', 1, 20) returned a {returned_type(returned)}: the "
                            "statement asks for a list of documents (a cursor can be read only once, and has no "
                            "len())")

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
        """Pages 1 and 3 of kitchen at 20 per page, page 2 at 7 per page, are the right slices"""
        self._slices(answer, "kitchen", (1, 3), 20)
        self._slices(answer, "kitchen", (2,), 7)

    @visible(points=2, checks="projection")
    def listing_fields(self, answer):
        """Each product holds _id, name and price_pence only, projected by the server"""
        products = self._products()
        got = self._page(answer, "kitchen", 1, 20, products)
        keys = {k for d in got for k in d}
        if keys - LISTING_FIELDS:
            raise Incorrect(f"its products hold {', '.join(sorted(keys - LISTING_FIELDS))} too: a listing "
                            "holds _id, name and price_pence only")
        if got and LISTING_FIELDS - keys:
            raise Incorrect(f"its products have no {', '.join(sorted(LISTING_FIELDS - keys))}: a listing holds "
                            "_id, name and price_pence")
        for op in document_reads(products.ops()):
            extra = sorted(returned_fields(products.wrapped, op) - LISTING_FIELDS)
            if extra:
                raise Incorrect(f"its {op.method}() brings back {', '.join(extra)} from the server: the read "
                                "itself asks for the three fields only (not Python after it)")

    @hidden(points=1, checks="page")
    def other_category_and_size(self, answer):
        """Another category and page size, the short last page and a page past the end"""
        count = len(in_category("garden"))
        last = (count + 8) // 9
        self._slices(answer, "garden", (2, last, last + 1), 9)

    @hidden(points=1, checks="category")
    def unknown_category(self, answer):
        """An unknown category gives an empty page; another category its own products"""
        if self._page(answer, "no-such-category", 1, 20):
            raise Incorrect("search_page(products, 'no-such-category', 1, 20) returned products: a category "
                            "with no products has an empty search")
        self._category(answer, "toys")

    @hidden(points=1, checks="order")
    def another_order(self, answer):
        """Another category is in name order too"""
        self._order(answer, "bathroom")
