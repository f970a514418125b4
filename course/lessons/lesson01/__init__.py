"""Lab 01, design for reads: the catalog exercises (01.1-01.3) and the lab's exercise list.

Behavioural checks run the learner's code against a scratch database seeded
with a smaller copy of the lab's catalog, so a learner's experiments in the
lab database cannot make a right answer look wrong.  The check catalog is in
:mod:`course.lessons.lesson01.catalog`; the category search (01.2) lives in
:mod:`course.lessons.lesson01.search`, the price feed (01.4) in
:mod:`course.lessons.lesson01.prices`, the plan predictions (01.5) in
:mod:`course.lessons.lesson01.plans`, the customer design (01.6) in
:mod:`course.lessons.lesson01.customers`.
"""

from __future__ import annotations

from typing import Any

from course.datasets.catalog import CATALOG_SCHEMA_VERSION
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson01.catalog import SEED, check_catalog
from course.lessons.lesson01.customers import MAX_ADDRESSES, CustomerDesign
from course.lessons.lesson01.plans import ReadThePlan
from course.lessons.lesson01.prices import UpdatePrice
from course.lessons.lesson01.search import SearchPage
from course.toolkit.plans import index_keys, plan_for, plan_problem

__all__ = ["EXERCISES", "MAX_ADDRESSES", "PRODUCTS", "SEED", "SLUG", "TITLE"]

TITLE = "Design for reads"
SLUG = "design-for-reads"

PRODUCTS = 2000  #: what the lab seeds (with SEED)
CARD_FIELDS = ("_id", "schema_version", "name", "category", "price_pence", "tags")
#: The category search, as (filter, sort); the card and the feed go by _id.
SEARCH_QUERY = ({"category": "kitchen"}, [("name", 1)])


def _spelling(name: Any) -> str:
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


def _stand_ins(doc: dict) -> dict[str, Any]:
    """Each catalog field missing from ``doc`` -> the extra field that stands in for it, where one does.

    A field stands in for a missing one when their names match once case and punctuation are ignored, or one
    name holds the other (``schemaVersion`` for ``schema_version``, ``price`` for ``price_pence``): that is
    one mistake, the missing field's, not a second one in the document's shape as well.
    """
    missing = [field for field in CARD_FIELDS if field not in doc]
    extra = [field for field in doc if field not in CARD_FIELDS]
    found: dict[str, Any] = {}
    for field in missing:
        wanted = _spelling(field)
        for candidate in extra:
            spelt = _spelling(candidate)
            if candidate not in found.values() and len(spelt) > 1 and (spelt in wanted or wanted in spelt):
                found[field] = candidate
                break
    return found


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
        "shape": "the document has no fields beyond the catalog's: " + ", ".join(CARD_FIELDS)
                 + " (a catalog field that is missing, or there under another name, counts against that field's "
                   "own requirement only)",
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
            instead = _stand_ins(answer.kettle).get("price_pence")
            raise Incorrect("the document has no price_pence" + (
                f" (it has {instead!r}, which is not the catalog's name for it)" if instead else "")
                + ": the catalog keeps the price there")
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
        doc = self._doc(answer)
        version = doc.get("schema_version")
        if "schema_version" not in doc:
            instead = _stand_ins(doc).get("schema_version")
            raise Incorrect("the document has no schema_version" + (
                f" (it has {instead!r}, which is not the catalog's name for it)" if instead else "")
                + f": every product says which shape it has, the int {CATALOG_SCHEMA_VERSION}")
        if isinstance(version, bool) or not isinstance(version, int) or version != CATALOG_SCHEMA_VERSION:
            raise Incorrect(f"schema_version should be the current shape's number, the int "
                            f"{CATALOG_SCHEMA_VERSION}, not {version!r}")

    @visible(points=1, checks="shape")
    def catalog_shape(self, answer):
        """It has the catalog's fields, and no others"""
        doc = self._doc(answer)
        standing_in = set(_stand_ins(doc).values())  # a misnamed field is the mistake of the field it stands for
        extra = [field for field in doc if field not in CARD_FIELDS and field not in standing_in]
        if extra:
            raise Incorrect(f"{', '.join(map(str, extra))} is not a field of the catalog's shape: every reader "
                            "of the catalog expects the same fields (one price, in price_pence)")


# ---------------------------------------------------------------------------
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
