"""Lab 03's checkers: right, realistic wrong answers, and not attempted, on every backend.

Exercises 03.3 to 03.5 need $type queries or validators: on a backend without
them (mongomock) the tests assert "needs ..." instead of a verdict.
"""

import re
from decimal import Decimal

import pytest

from course import ____
from course.capabilities import Capability
from course.datasets_legacy import CATEGORIES, CURRENT_VERSION, MAX_TAGS, SKU_PATTERN
from course.lessons.lesson03 import REFERENCE_VALIDATOR
from tests.support.verdicts import assert_correct, assert_incorrect, assert_not_attempted, assert_unsupported, solution


@pytest.fixture
def lab(make_lab):
    return make_lab("03")


# 03.1 ----------------------------------------------------------------------
def _fields_table(**overrides):
    fields = {
        "_id": lambda v: True,
        "name": lambda v: isinstance(v, str) and v.strip() != "",
        "category": lambda v: v in CATEGORIES,
        "price_pence": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "sku": lambda v: isinstance(v, str) and re.fullmatch(SKU_PATTERN, v) is not None,
        "tags": lambda v: isinstance(v, list) and len(v) <= MAX_TAGS and all(isinstance(t, str) for t in v),
        "views": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "schema_version": lambda v: v == CURRENT_VERSION,
    }
    fields.update(overrides)
    return fields


def _validator(fields, required=("name", "category", "price_pence", "sku"), unknown_ok=False, stamp=True,
               exception=ValueError):
    def validate(doc):
        for name in required:
            if name not in doc:
                raise exception(f"missing field: {name}")
        for name, value in doc.items():
            if name not in fields:
                if unknown_ok:
                    continue
                raise exception(f"unknown field: {name}")
            if not fields[name](value):
                raise exception(f"bad field: {name}")
        return {**doc, "schema_version": CURRENT_VERSION} if stamp else dict(doc)
    return validate


def test_validate_right(lab):
    assert_correct(lab.q1, solution(lab, 1))


def test_validate_wrong(lab):
    # the seed's JavaScript, ported literally: only checks the fields that are present
    seed_port = _validator(_fields_table(), required=())
    assert_incorrect(lab.q1, {"validate": seed_port}, "no name")
    # isinstance(True, int)
    bools_pass = _validator(_fields_table(price_pence=lambda v: isinstance(v, int) and v >= 0,
                                          views=lambda v: isinstance(v, int) and v >= 0))
    assert_incorrect(lab.q1, {"validate": bools_pass}, "True (a bool posing as an int)")
    # strings of digits accepted
    digits = _validator(_fields_table(price_pence=lambda v: str(v).isdigit()))
    assert_incorrect(lab.q1, {"validate": digits}, '"2499"')
    # negative prices
    negative = _validator(_fields_table(price_pence=lambda v: isinstance(v, int) and not isinstance(v, bool)))
    assert_incorrect(lab.q1, {"validate": negative}, "-100")
    # unknown fields let through
    assert_incorrect(lab.q1, {"validate": _validator(_fields_table(), unknown_ok=True)}, "colour")
    # forgets to stamp the version
    assert_incorrect(lab.q1, {"validate": _validator(_fields_table(), stamp=False)}, "schema_version")
    # an error that does not say which field
    def vague(doc):
        try:
            return solution(lab, 1)["validate"](doc)
        except ValueError:
            raise ValueError("invalid document") from None
    assert_incorrect(lab.q1, {"validate": vague}, "does not name the field")
    # a long counter rejected (int32 range check)
    int32_only = _validator(_fields_table(views=lambda v: type(v) is int and 0 <= v < 2 ** 31))
    assert_incorrect(lab.q1, {"validate": int32_only}, "views counter is a long")
    # raises the wrong kind of exception
    assert_incorrect(lab.q1, {"validate": _validator(_fields_table(), exception=KeyError)}, "raise ValueError")

    # mutates the caller's document
    def mutates(doc):
        solution(lab, 1)["validate"](doc)
        doc["schema_version"] = CURRENT_VERSION
        return doc
    assert_incorrect(lab.q1, {"validate": mutates}, "changed the caller's dict")


def test_validate_not_attempted(lab):
    assert_not_attempted(lab.q1, {"validate": ____})
    assert_not_attempted(lab.q1, {"validate": lambda doc: ____})


# 03.2 ----------------------------------------------------------------------
def test_render_right(lab):
    assert_correct(lab.q2, solution(lab, 2))


def _render(pence_of):
    def render_product(doc):
        pence = pence_of(doc) if doc.get("schema_version", 1) == 1 else doc["price_pence"]
        return f"{doc['name']} ({doc['category']}): £{pence // 100}.{pence % 100:02d}"
    return render_product


def test_render_wrong(lab):
    # the float trap: int(4.35 * 100) == 434
    assert_incorrect(lab.q2, {"render_product": _render(lambda d: int(float(d["price"]) * 100))}, "£4.35")
    # assumes "12.34": strips the dot
    assert_incorrect(lab.q2, {"render_product": _render(lambda d: int(d["price"].replace(".", "")))},
                     '"12.5"')

    # knows only the current version
    def current_only(doc):
        pence = doc["price_pence"]
        return f"{doc['name']} ({doc['category']}): £{pence // 100}.{pence % 100:02d}"
    assert_incorrect(lab.q2, {"render_product": current_only}, "KeyError")

    # shows v1's string as is
    def raw_price(doc):
        if "price" in doc:
            return f"{doc['name']} ({doc['category']}): £{doc['price']}"
        return current_only(doc)
    assert_incorrect(lab.q2, {"render_product": raw_price}, '"12.5"')

    # rounds with Decimal but forgets the zero padding
    def unpadded(doc):
        pence = int(Decimal(doc["price"]) * 100) if "price" in doc else doc["price_pence"]
        return f"{doc['name']} ({doc['category']}): £{pence // 100}.{pence % 100}"
    assert_incorrect(lab.q2, {"render_product": unpadded}, "expected")


def test_render_not_attempted(lab):
    assert_not_attempted(lab.q2, {"render_product": ____})
    assert_not_attempted(lab.q2, {"render_product": lambda doc: ____})


# 03.3 ----------------------------------------------------------------------
def test_census_right(lab):
    if not lab.backend.supports(Capability.TYPE_QUERIES):
        assert_unsupported(lab.q3, solution(lab, 3), "$type queries")
        return
    assert_correct(lab.q3, solution(lab, 3))


def test_census_wrong(lab):
    if not lab.backend.supports(Capability.TYPE_QUERIES):
        assert_unsupported(lab.q3, {"field_types": lambda c, f: {}}, "$type queries")
        return
    right = solution(lab, 3)["field_types"]

    def no_missing(collection, field):
        return {k: v for k, v in right(collection, field).items() if k != "missing"}

    def python_type_names(collection, field):
        counts = {}
        for doc in collection.find({}, {field: 1}):
            name = type(doc[field]).__name__ if field in doc else "missing"
            counts[name] = counts.get(name, 0) + 1
        return counts

    def int_and_string_only(collection, field):
        counts = {t: collection.count_documents({field: {"$type": t}}) for t in ("int", "string", "double", "null")}
        counts["missing"] = collection.count_documents({field: {"$exists": False}})
        return counts

    def number_not_int(collection, field):
        counts = {"number": collection.count_documents({field: {"$type": "number"}})}
        counts["missing"] = collection.count_documents({field: {"$exists": False}})
        return counts

    assert_incorrect(lab.q3, {"field_types": no_missing}, "missing: 0")
    assert_incorrect(lab.q3, {"field_types": python_type_names}, "census of views")
    assert_incorrect(lab.q3, {"field_types": int_and_string_only}, "reports no long")
    assert_incorrect(lab.q3, {"field_types": number_not_int}, "reports no long")
    assert_incorrect(lab.q3, {"field_types": lambda c, f: [("int", 1)]}, "should be a dict")


def test_census_not_attempted(lab):
    if not lab.backend.supports(Capability.TYPE_QUERIES):
        assert_unsupported(lab.q3, {"field_types": ____}, "$type queries")
        return
    assert_not_attempted(lab.q3, {"field_types": ____})
    assert_not_attempted(lab.q3, {"field_types": lambda collection, field: ____})


# 03.4 ----------------------------------------------------------------------
def _schema(**properties):
    schema = REFERENCE_VALIDATOR["$jsonSchema"]
    merged = {**schema["properties"], **properties}
    return {"$jsonSchema": {**schema, "properties": {k: v for k, v in merged.items() if v is not None}}}


def test_validator_right(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        assert_unsupported(lab.q4, solution(lab, 4), "validators")
        return
    assert_correct(lab.q4, solution(lab, 4))


def test_validator_wrong(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        assert_unsupported(lab.q4, {"product_validator": _schema()}, "validators")
        return
    # the census lesson: views as plain int rejects the counter that became a long
    assert_incorrect(lab.q4, {"product_validator": _schema(views={"bsonType": "int", "minimum": 0})},
                     "rejected valid product 9004")
    # "number" lets doubles in
    assert_incorrect(lab.q4, {"product_validator": _schema(price_pence={"bsonType": "number", "minimum": 0})},
                     "price_pence is a double")
    # no minimum
    assert_incorrect(lab.q4, {"product_validator": _schema(price_pence={"bsonType": ["int", "long"]})},
                     "price_pence is negative")
    # the schema without the $jsonSchema wrapper
    assert_incorrect(lab.q4, {"product_validator": REFERENCE_VALIDATOR["$jsonSchema"]}, "wrap your schema")
    # no additionalProperties: False
    loose = {"$jsonSchema": {k: v for k, v in REFERENCE_VALIDATOR["$jsonSchema"].items()
                             if k != "additionalProperties"}}
    assert_incorrect(lab.q4, {"product_validator": loose}, "an unknown field")
    # additionalProperties: False without _id among the properties
    assert_incorrect(lab.q4, {"product_validator": _schema(_id=None)}, "rejected valid product")
    # maxItems forgotten on tags is fine, but a too-strict sku pattern is not
    assert_incorrect(lab.q4, {"product_validator": _schema(sku={"bsonType": "string", "pattern": "^[A-Z]{3}-0"})},
                     "rejected valid product")


def test_validator_not_attempted(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        assert_unsupported(lab.q4, {"product_validator": ____}, "validators")
        return
    assert_not_attempted(lab.q4, {"product_validator": ____})


# 03.5 ----------------------------------------------------------------------
def test_staging_right(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        assert_unsupported(lab.q5, solution(lab, 5), "validators")
        return
    assert_correct(lab.q5, solution(lab, 5))


def test_staging_wrong(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        assert_unsupported(lab.q5, {"staging": {"validationLevel": "strict"}}, "validators")
        return

    def staging(level, action):
        return {"staging": {"validationLevel": level, "validationAction": action}}

    assert_incorrect(lab.q5, staging("strict", "error"), "strict checks every update")
    assert_incorrect(lab.q5, staging("moderate", "warn"), "warn only logs")
    assert_incorrect(lab.q5, staging("strict", "warn"), "was accepted")
    assert_incorrect(lab.q5, staging("off", "error"), "level off checks nothing")
    assert_incorrect(lab.q5, staging("sometimes", "error"), "could not be created")
    assert_incorrect(lab.q5, {"staging": {"validationLevel": "moderate", "validator": {}}}, "not validator")
    assert_incorrect(lab.q5, {"staging": ("moderate", "error")}, "should be a dict")


def test_staging_not_attempted(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        assert_unsupported(lab.q5, {"staging": ____}, "validators")
        return
    assert_not_attempted(lab.q5, {"staging": ____})
