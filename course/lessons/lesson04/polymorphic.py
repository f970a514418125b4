"""Lesson 04, exercise 04.6: polymorphic, one catalog with shared and partial indexes and a validator per kind.

Behaviour, not spelling: the partial index's filter is run against items (``{"kind": {"$eq": "book"}}``
is ``{"kind": "book"}``) and the validator is judged by inserting documents into a collection it
guards, one rule per assertion.  On a backend without validators or partial indexes those
requirements are reported as not checked.
"""

from __future__ import annotations

from typing import Any

from pymongo.errors import WriteError

from course.store.capabilities import Capability
from course.datasets.patterns import catalog_items
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04.common import data, error_text, seeded
from course.toolkit.matching import index_specs, matching_ids

DOCUMENT_VALIDATION_FAILED = 121
FIELDS = ("tenantId", "kind", "name", "price", "specs")


def _item(_id: int, kind: str, specs: Any, **fields: Any) -> dict:
    base = {"_id": _id, "tenantId": "t1", "kind": kind, "name": f"Item {_id}", "price": 100_000, "specs": specs}
    return {**base, **fields}


VALID_SPECS = {"phone": {"ramGb": 8, "storageGb": 128}, "shirt": {"sizes": ["M", "L"]}, "book": {"isbn": "978-0-1"}}


def _without(kind: str, field: str, _id: int) -> dict:
    document = _item(_id, kind, dict(VALID_SPECS[kind]))
    del document[field]
    return document


def _isbn_probes() -> list[dict]:
    """Items to run a partial filter against: other spellings of kind, and a phone that has an ISBN."""
    return [_item(201, "Book", {"isbn": "978-0-2"}), _item(202, "books", {"isbn": "978-0-3"}),
            {k: v for k, v in _item(203, "book", {"isbn": "978-0-4"}).items() if k != "kind"},
            _item(204, "phone", {"ramGb": 8, "storageGb": 64, "isbn": "978-0-5"}),
            _item(205, "book", {"isbn": "978-0-6"})]


def _catalog_and_a_phone_with_isbn() -> list[dict]:
    """The seeded catalog and a phone that has an ISBN too (a filter on the field, not on kind, holds it)."""
    return catalog_items() + [_item(206, "phone", {"ramGb": 6, "storageGb": 64, "isbn": "978-0-8"})]


class Polymorphic(Exercise):
    id = "04.6"
    title = "Polymorphic: one catalog, shared indexes, a partial index and a validator per kind"
    answers = ("create_catalog_indexes", "catalog_validator")
    requirements = {
        "search_index": "create_catalog_indexes creates an index whose keys start with tenantId, then name",
        "partial_index": "it creates an index on specs.isbn that holds only books: a partial filter matching "
                         "exactly the items whose kind is 'book'",
        "accepts": "catalog_validator accepts every valid phone, shirt and book",
        "required": "the validator refuses an item missing tenantId, kind, name, price or specs",
        "phone": "it refuses a phone unless its specs have integer ramGb and storageGb: a BSON int (allowing a long "
                 "too is up to you), never a double, a string or null",
        "shirt": "it refuses a shirt unless its specs have an array sizes",
        "book": "it refuses a book unless its specs have a string isbn",
        "other_kind": "it refuses an item of any other kind",
    }
    hints = (
        "The shared search reads by tenantId and sorts by name: one index [('tenantId', 1), ('name', 1)].",
        "Only books have specs.isbn: create_indexes([IndexModel([('specs.isbn', 1)], "
        "partialFilterExpression={'kind': 'book'})]).",
        "The validator: {'$jsonSchema': {'bsonType': 'object', 'required': [...], 'oneOf': [one schema per kind]}}, "
        "each kind's schema pins kind with enum and requires its own specs fields.",
    )
    solution_code = """
def create_catalog_indexes(items):
    \"\"\"The shared search index and a partial index for the one kind that has an ISBN.\"\"\"
    items.create_index([("tenantId", 1), ("name", 1)])
    items.create_indexes([IndexModel([("specs.isbn", 1)], partialFilterExpression={"kind": "book"})])


def kind_schema(kind, required, properties):
    \"\"\"The $jsonSchema branch for one kind: its discriminator value and its own specs.\"\"\"
    return {
        "properties": {
            "kind": {"enum": [kind]},
            "specs": {"bsonType": "object", "required": required, "properties": properties},
        }
    }


catalog_validator = {"$jsonSchema": {
    "bsonType": "object",
    "required": ["tenantId", "kind", "name", "price", "specs"],
    "oneOf": [
        kind_schema("phone", ["ramGb", "storageGb"], {"ramGb": {"bsonType": "int"}, "storageGb": {"bsonType": "int"}}),
        kind_schema("shirt", ["sizes"], {"sizes": {"bsonType": "array"}}),
        kind_schema("book", ["isbn"], {"isbn": {"bsonType": "string"}}),
    ],
}}
"""

    def _indexed(self, answer):
        db = seeded(self.lab, items=data(catalog_items))
        self.call("create_catalog_indexes", answer.create_catalog_indexes, db["items"])
        return db, index_specs(db["items"])

    @visible(points=1, checks="search_index")
    def shared_index(self, answer):
        """One index serves the shared search: tenantId, then name"""
        _, specs = self._indexed(answer)
        if not any(spec.fields[:2] == ("tenantId", "name") for spec in specs.values()):
            found = ", ".join(str(list(spec.fields)) for spec in specs.values())
            raise Incorrect("the search over every kind filters on tenantId and sorts by name: create an index "
                            f"whose keys start with tenantId, then name; the indexes are {found}")

    def _check_partial(self, answer, probes: list[dict]):
        db, specs = self._indexed(answer)
        isbn = [spec for spec in specs.values() if spec.fields[:1] == ("specs.isbn",)]
        if not isbn:
            raise Incorrect("create an index on specs.isbn: the book lookup by ISBN needs it")
        partial = isbn[0].partial_filter
        if not partial:
            raise Incorrect("the specs.isbn index holds every item: make it partial "
                            "(partialFilterExpression on kind), so phones and shirts take no space in it")
        got = matching_ids(db, partial, probes)
        want = [p["_id"] for p in probes if p.get("kind") == "book"]
        if got != want:
            extra = [p for p in probes if p["_id"] in set(got) - set(want)]
            lost = [p for p in probes if p["_id"] in set(want) - set(got)]
            which = (f"it holds an item of kind {extra[0].get('kind', '(none)')!r}" if extra
                     else f"it leaves out a book ({lost[0]['name']})")
            raise Incorrect(f"the specs.isbn index's partial filter {partial} should hold exactly the books: {which}")

    @visible(points=2, requires=(Capability.PARTIAL_INDEXES,), checks="partial_index")
    def partial_index_for_books(self, answer):
        """The specs.isbn index is partial: it holds the seeded books only, not a phone that has an ISBN"""
        self._check_partial(answer, data(_catalog_and_a_phone_with_isbn))

    @hidden(points=1, requires=(Capability.PARTIAL_INDEXES,), checks="partial_index")
    def partial_index_edge_cases(self, answer):
        """Other spellings of kind, an item without kind, a phone with an ISBN: only the books are held"""
        self._check_partial(answer, data(_isbn_probes))

    def _validated(self, answer):
        validator = self.expect_type("catalog_validator", answer.catalog_validator, dict,
                                     "{'$jsonSchema': {...}}")
        db = self.lab.scratch()
        try:
            db.create_collection("items", validator=validator)
        except Exception as error:  # the database refused the validator itself
            raise Incorrect(f"the database refused catalog_validator as a validator: {error_text(error)[:200]}") \
                from None
        return db["items"]

    @staticmethod
    def _accepts(items, document) -> bool:
        try:
            items.insert_one(dict(document))
        except WriteError as error:
            if error.code == DOCUMENT_VALIDATION_FAILED:
                return False
            raise
        return True

    def _check_accepts(self, answer, documents):
        items = self._validated(answer)
        for document in documents:
            if not self._accepts(items, document):
                raise Incorrect(f"the validator refused a valid {document['kind']}: {document}")

    @visible(points=1, requires=(Capability.VALIDATORS,), checks="accepts")
    def validator_accepts_every_kind(self, answer):
        """The validator accepts seeded phones, shirts and books"""
        self._check_accepts(answer, data(catalog_items)[:6])

    @hidden(points=1, requires=(Capability.VALIDATORS,), checks="accepts")
    def validator_accepts_the_whole_catalog(self, answer):
        """All thirty seeded items, and items with more specs than required"""
        extra = [_item(301, "phone", {"ramGb": 12, "storageGb": 512, "colour": "black"}),
                 _item(302, "book", {"isbn": "978-0-9", "pages": 320}, tenantId="t2")]
        self._check_accepts(answer, data(catalog_items) + extra)

    def _check_refuses(self, answer, cases: list[tuple[dict, str]]):
        items = self._validated(answer)
        for document, what in cases:
            if self._accepts(items, document):
                raise Incorrect(f"the validator accepted {what}")

    @visible(points=1, requires=(Capability.VALIDATORS,), checks="required")
    def refuses_missing_fields(self, answer):
        """A phone missing any one of tenantId, kind, name, price or specs is refused"""
        self._check_refuses(answer, [(_without("phone", field, 400 + k), f"a phone without {field}")
                                     for k, field in enumerate(FIELDS)])

    @hidden(points=1, requires=(Capability.VALIDATORS,), checks="required")
    def refuses_missing_fields_of_every_kind(self, answer):
        """A shirt or a book missing one of the five fields is refused"""
        self._check_refuses(answer, [(_without(kind, field, 410 + 10 * j + k), f"a {kind} without {field}")
                                     for j, kind in enumerate(("shirt", "book")) for k, field in enumerate(FIELDS)])

    @visible(points=1, requires=(Capability.VALIDATORS,), checks="phone")
    def phone_specs(self, answer):
        """A phone without storageGb, with a string, fractional or null ramGb or storageGb, or a shirt's specs:
        refused"""
        self._check_refuses(answer, [
            (_item(501, "phone", {"ramGb": 8}), "a phone without specs.storageGb"),
            (_item(504, "phone", {"sizes": ["M"]}), "a phone with a shirt's specs (sizes, no ramGb)"),
            (_item(502, "phone", {"ramGb": "8", "storageGb": 128}), "a phone whose specs.ramGb is a string"),
            (_item(506, "phone", {"ramGb": None, "storageGb": 128}), "a phone whose specs.ramGb is null"),
            (_item(507, "phone", {"ramGb": 8, "storageGb": None}), "a phone whose specs.storageGb is null"),
            (_item(503, "phone", {"ramGb": 8.5, "storageGb": 128}), "a phone whose specs.ramGb is 8.5, not an "
                                                                    "integer"),
            (_item(505, "phone", {"ramGb": 8, "storageGb": 128.5}), "a phone whose specs.storageGb is 128.5, not "
                                                                    "an integer"),
        ])

    @hidden(points=1, requires=(Capability.VALIDATORS,), checks="phone")
    def phone_specs_other_cases(self, answer):
        """A phone without ramGb, with a string storageGb, or both null, is refused"""
        self._check_refuses(answer, [
            (_item(511, "phone", {"storageGb": 128}), "a phone without specs.ramGb"),
            (_item(512, "phone", {"ramGb": 8, "storageGb": "256GB"}), "a phone whose specs.storageGb is a string"),
            (_item(513, "phone", {"ramGb": None, "storageGb": None}), "a phone whose specs.ramGb and storageGb are "
                                                                      "null"),
        ])

    @visible(points=1, requires=(Capability.VALIDATORS,), checks="shirt")
    def shirt_specs(self, answer):
        """A shirt without sizes, or with sizes as a string or null, is refused"""
        self._check_refuses(answer, [
            (_item(601, "shirt", {"material": "linen"}), "a shirt without specs.sizes"),
            (_item(602, "shirt", {"sizes": "M"}), "a shirt whose specs.sizes is a string, not an array"),
            (_item(603, "shirt", {"sizes": None}), "a shirt whose specs.sizes is null, not an array"),
        ])

    @hidden(points=1, requires=(Capability.VALIDATORS,), checks="shirt")
    def shirt_specs_other_cases(self, answer):
        """A shirt with sizes as an object is refused"""
        self._check_refuses(answer, [(_item(611, "shirt", {"sizes": {"M": 3}}), "a shirt whose specs.sizes is an "
                                                                                  "object, not an array")])

    @visible(points=1, requires=(Capability.VALIDATORS,), checks="book")
    def book_specs(self, answer):
        """A book without isbn, or with a number as isbn, is refused"""
        self._check_refuses(answer, [
            (_item(701, "book", {"pages": 200}), "a book without specs.isbn"),
            (_item(702, "book", {"isbn": 9780001}), "a book whose specs.isbn is a number, not a string"),
        ])

    @visible(points=1, requires=(Capability.VALIDATORS,), checks="other_kind")
    def refuses_other_kinds(self, answer):
        """An item of another kind is refused, even with a book's specs"""
        self._check_refuses(answer, [(_item(801, "toaster", {}), "an item of kind 'toaster'"),
                                     (_item(802, "toaster", {"isbn": "978-0-7"}),
                                      "an item of kind 'toaster' with a book's specs"),
                                     (_item(803, "toy", {}), "an item of kind 'toy'")])

    @hidden(points=1, requires=(Capability.VALIDATORS,), checks="other_kind")
    def refuses_other_kinds_edge_cases(self, answer):
        """Kind 'Phone' (another spelling) or a number is refused"""
        self._check_refuses(answer, [
            (_item(811, "Phone", dict(VALID_SPECS["phone"])), "an item of kind 'Phone' (kinds are spelled "
                                                              "exactly)"),
            (_item(812, 7, {}), "an item whose kind is the number 7"),
        ])
