"""Lab 03, exercises 03.4 and 03.5: a ``$jsonSchema`` validator and its staging (validators needed; 03.5 judges
its form and spelling without them).

Behaviour, not spelling: the validator is put on a scratch collection and products are inserted into it
(each broken product breaks one rule and is a variant of a valid product the validator must accept); the
staging is tried by writing to an old catalog that carries the reference validator with the learner's
level and action.
"""

from __future__ import annotations

from typing import Any, Callable

from pymongo.errors import OperationFailure, WriteError

from course.store.capabilities import Capability
from course.datasets.legacy import CURRENT_VERSION, MAX_TAGS
from course.engine.exercise import Exercise, Incorrect, Unsupported, hidden, visible
from course.lessons.lesson03.data import (REFERENCE_VALIDATOR, broken_cases, first_of_version, fresh,
                                          hidden_valid_cases, staged_catalog, stored_base, valid_cases)
from course.toolkit.validation_settings import ACTIONS, LEVELS, action_as_run

DOCUMENT_VALIDATION_FAILED = 121
#: MongoDB 9.0's level (the lab's table lists it): "strict", and every document of the collection must pass,
#: so it cannot be set while invalid documents remain; the embedded engines refuse it
CONSTRAINT = "constraint"
#: the levels a MongoDB server accepts, as the lab's table lists them
MONGODB_LEVELS = tuple(dict.fromkeys((*LEVELS, CONSTRAINT)))


_SCHEMA_KEYWORDS = {"bsonType", "type", "required", "properties", "additionalProperties", "enum"}


def _failed_fields(error: WriteError) -> str:
    """Which properties errInfo says failed, in a few words (the full errInfo can be long)."""
    names: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key in ("propertyName", "missingProperties", "additionalProperties"):
                value = node.get(key)
                if isinstance(value, str) and value not in names:
                    names.append(value)
                elif isinstance(value, list):
                    names.extend(str(v) for v in value if str(v) not in names)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk((error.details or {}).get("errInfo", {}))
    return f"the server named {', '.join(names)}" if names else "code 121"


def _said(error: Exception) -> str:
    """What the server (or the driver) said, in one line: its errmsg, without pymongo's ``full error: {...}``."""
    details = getattr(error, "details", None)
    text = str(details.get("errmsg") or error) if isinstance(details, dict) else str(error)
    return text.split(", full error: ")[0].splitlines()[0][:200] if text else type(error).__name__


def _validator_of(answer) -> dict:
    """The validator to test: the learner's, or a bare schema wrapped (only the "form" check minds that)."""
    value = answer.product_validator
    if not isinstance(value, dict):
        raise Incorrect(f'product_validator should be a dict, {{"$jsonSchema": {{...}}}}; got a '
                        f"{type(value).__name__}")
    if "$jsonSchema" not in value and _SCHEMA_KEYWORDS & set(value):
        return {"$jsonSchema": value}
    return value


class ProductValidator(Exercise):
    id = "03.4"
    title = "A $jsonSchema validator for the current shape"
    answers = ("product_validator",)
    requires = frozenset({Capability.VALIDATORS})
    requirements = {
        "form": 'product_validator is the validator document, {"$jsonSchema": {...}}',
        "accepts": "every valid product is accepted: no tags or views, exactly MAX_TAGS tags, price_pence 0, "
                   "views 0, a long price or counter, an _id of any type",
        "required": "a product without schema_version, name, category, price_pence or sku is refused",
        "unknown": "a field not in the table is refused",
        "name": "name must be a non-empty string",
        "category": "category must be one of CATEGORIES",
        "price_pence": "price_pence must be an int or a long, 0 or more (never a double, a decimal, a string or "
                       "a bool)",
        "sku": "sku must be a string matching SKU_PATTERN",
        "tags": "tags must be an array of at most MAX_TAGS strings",
        "views": "views must be an int or a long, 0 or more (never a double, a decimal, a string or a bool)",
        "schema_version": "schema_version must be CURRENT_VERSION",
    }
    hints = (
        "The answer is the validator document: {\"$jsonSchema\": {\"bsonType\": \"object\", \"required\": [...], "
        "\"properties\": {...}}}.",
        "Counters and prices: {\"bsonType\": [\"int\", \"long\"], \"minimum\": 0}. A plain \"int\" refuses the "
        "counter $inc turned into a long, and \"number\" would let doubles in.",
        "sku: {\"bsonType\": \"string\", \"pattern\": SKU_PATTERN}; category: {\"enum\": list(CATEGORIES)}; "
        f"schema_version: {{\"enum\": [{CURRENT_VERSION}]}}; name: minLength 1.",
        "Unknown fields: \"additionalProperties\": False, which then needs \"_id\": {} among the properties.",
    )
    solution_code = f"""
from course.datasets.legacy import CATEGORIES, CURRENT_VERSION, MAX_TAGS, SKU_PATTERN

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

    def _collection(self, answer) -> Any:
        db = self.lab.scratch()
        try:
            db.create_collection("products", validator=fresh(_validator_of(answer)))
        except (OperationFailure, TypeError, ValueError) as error:
            raise Incorrect(f"the server refused product_validator: {_said(error)}") from None
        return db.products

    def _insert(self, products, document: dict) -> WriteError | None:
        try:
            products.insert_one(fresh(document))
        except WriteError as error:
            return error
        return None

    def _accepts(self, answer, cases) -> None:
        products = self._collection(answer)
        for what, document in cases:
            error = self._insert(products, document)
            if error is not None:
                raise Incorrect(f"the validator refused {what}, which is valid ({_failed_fields(error)})")

    def _refuses(self, answer, requirement: str, rule: str, hidden: bool = False) -> None:
        products = self._collection(answer)
        error = self._insert(products, stored_base())
        if error is not None:
            raise Incorrect(f"the validator refuses even a valid product ({_failed_fields(error)}), so it cannot "
                            f"show that it refuses a bad one ({rule})")
        for what, document, _ in broken_cases(requirement, stored=True, hidden=hidden):
            error = self._insert(products, document)
            if error is None:
                raise Incorrect(f"the validator accepted a product with {what}: {rule}")
            if error.code != DOCUMENT_VALIDATION_FAILED:
                raise Incorrect(f"inserting a product with {what} failed with code {error.code}, not "
                                f"{DOCUMENT_VALIDATION_FAILED} (document failed validation)")

    @visible(points=1, checks="form")
    def is_a_validator_document(self, answer):
        """product_validator is {"$jsonSchema": {...}}"""
        value = answer.product_validator
        value = self.expect_type("product_validator", value, dict, '{"$jsonSchema": {...}}')
        if "$jsonSchema" not in value:
            raise Incorrect('product_validator should be the validator document, {"$jsonSchema": {...}}: '
                            "wrap your schema in it")

    @visible(points=3, checks="accepts")
    def accepts_valid_products(self, answer):
        """Valid products: free, no tags or views, eight tags, a long counter, a long price"""
        self._accepts(answer, valid_cases(stored=True))

    @visible(points=1, checks="required")
    def refuses_missing_fields(self, answer):
        """A product without name, category, price_pence, sku or schema_version is refused"""
        self._refuses(answer, "required", "schema_version, name, category, price_pence and sku are required")

    @visible(points=1, checks="unknown")
    def refuses_unknown_fields(self, answer):
        """A field not in the table is refused"""
        self._refuses(answer, "unknown", "a field not in the table is refused")

    @visible(points=1, checks="name")
    def refuses_bad_names(self, answer):
        """name: empty, a number, null are refused"""
        self._refuses(answer, "name", "name must be a non-empty string")

    @visible(points=1, checks="category")
    def refuses_bad_categories(self, answer):
        """category outside CATEGORIES is refused"""
        self._refuses(answer, "category", "category must be one of CATEGORIES")

    @visible(points=2, checks="price_pence")
    def refuses_bad_prices(self, answer):
        """price_pence: a string, a bool, a negative number, doubles (24.99, 2499.0) and a decimal are refused"""
        self._refuses(answer, "price_pence", "price_pence must be an int or a long, 0 or more (never a double, a "
                                             "decimal, a string or a bool)")

    @visible(points=1, checks="sku")
    def refuses_bad_skus(self, answer):
        """sku not matching SKU_PATTERN is refused"""
        self._refuses(answer, "sku", "sku must match SKU_PATTERN as a whole, from start to end")

    @visible(points=1, checks="tags")
    def refuses_bad_tags(self, answer):
        """tags: a string, a list holding a number, MAX_TAGS + 1 tags are refused"""
        self._refuses(answer, "tags", f"tags must be an array of at most {MAX_TAGS} strings")

    @visible(points=2, checks="views")
    def refuses_bad_views(self, answer):
        """views: a bool, a string, a negative number, a double and a decimal are refused"""
        self._refuses(answer, "views", "views must be an int or a long, 0 or more (never a double, a decimal, a "
                                       "string or a bool)")

    @visible(points=1, checks="schema_version")
    def refuses_other_versions(self, answer):
        """schema_version 2 or "3" is refused"""
        self._refuses(answer, "schema_version", f"schema_version must be {CURRENT_VERSION}")

    @hidden(points=1, checks="accepts")
    def accepts_other_products(self, answer):
        """Seeded products of every category, other _id types, the catalog's version 3 products"""
        self._accepts(answer, hidden_valid_cases(stored=True))

    @hidden(points=1, checks="price_pence")
    def refuses_price_boundaries(self, answer):
        """price_pence -1, False, 0.0 and null are refused"""
        self._refuses(answer, "price_pence", "price_pence must be an int or a long, 0 or more", hidden=True)

    @hidden(points=1, checks="views")
    def refuses_views_boundaries(self, answer):
        """views False, null and a negative long are refused"""
        self._refuses(answer, "views", "views must be an int or a long, 0 or more", hidden=True)

    @hidden(points=1, checks="tags")
    def refuses_tags_boundaries(self, answer):
        """tags [null], MAX_TAGS + 2 tags and an object are refused"""
        self._refuses(answer, "tags", f"tags must be an array of at most {MAX_TAGS} strings", hidden=True)

    @hidden(points=1, checks="schema_version")
    def refuses_later_versions(self, answer):
        """schema_version 4 is refused too"""
        self._refuses(answer, "schema_version", f"schema_version must be {CURRENT_VERSION}", hidden=True)

    @hidden(points=1, checks="sku")
    def refuses_sku_boundaries(self, answer):
        """sku with a trailing space, or four letters, is refused"""
        self._refuses(answer, "sku", "sku must match SKU_PATTERN as a whole", hidden=True)


# ---------------------------------------------------------------------------
def _write(products, operation: Callable[[Any], Any]) -> WriteError | None:
    try:
        operation(products)
    except WriteError as error:
        return error
    return None


def _not_accepted(settings: dict) -> str:
    """Which of the two settings is not a value MongoDB accepts, as a phrase, or ""."""
    for key, accepted in (("validationLevel", MONGODB_LEVELS), ("validationAction", ACTIONS)):
        if key in settings and not (isinstance(settings[key], str) and settings[key] in accepted):
            return (f"{key} {settings[key]!r} is not one MongoDB accepts (its values are {', '.join(accepted)}, "
                    "spelt exactly so)")
    return ""


class Staging(Exercise):
    """Needs validators only for the writes: the form, the spelling and ``constraint`` are judged everywhere
    (in the lab's words, as a server judges them), so mongomock gives the verdict of every rule it can."""

    id = "03.5"
    title = "Choose the validation level and action for a catalog with legacy documents"
    answers = ("staging",)
    requirements = {
        "form": 'staging is a dict with exactly the keys "validationLevel" and "validationAction", '
                "each a value MongoDB accepts",
        "new_refused": "a new product in an old shape is refused from now on",
        "old_updatable": "the old products stay updatable: their views still count and their prices still change",
    }
    hints = (
        "validationAction: \"error\" refuses an invalid write, \"warn\" lets it through and only logs it.",
        "validationLevel: \"strict\" checks every insert and update; \"moderate\" does not check updates to "
        "documents that were already invalid.",
        "New writes in the old shape must fail, old documents must still be updatable: which level, which action?",
    )
    solution_code = """
staging = {"validationLevel": "moderate", "validationAction": "error"}
"""

    def _settings(self, answer) -> dict:
        """The two settings from the answer (extra keys are the "form" check's business)."""
        staging = answer.staging
        if not isinstance(staging, dict):
            raise Incorrect(f'staging should be a dict, {{"validationLevel": ..., "validationAction": ...}}; '
                            f"got a {type(staging).__name__}")
        settings = {k: staging[k] for k in ("validationLevel", "validationAction") if k in staging}
        if not settings:
            raise Incorrect('staging has neither "validationLevel" nor "validationAction"')
        return settings

    def _catalog(self, answer) -> Any:
        settings = self._settings(answer)
        refused = _not_accepted(settings)
        if refused:  # judged as a server answers, in the lab's words (an engine's message may list fewer values)
            raise Incorrect(f"{refused}: a server refuses it when the validator is set, so no validator would go on "
                            "today and nothing is staged")
        if settings.get("validationLevel") == CONSTRAINT:  # judged as the lab's table documents it, everywhere
            raise Incorrect(f"validationLevel {CONSTRAINT!r} cannot be set while the collection holds documents "
                            "that fail the validator, and this catalog still holds version 1 and version 2 "
                            "products: MongoDB refuses the setting, so no validator would go on today (and once "
                            "set, it checks every update as strict does)")
        if not self.lab.backend.supports(Capability.VALIDATORS):
            raise Unsupported(Capability.VALIDATORS)
        created = dict(settings)
        if "validationAction" in created:  # errorAndLog judged as error where it is missing (no 03.5 rule is the log)
            created["validationAction"] = action_as_run(created["validationAction"], self.lab.backend)
        db = self.lab.scratch()
        try:
            db.create_collection("products", validator=fresh(REFERENCE_VALIDATOR), **created)
        except (OperationFailure, TypeError, ValueError) as error:
            raise Incorrect(f"the catalog could not be created with {settings}: {_said(error)}") from None
        db.products.insert_many(staged_catalog(), bypass_document_validation=True)
        return db.products

    def _must_fail(self, products, what: str, document: dict) -> None:
        if _write(products, lambda p: p.insert_one(document)) is None:
            raise Incorrect(f"{what} was accepted: the shop must stop accepting new documents in an old shape "
                            "today (warn only logs the write; level off checks nothing)")

    def _must_succeed(self, products, what: str, operation: Callable[[Any], Any]) -> None:
        error = _write(products, operation)
        if error is not None:
            raise Incorrect(f"{what} was refused ({_failed_fields(error)}): the old products must stay updatable "
                            "until the batch migration has run (strict checks every update, even to documents "
                            "that were invalid before)")

    @visible(points=1, checks="form")
    def two_settings(self, answer):
        """staging is {"validationLevel": ..., "validationAction": ...} with values MongoDB accepts"""
        staging = self.expect_type("staging", answer.staging, dict,
                                   '{"validationLevel": "...", "validationAction": "..."}')
        keys = {"validationLevel", "validationAction"}
        if set(staging) != keys:
            missing = sorted(keys - set(staging))
            extra = sorted(str(k) for k in set(staging) - keys)
            raise Incorrect("staging should have exactly the keys validationLevel and validationAction"
                            + (f"; it lacks {', '.join(missing)}" if missing else "")
                            + (f"; it also has {', '.join(extra)}" if extra else ""))
        refused = _not_accepted(staging)
        if refused:
            raise Incorrect(refused)

    @visible(points=2, checks="new_refused")
    def new_old_shapes_refused(self, answer):
        """A new product in the version 1 or version 2 shape is refused"""
        products = self._catalog(answer)
        self._must_fail(products, "a new product in the version 2 shape", {**first_of_version(2), "_id": 5001})
        self._must_fail(products, "a new product in the version 1 shape", {**first_of_version(1), "_id": 5002})

    @visible(points=2, checks="old_updatable")
    def old_products_updatable(self, answer):
        """A version 1 product's views still count; a version 2 product's price still changes"""
        products = self._catalog(answer)
        v1, v2 = first_of_version(1), first_of_version(2)
        self._must_succeed(products, f"$inc of views on version 1 product {v1['_id']}",
                           lambda p: p.update_one({"_id": v1["_id"]}, {"$inc": {"views": 1}}))
        self._must_succeed(products, f"a new price_pence for version 2 product {v2['_id']}",
                           lambda p: p.update_one({"_id": v2["_id"]}, {"$set": {"price_pence": 999}}))

    @hidden(points=1, checks="new_refused")
    def other_new_old_shapes_refused(self, answer):
        """Other old-shape products, and the feed's raw row, are refused as new documents"""
        products = self._catalog(answer)
        self._must_fail(products, "another new product in the version 1 shape",
                        {**first_of_version(1, skip=1), "_id": 5003})
        self._must_fail(products, "the price feed's raw row", {"_id": 5004, "sku": "KIT-0091", "name": "Kettle",
                                                               "category": "kitchen", "price": "2499"})
        self._must_fail(products, "a new product in the version 2 shape, another one",
                        {**first_of_version(2, skip=1), "_id": 5005})

    @hidden(points=1, checks="old_updatable")
    def every_old_product_updatable(self, answer):
        """Every old product's views count at once; a version 1 price changes"""
        products = self._catalog(answer)
        v1 = first_of_version(1, skip=1)
        self._must_succeed(products, "$inc of views on every version 1 and 2 product",
                           lambda p: p.update_many({"schema_version": {"$ne": CURRENT_VERSION}},
                                                   {"$inc": {"views": 1}}))
        self._must_succeed(products, f"a new price for version 1 product {v1['_id']}",
                           lambda p: p.update_one({"_id": v1["_id"]}, {"$set": {"price": "3.99"}}))
