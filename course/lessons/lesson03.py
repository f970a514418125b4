"""Lab 03, validation and versioning: exercises and their checks.

The boundary check (03.1) and the reader of old versions (03.2) are plain
Python and are graded on every backend.  The census (03.3) needs ``$type``
queries that tell int from long; the server-side validator (03.4) and its
staging (03.5) need validators: on a backend that lacks them those exercises
report what they need instead of a verdict.  Behavioural checks run in the
scratch database, seeded from :mod:`course.datasets_legacy`.
"""

from __future__ import annotations

from typing import Any, Callable

from bson.int64 import Int64
from pymongo.errors import OperationFailure, WriteError

from course.capabilities import Capability
from course.census import type_census
from course.datasets_legacy import (CATEGORIES, CURRENT_VERSION, INT32_MAX, MAX_TAGS, POPULAR_ID, SKU_PATTERN,
                                    as_version, broken_products, legacy_catalog, pounds, valid_products)
from course.exercise import Exercise, Incorrect, NotAttempted, hidden, visible
from course.placeholder import is_placeholder

TITLE = "Validation and versioning"
SLUG = "validation-and-versioning"

CHECK_PRODUCTS = 60  #: the scratch catalog of the behavioural checks (small: the wire server is slow)
DOCUMENT_VALIDATION_FAILED = 121

#: The reference validator (exercise 03.4's answer), used to set up exercise 03.5's checks.
REFERENCE_VALIDATOR = {
    "$jsonSchema": {
        "bsonType": "object",
        "required": ["_id", "schema_version", "name", "category", "price_pence", "sku"],
        "additionalProperties": False,
        "properties": {
            "_id": {},
            "schema_version": {"enum": [CURRENT_VERSION]},
            "name": {"bsonType": "string", "minLength": 1},
            "category": {"enum": list(CATEGORIES)},
            "price_pence": {"bsonType": ["int", "long"], "minimum": 0},
            "sku": {"bsonType": "string", "pattern": SKU_PATTERN},
            "tags": {"bsonType": "array", "maxItems": MAX_TAGS, "items": {"bsonType": "string"}},
            "views": {"bsonType": ["int", "long"], "minimum": 0},
        },
    }
}


def card(product: dict) -> str:
    """The reference rendering of a product (any version), from its generator values."""
    return f"{product['name']} ({product['category']}): £{pounds(_pence(product))}"


def _pence(product: dict) -> int:
    if "price_pence" in product:
        return product["price_pence"]
    whole, _, fraction = product["price"].partition(".")
    return int(whole) * 100 + int((fraction + "00")[:2])


def _attempt(name: str, function: Callable, *args: Any) -> tuple[bool, Any]:
    """Call learner code expected to raise sometimes: (True, value) or (False, exception)."""
    if is_placeholder(function):
        raise NotAttempted(name)
    if not callable(function):
        raise Incorrect(f"{name} should be a function, but it is a {type(function).__name__}")
    try:
        value = function(*args)
    except (NotAttempted, Incorrect):
        raise
    except Exception as error:
        return False, error
    if is_placeholder(value):
        raise NotAttempted(name)
    return True, value


# ---------------------------------------------------------------------------
def _new_product(**changes) -> dict:
    """A valid current-version product as a writer sends it (no schema_version yet)."""
    product = {"_id": 91, "name": "Kettle", "category": "kitchen", "price_pence": 2499, "sku": "KIT-0091",
               "tags": ["steel", "1.7l"], "views": 0}
    for key, value in changes.items():
        if value is None:
            product.pop(key, None)
        else:
            product[key] = value
    return product


#: Documents validate() must accept (without schema_version, as writers send them, or already stamped).
GOOD_DOCUMENTS = (
    ("a new product", _new_product()),
    ("a free product (price 0)", _new_product(price_pence=0)),
    ("a product without tags or views", _new_product(tags=None, views=None)),
    ("a product whose views counter is a long", _new_product(views=Int64(INT32_MAX + 1))),
    ("a product already stamped with the current version", _new_product(schema_version=CURRENT_VERSION)),
    ("a product without an _id yet", _new_product(_id=None)),
)

#: (what is wrong, document, the fields an error message may name).
BAD_DOCUMENTS = (
    ('price_pence "2499" (a string that looks like a number)', _new_product(price_pence="2499"), ("price_pence",)),
    ("price_pence 24.99 (a float)", _new_product(price_pence=24.99), ("price_pence",)),
    ("price_pence -100", _new_product(price_pence=-100), ("price_pence",)),
    ("price_pence True (a bool posing as an int)", _new_product(price_pence=True), ("price_pence",)),
    ("no price_pence", _new_product(price_pence=None), ("price_pence",)),
    ("no name", _new_product(name=None), ("name",)),
    ('name ""', _new_product(name=""), ("name",)),
    ("name 42", _new_product(name=42), ("name",)),
    ('category "kitchenware"', _new_product(category="kitchenware"), ("category",)),
    ('sku "kit-91"', _new_product(sku="kit-91"), ("sku",)),
    ("no sku", _new_product(sku=None), ("sku",)),
    ('tags "steel,1.7l" (a string, not a list)', _new_product(tags="steel,1.7l"), ("tags",)),
    ("tags holding a number", _new_product(tags=["steel", 17]), ("tags",)),
    (f"{MAX_TAGS + 1} tags", _new_product(tags=[f"t{i}" for i in range(MAX_TAGS + 1)]), ("tags",)),
    ("views True (a bool posing as an int)", _new_product(views=True), ("views",)),
    ('views "1,204"', _new_product(views="1,204"), ("views",)),
    ('an unknown field "colour"', _new_product(colour="red"), ("colour",)),
    ('the feed\'s row: price "2499" instead of price_pence', _new_product(price_pence=None, price="2499"),
     ("price", "price_pence")),
    ("a version 2 document (schema_version 2, no sku)", _new_product(sku=None, schema_version=2),
     ("sku", "schema_version")),
)


class BoundaryValidation(Exercise):
    id = "03.1"
    title = "Validate at the boundary and stamp the version"
    answers = ("validate",)
    hints = (
        "Keep a table of fields: name -> a check that returns True for a good value. "
        "Then: every required field present, every field known, every value passing its check.",
        "isinstance(True, int) is True in Python: reject bools before you accept ints. "
        "A string like \"2499\" is not an int either, however much it looks like one.",
        "Raise ValueError(f\"bad field: {name}\") so the message names the field, and return a new dict: "
        f"{{**doc, \"schema_version\": {CURRENT_VERSION}}}.",
    )
    solution_code = f"""
import re
from course.datasets_legacy import CATEGORIES, CURRENT_VERSION, MAX_TAGS, SKU_PATTERN

def validate(doc):
    \"\"\"Check a product against the current shape; return a copy stamped with the current version.\"\"\"
    fields = {{
        "_id": lambda v: True,
        "name": lambda v: isinstance(v, str) and v.strip() != "",
        "category": lambda v: v in CATEGORIES,
        "price_pence": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "sku": lambda v: isinstance(v, str) and re.fullmatch(SKU_PATTERN, v) is not None,
        "tags": lambda v: isinstance(v, list) and len(v) <= MAX_TAGS and all(isinstance(t, str) for t in v),
        "views": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "schema_version": lambda v: v == CURRENT_VERSION,
    }}
    for name in ("name", "category", "price_pence", "sku"):
        if name not in doc:
            raise ValueError(f"missing field: {{name}}")
    for name, value in doc.items():
        if name not in fields:
            raise ValueError(f"unknown field: {{name}}")
        if not fields[name](value):
            raise ValueError(f"bad field: {{name}} = {{value!r}}")
    return {{**doc, "schema_version": CURRENT_VERSION}}
"""

    def _accepts(self, answer, what, document):
        original = {k: (list(v) if isinstance(v, list) else v) for k, v in document.items()}
        ok, value = _attempt("validate", answer.validate, dict(document))
        if not ok:
            raise Incorrect(f"validate rejected {what}, which is valid: "
                            f"{type(value).__name__}: {value}")
        value = self.expect_type("validate(...)", value, dict, "the document with schema_version added")
        if value.get("schema_version") != CURRENT_VERSION or isinstance(value.get("schema_version"), bool):
            raise Incorrect(f"validate should stamp schema_version = {CURRENT_VERSION} on {what}, "
                            f"got {value.get('schema_version')!r}")
        changed = sorted(k for k in set(original) | set(value)
                         if k != "schema_version" and value.get(k, "<absent>") != original.get(k, "<absent>"))
        if changed:
            raise Incorrect(f"validate changed {', '.join(changed)} of {what}: "
                            "it should only check the fields and add schema_version")

    def _rejects(self, answer, what, document, fields):
        ok, value = _attempt("validate", answer.validate, dict(document))
        if ok:
            raise Incorrect(f"validate accepted a product with {what}: it should raise ValueError")
        if not isinstance(value, (ValueError, TypeError)):
            raise Incorrect(f"validate raised {type(value).__name__} for a product with {what}: "
                            "raise ValueError (or TypeError), so callers can catch a bad write")
        if not any(f in str(value) for f in fields):
            raise Incorrect(f"validate rejected a product with {what}, but its message ({value}) does not name "
                            f"the field: say which one, e.g. \"bad field: {fields[0]}\"")

    @visible(points=1)
    def accepts_and_stamps(self, answer):
        """A valid product comes back as a copy stamped with the current schema_version"""
        self._accepts(answer, "a new product", _new_product())
        document = _new_product()
        _attempt("validate", answer.validate, document)
        if document != _new_product():
            raise Incorrect("validate changed the caller's dict: leave it alone and return a new one")

    @visible(points=1)
    def rejects_the_feed_string(self, answer):
        """A price that is a string of digits is rejected, naming price_pence"""
        self._rejects(answer, *BAD_DOCUMENTS[0])

    @visible(points=1)
    def rejects_missing_name(self, answer):
        """A product without a name is rejected, naming the field"""
        self._rejects(answer, *BAD_DOCUMENTS[5])

    @hidden(points=2)
    def table_of_bad_documents(self, answer):
        """Every bad document in a table of them is rejected with a message naming its field"""
        for what, document, fields in BAD_DOCUMENTS:
            self._rejects(answer, what, document, fields)

    @hidden(points=2)
    def table_of_good_documents(self, answer):
        """Every valid variant is accepted: price 0, no tags, a long counter, already stamped, no _id yet"""
        for what, document in GOOD_DOCUMENTS:
            self._accepts(answer, what, document)


# ---------------------------------------------------------------------------
def _same_product_in_each_version(product: dict) -> list[dict]:
    return [as_version(product, version) for version in (1, 2, CURRENT_VERSION)]


class ReadEveryVersion(Exercise):
    id = "03.2"
    title = "A reader that renders versions 1, 2 and 3 the same way"
    answers = ("render_product",)
    hints = (
        "Branch on doc.get(\"schema_version\", 1): version 1 documents have no schema_version field.",
        "Version 1 has price, a string of pounds (\"24.99\", \"12.5\", \"7\"); versions 2 and 3 have price_pence. "
        "Turn both into pence first, then format once.",
        "float(\"4.35\") * 100 is 434.99999999999994: use Decimal(doc[\"price\"]) * 100, or split on the dot.",
        "Format pence as f\"£{pence // 100}.{pence % 100:02d}\".",
    )
    solution_code = """
from decimal import Decimal

def render_product(doc):
    \"\"\"One line of the product card, the same for every version of the document.\"\"\"
    if doc.get("schema_version", 1) == 1:
        pence = int(Decimal(doc["price"]) * 100)
    else:
        pence = doc["price_pence"]
    return f"{doc['name']} ({doc['category']}): £{pence // 100}.{pence % 100:02d}"
"""

    def _renders(self, answer, document, expected, what):
        got = self.call("render_product", answer.render_product, dict(document))
        if got != expected:
            raise Incorrect(f"render_product of {what} gave {got!r}, expected {expected!r}")

    @visible(points=1)
    def current_version(self, answer):
        """A version 3 and a version 2 document render as the card line"""
        product = {"_id": 91, "name": "Kettle", "category": "kitchen", "price_pence": 2499, "tags": [], "views": 0}
        expected = "Kettle (kitchen): £24.99"
        self._renders(answer, as_version(product, CURRENT_VERSION), expected, "the version 3 kettle")
        self._renders(answer, as_version(product, 2), expected, "the version 2 kettle")

    @visible(points=1)
    def old_version(self, answer):
        """A version 1 document (price a string of pounds, no price_pence) renders the same way"""
        product = {"_id": 91, "name": "Kettle", "category": "kitchen", "price_pence": 2499, "tags": [], "views": 0}
        self._renders(answer, as_version(product, 1), "Kettle (kitchen): £24.99",
                      'the version 1 kettle {"price": "24.99", no schema_version}')

    @hidden(points=2)
    def seeded_catalog(self, answer):
        """Every product of the seeded legacy catalog, read back from the database, renders right"""
        products = self.lab.scratch().products
        products.insert_many(legacy_catalog(n=CHECK_PRODUCTS))
        for document in products.find({}).sort("_id", 1):
            version = document.get("schema_version", 1)
            self._renders(answer, document, card(document), f"product {document['_id']} (version {version})")

    @hidden(points=1)
    def same_product_every_version(self, answer):
        """The same product written in each version renders identically, awkward prices included"""
        for pence in (435, 29, 115, 1050, 700, 12999):
            product = {"_id": 5, "name": "Oak Whisk No. 5", "category": "kitchen", "price_pence": pence,
                       "tags": [], "views": 1}
            expected = card(product)
            for document in _same_product_in_each_version(product):
                self._renders(answer, document, expected,
                              f"version {document.get('schema_version', 1)} with price {pounds(pence)}")

    @hidden(points=1)
    def short_pound_strings(self, answer):
        """Version 1 prices written without two decimals ("12.5", "7") render with two"""
        for price, shown in (("12.5", "£12.50"), ("7", "£7.00"), ("0.05", "£0.05")):
            document = {"_id": 1, "name": "Trowel", "category": "garden", "price": price, "views": 3}
            self._renders(answer, document, f"Trowel (garden): {shown}", f'version 1 with price "{price}"')


# ---------------------------------------------------------------------------
def census_collection(lab) -> Any:
    """A scratch catalog whose views counters hold several types, one of them made long by $inc."""
    products = lab.scratch().products
    documents = legacy_catalog(n=CHECK_PRODUCTS)
    documents[10]["views"] = "1,204"  # a CSV import
    documents[11]["views"] = 12.0  # a JavaScript script
    documents[12]["views"] = Int64(40)  # a Java importer wrote longs
    del documents[13]["views"]  # never counted
    documents[14]["views"] = None
    products.insert_many(documents)
    products.update_one({"_id": POPULAR_ID}, {"$inc": {"views": 1}})
    return products


class FieldTypes(Exercise):
    id = "03.3"
    title = "Audit before you validate: a $type census"
    answers = ("field_types",)
    requires = frozenset({Capability.TYPE_QUERIES})
    hints = (
        "For each type name in CENSUS_TYPES, count_documents({field: {\"$type\": type_name}}).",
        "Documents without the field match no $type: count them with {field: {\"$exists\": False}} "
        "under the key \"missing\".",
        "Leave out the types nobody has: the answer for views looks like {\"int\": 55, \"long\": 2, ...}.",
    )
    solution_code = """
CENSUS_TYPES = ("int", "long", "double", "decimal", "string", "bool", "null", "object", "array")

def field_types(collection, field):
    \"\"\"Documents per BSON type of field, plus "missing"; types nobody has are left out.\"\"\"
    counts = {}
    for type_name in CENSUS_TYPES:
        n = collection.count_documents({field: {"$type": type_name}})
        if n:
            counts[type_name] = n
    missing = collection.count_documents({field: {"$exists": False}})
    if missing:
        counts["missing"] = missing
    return counts
"""

    def _compare(self, answer, products, field):
        got = self.call("field_types", answer.field_types, products, field)
        got = self.expect_type("field_types(...)", got, dict, '{"int": 55, "long": 2, "missing": 1}')
        got = {k: v for k, v in got.items() if v}
        expected = type_census(products, field, self.lab.backend).counts
        if got == expected:
            return
        if field == "views" and not got.get("long"):
            raise Incorrect(f"the census of views reports no long, but $inc pushed the popular product's counter "
                            f"past the int32 maximum: it is a long now (expected {expected}, got {got})")
        wrong = sorted(set(got) | set(expected), key=str)
        details = ", ".join(f"{t}: {got.get(t, 0)} (expected {expected.get(t, 0)})"
                            for t in wrong if got.get(t, 0) != expected.get(t, 0))
        raise Incorrect(f"the census of {field} is off: {details}")

    @visible(points=2)
    def views_census(self, answer):
        """The census of views finds every type, the long counter included"""
        self._compare(answer, census_collection(self.lab), "views")

    @hidden(points=1)
    def price_census(self, answer):
        """The census of price_pence counts the version 1 documents as missing"""
        self._compare(answer, census_collection(self.lab), "price_pence")

    @hidden(points=1)
    def old_price_census(self, answer):
        """The census of version 1's price field finds strings, and every newer document missing"""
        self._compare(answer, census_collection(self.lab), "price")


# ---------------------------------------------------------------------------
def _created(lab, options: dict) -> Any:
    """A scratch products collection created with the learner's options; errors become Incorrect."""
    db = lab.scratch()
    try:
        db.create_collection("products", **options)
    except (OperationFailure, TypeError, ValueError) as error:
        raise Incorrect(f"the collection could not be created with these settings: {error}") from None
    return db.products


def _reason(error: WriteError) -> str:
    info = (error.details or {}).get("errInfo", {})
    return str(info.get("details", info))[:300]


class ProductValidator(Exercise):
    id = "03.4"
    title = "A $jsonSchema validator for the current shape"
    answers = ("product_validator",)
    requires = frozenset({Capability.VALIDATORS})
    hints = (
        "The answer is the validator document: {\"$jsonSchema\": {\"bsonType\": \"object\", \"required\": [...], "
        "\"properties\": {...}}}.",
        "Counters and prices: {\"bsonType\": [\"int\", \"long\"], \"minimum\": 0}. A plain \"int\" rejects the "
        "counter $inc turned into a long, and \"number\" would let doubles in.",
        "sku: {\"bsonType\": \"string\", \"pattern\": SKU_PATTERN}; category: {\"enum\": list(CATEGORIES)}; "
        f"schema_version: {{\"enum\": [{CURRENT_VERSION}]}}; name: minLength 1.",
        "Unknown fields: \"additionalProperties\": False, which then needs \"_id\": {} among the properties.",
    )
    solution_code = f"""
from course.datasets_legacy import CATEGORIES, CURRENT_VERSION, MAX_TAGS, SKU_PATTERN

product_validator = {{
    "$jsonSchema": {{
        "bsonType": "object",
        "required": ["_id", "schema_version", "name", "category", "price_pence", "sku"],
        "additionalProperties": False,
        "properties": {{
            "_id": {{}},
            "schema_version": {{"enum": [CURRENT_VERSION]}},
            "name": {{"bsonType": "string", "minLength": 1}},
            "category": {{"enum": list(CATEGORIES)}},
            "price_pence": {{"bsonType": ["int", "long"], "minimum": 0}},
            "sku": {{"bsonType": "string", "pattern": SKU_PATTERN}},
            "tags": {{"bsonType": "array", "maxItems": MAX_TAGS, "items": {{"bsonType": "string"}}}},
            "views": {{"bsonType": ["int", "long"], "minimum": 0}},
        }},
    }}
}}
"""

    def _collection(self, answer):
        validator = self.expect_type("product_validator", answer.product_validator, dict,
                                     '{"$jsonSchema": {...}}')
        if "$jsonSchema" not in validator:
            raise Incorrect('product_validator should be the validator document, {"$jsonSchema": {...}}: '
                            "wrap your schema in it")
        return _created(self.lab, {"validator": validator})

    def _accepts_valid(self, products):
        for product in valid_products():
            try:
                products.insert_one(dict(product))
            except WriteError as error:
                raise Incorrect(f"the validator rejected valid product {product['_id']} "
                                f"({product}): {_reason(error)}") from None

    def _rejects(self, products, broken):
        for what, product in broken:
            try:
                products.insert_one(dict(product))
            except WriteError as error:
                if error.code != DOCUMENT_VALIDATION_FAILED:
                    raise Incorrect(f"inserting a product where {what} failed with code {error.code}, "
                                    f"not {DOCUMENT_VALIDATION_FAILED} (validation)") from None
                continue
            products.delete_one({"_id": product["_id"]})
            raise Incorrect(f"the validator accepted a product where {what}")

    @visible(points=2)
    def accepts_every_valid_product(self, answer):
        """Every valid product is accepted: price 0, no tags, eight tags, a views counter that is a long"""
        self._accepts_valid(self._collection(answer))

    @visible(points=2)
    def rejects_the_common_mistakes(self, answer):
        """A string price, a negative price and a missing name are each rejected with code 121"""
        broken = dict(broken_products())
        picked = ("price_pence is a string", "price_pence is negative", "name is missing")
        self._rejects(self._collection(answer), [(what, broken[what]) for what in picked])

    @hidden(points=3)
    def rejects_every_broken_product(self, answer):
        """Every broken product of the seeded set is rejected"""
        self._rejects(self._collection(answer), broken_products())

    @hidden(points=1)
    def stamped_writes_pass(self, answer):
        """Documents from the seeded catalog's current version all pass"""
        products = self._collection(answer)
        for product in legacy_catalog(n=CHECK_PRODUCTS):
            if product.get("schema_version") != CURRENT_VERSION:
                continue
            try:
                products.insert_one(product)
            except WriteError as error:
                raise Incorrect(f"the validator rejected seeded product {product['_id']}: {_reason(error)}") from None


# ---------------------------------------------------------------------------
def _staged_collection(lab, staging: dict) -> Any:
    """A scratch catalog holding legacy documents, under the reference validator with the learner's staging."""
    products = _created(lab, {"validator": REFERENCE_VALIDATOR, **staging})
    products.insert_many(legacy_catalog(n=CHECK_PRODUCTS), bypass_document_validation=True)
    return products


def _write(products, operation: Callable[[Any], Any]) -> WriteError | None:
    try:
        operation(products)
    except WriteError as error:
        return error
    return None


def _first_of_version(version: int) -> dict:
    return next(p for p in legacy_catalog(n=CHECK_PRODUCTS) if p.get("schema_version", 1) == version)


class Staging(Exercise):
    id = "03.5"
    title = "Choose the validation level and action for a catalog with legacy documents"
    answers = ("staging",)
    requires = frozenset({Capability.VALIDATORS})
    hints = (
        "validationAction: \"error\" rejects an invalid write, \"warn\" lets it through and only logs it.",
        "validationLevel: \"strict\" checks every insert and update; \"moderate\" does not check updates to "
        "documents that were already invalid.",
        "New writes in the old shape must fail, old documents must still be updatable: which level, which action?",
    )
    solution_code = """
staging = {"validationLevel": "moderate", "validationAction": "error"}
"""

    def _staging(self, answer) -> dict:
        staging = self.expect_type("staging", answer.staging, dict,
                                   '{"validationLevel": "...", "validationAction": "..."}')
        unknown = sorted(set(staging) - {"validationLevel", "validationAction"})
        if unknown or not staging:
            raise Incorrect("staging should hold validationLevel and validationAction only"
                            + (f", not {', '.join(unknown)}" if unknown else ""))
        return dict(staging)

    def _must_succeed(self, products, what, operation, why):
        error = _write(products, operation)
        if error is not None:
            raise Incorrect(f"{what} was rejected ({_reason(error)}): {why}")

    def _must_fail(self, products, what, operation, why):
        if _write(products, operation) is None:
            raise Incorrect(f"{what} was accepted: {why}")

    @visible(points=2)
    def new_bad_writes_fail(self, answer):
        """A new product in the old shape is rejected, a valid new product is accepted"""
        products = _staged_collection(self.lab, self._staging(answer))
        old_shape = {**_first_of_version(2), "_id": 5001}
        self._must_fail(products, "a new product in the version 2 shape", lambda p: p.insert_one(old_shape),
                        "the shop must stop accepting new documents in an old shape today "
                        "(warn only logs the write; level off checks nothing)")
        valid = {**valid_products()[0], "_id": 5002}
        self._must_succeed(products, "a valid new product", lambda p: p.insert_one(valid),
                           "the validator itself accepts it")

    @visible(points=2)
    def legacy_documents_stay_usable(self, answer):
        """The views counter of a version 1 product can still be incremented"""
        products = _staged_collection(self.lab, self._staging(answer))
        legacy = _first_of_version(1)
        self._must_succeed(products, f"$inc of views on version 1 product {legacy['_id']}",
                           lambda p: p.update_one({"_id": legacy["_id"]}, {"$inc": {"views": 1}}),
                           "strict checks every update, even to documents that were invalid before: "
                           "the old products stop counting views until the migration has run")

    @hidden(points=1)
    def migrated_documents_stay_valid(self, answer):
        """A legacy product migrated on write is accepted, and a valid product cannot be broken"""
        products = _staged_collection(self.lab, self._staging(answer))
        legacy = _first_of_version(1)
        migrated = as_version({**legacy, "price_pence": _pence(legacy), "tags": []}, CURRENT_VERSION)
        self._must_succeed(products, f"replacing version 1 product {legacy['_id']} by its version 3 form",
                           lambda p: p.replace_one({"_id": legacy["_id"]}, migrated),
                           "a migration on write must go through")
        self._must_fail(products, "removing the sku of a valid version 3 product",
                        lambda p: p.update_one({"_id": legacy["_id"]}, {"$unset": {"sku": ""}}),
                        "a document that is valid must stay valid")

    @hidden(points=1)
    def legacy_documents_of_version_2(self, answer):
        """A version 2 product's price can still be changed, and a new string price is still refused"""
        products = _staged_collection(self.lab, self._staging(answer))
        legacy = _first_of_version(2)
        self._must_succeed(products, f"a new price for version 2 product {legacy['_id']}",
                           lambda p: p.update_one({"_id": legacy["_id"]}, {"$set": {"price_pence": 999}}),
                           "the old products must stay updatable until the batch migration has run")
        current = _first_of_version(CURRENT_VERSION)
        self._must_fail(products, f'price_pence "2499" on version 3 product {current["_id"]}',
                        lambda p: p.update_one({"_id": current["_id"]}, {"$set": {"price_pence": "2499"}}),
                        "a valid product must stay valid")


EXERCISES = (BoundaryValidation, ReadEveryVersion, FieldTypes, ProductValidator, Staging)
