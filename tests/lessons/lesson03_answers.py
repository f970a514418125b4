"""Learner answers to lab 03, written from the notebook alone (before reading the checkers).

Right answers use other idioms than the reference solutions; each wrong answer makes one mistake the
lesson warns about.  tests/lessons/test_lesson03.py declares which requirement each one breaks.
"""
import copy
import re
from collections import Counter
from decimal import Decimal, ROUND_HALF_UP

from bson.int64 import Int64
from bson.son import SON

from course.datasets.legacy import CATEGORIES, CURRENT_VERSION, MAX_TAGS, SKU_PATTERN

REQUIRED = ("name", "category", "price_pence", "sku")


# ---------------------------------------------------------------- 03.1 validate
def _is_count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _table(**overrides):
    fields = {
        "_id": lambda v: True,
        "name": lambda v: isinstance(v, str) and v != "",
        "category": lambda v: v in CATEGORIES,
        "price_pence": _is_count,
        "sku": lambda v: isinstance(v, str) and re.fullmatch(SKU_PATTERN, v) is not None,
        "tags": lambda v: isinstance(v, list) and len(v) <= MAX_TAGS and all(isinstance(t, str) for t in v),
        "views": _is_count,
        "schema_version": lambda v: v == CURRENT_VERSION,
    }
    fields.update(overrides)
    return fields


def table_validator(fields=None, required=REQUIRED, unknown_ok=False, stamp=True, exception=ValueError,
                    message="bad field: {name}"):
    fields = fields or _table()

    def validate(doc):
        for name in required:
            if name not in doc:
                raise exception(message.format(name=name, doc=doc))
        for name, value in doc.items():
            if name not in fields:
                if unknown_ok:
                    continue
                raise exception(message.format(name=name, doc=doc))
            if not fields[name](value):
                raise exception(message.format(name=name, doc=doc))
        return {**doc, "schema_version": CURRENT_VERSION} if stamp else dict(doc)
    return validate


# right 1: explicit if-chain, a custom exception that *is* a ValueError, deepcopy
class ProductError(ValueError):
    pass


def validate_if_chain(doc):
    unknown = set(doc) - {"_id", "name", "category", "price_pence", "sku", "tags", "views", "schema_version"}
    if unknown:
        raise ProductError(f"{sorted(unknown)[0]}: not a product field")
    missing = [f for f in ("name", "category", "price_pence", "sku") if f not in doc]
    if missing:
        raise ProductError(f"{missing[0]} is required")
    if type(doc["name"]) is not str or not doc["name"]:
        raise ProductError("name must be a non-empty string")
    if doc["category"] not in CATEGORIES:
        raise ProductError(f"category must be one of {', '.join(CATEGORIES)}")
    for counter in ("price_pence", "views"):
        if counter in doc:
            value = doc[counter]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ProductError(f"{counter} must be a whole number of 0 or more")
    if not isinstance(doc["sku"], str) or not re.match(r"[A-Z]{3}-[0-9]{4}\Z", doc["sku"]):  # \Z: no newline
        raise ProductError("sku must look like KIT-0042")
    if "tags" in doc:
        tags = doc["tags"]
        if not isinstance(tags, list) or len(tags) > MAX_TAGS or any(not isinstance(t, str) for t in tags):
            raise ProductError(f"tags must be a list of at most {MAX_TAGS} strings")
    if "schema_version" in doc and doc["schema_version"] != CURRENT_VERSION:
        raise ProductError(f"schema_version must be {CURRENT_VERSION}")
    stamped = copy.deepcopy(doc)
    stamped["schema_version"] = CURRENT_VERSION
    return stamped


# right 2: rules as (types, predicate) pairs, dict() copy then update
RULES = {
    "name": ((str,), lambda v: len(v) > 0),
    "category": ((str,), lambda v: v in CATEGORIES),
    "price_pence": ((int, Int64), lambda v: not isinstance(v, bool) and v >= 0),
    "sku": ((str,), lambda v: bool(re.fullmatch(r"[A-Z]{3}-[0-9]{4}", v))),
    "tags": ((list,), lambda v: len(v) <= MAX_TAGS and all(type(t) is str for t in v)),
    "views": ((int,), lambda v: type(v) is not bool and v >= 0),
    "schema_version": ((int,), lambda v: v == CURRENT_VERSION),
    "_id": ((object,), lambda v: True),
}


def validate_rules(doc):
    for field in ("name", "category", "price_pence", "sku"):
        if field not in doc:
            raise ValueError(f"missing required field {field!r}")
    for field, value in doc.items():
        rule = RULES.get(field)
        if rule is None:
            raise ValueError(f"unknown field {field!r}")
        kinds, ok = rule
        if not isinstance(value, kinds) or not ok(value):
            raise ValueError(f"field {field!r} is invalid: {value!r}")
    out = dict(doc)
    out.update(schema_version=CURRENT_VERSION)
    return out


# right 3: helper functions per field, errors collected, the first one raised
def _check_field(name, value):
    if name == "name":
        return isinstance(value, str) and len(value) >= 1
    if name == "category":
        return isinstance(value, str) and value in CATEGORIES
    if name in ("price_pence", "views"):
        return _is_count(value)
    if name == "sku":
        return isinstance(value, str) and re.compile(SKU_PATTERN).fullmatch(value) is not None
    if name == "tags":
        return isinstance(value, list) and len(value) <= MAX_TAGS and all(isinstance(t, str) for t in value)
    if name == "schema_version":
        return value == CURRENT_VERSION
    return name == "_id"


def validate_helpers(doc):
    problems = [f"{f}: required" for f in ("name", "category", "price_pence", "sku") if f not in doc]
    problems += [f"{f}: invalid or unknown" for f, v in doc.items() if not _check_field(f, v)]
    if problems:
        raise ValueError(problems[0])
    return {k: v for k, v in doc.items() if k != "schema_version"} | {"schema_version": CURRENT_VERSION}


# wrong answers, each breaking one rule
def seed_port(doc):  # checks only the fields that are present (required never checked)
    return table_validator(required=())(doc)


forgets_sku = table_validator(required=("name", "category", "price_pence"))
lets_unknown = table_validator(unknown_ok=True)
bool_price = table_validator(_table(price_pence=lambda v: isinstance(v, int) and v >= 0))
digits_price = table_validator(_table(price_pence=lambda v: str(v).isdigit()))
negative_price = table_validator(_table(price_pence=lambda v: isinstance(v, int) and not isinstance(v, bool)))
bool_views = table_validator(_table(views=lambda v: isinstance(v, int) and v >= 0))
int32_views = table_validator(_table(views=lambda v: type(v) is int and 0 <= v < 2 ** 31))
tags_unbounded = table_validator(_table(tags=lambda v: isinstance(v, list) and all(isinstance(t, str) for t in v)))
tags_off_by_one = table_validator(_table(tags=lambda v: isinstance(v, list) and len(v) < MAX_TAGS
                                         and all(isinstance(t, str) for t in v)))
tags_any_items = table_validator(_table(tags=lambda v: isinstance(v, list) and len(v) <= MAX_TAGS))
sku_unanchored = table_validator(_table(sku=lambda v: isinstance(v, str)
                                        and re.search("[A-Z]{3}-[0-9]{4}", v) is not None))
# wrong: re.match with the anchored pattern, whose "$" also matches before a final newline ("KIT-0042\n")
sku_re_match = table_validator(_table(sku=lambda v: isinstance(v, str) and re.match(SKU_PATTERN, v) is not None))
empty_name = table_validator(_table(name=lambda v: isinstance(v, str)))
any_category = table_validator(_table(category=lambda v: isinstance(v, str)))
overwrites_version = table_validator(_table(schema_version=lambda v: True))
version_is_unknown = table_validator({k: v for k, v in _table().items() if k != "schema_version"})
refuses_id = table_validator({k: v for k, v in _table().items() if k != "_id"})
raises_key_error = table_validator(exception=KeyError)
raises_type_error = table_validator(exception=TypeError)
vague_message = table_validator(message="invalid document")
dumps_document = table_validator(message="invalid product: {doc}")
no_stamp = table_validator(stamp=False)


def sku_read_before_checked(doc):
    """Wrong (value_error, review 38): name and category are checked first, then the sku and price are read,
    so a product without them raises KeyError('sku'), not ValueError."""
    for field in ("name", "category"):
        if field not in doc:
            raise ValueError(f"missing required field {field!r}")
    doc["sku"], doc["price_pence"]  # a KeyError naming the field when it is missing
    return validate_rules(doc)


def returns_false(doc):
    try:
        return validate_rules(doc)
    except ValueError:
        return False


def mutates(doc):
    validate_rules(doc)
    doc["schema_version"] = CURRENT_VERSION
    return doc


def drops_optional(doc):
    checked = validate_rules(doc)
    return {k: checked[k] for k in ("name", "category", "price_pence", "sku", "schema_version")}


# ---------------------------------------------------------------- 03.2 render_product
def render_round(doc):  # right: round() of the float is exact for prices with two decimals
    if "schema_version" not in doc:
        pence = round(float(doc["price"]) * 100)
    else:
        pence = doc["price_pence"]
    pounds, rest = divmod(pence, 100)
    return f"{doc['name']} ({doc['category']}): £{pounds}.{rest:02d}"


def render_decimal_format(doc):  # right: Decimal formatting end to end
    if doc.get("schema_version") in (2, 3):
        amount = Decimal(doc["price_pence"]) / 100
    else:
        amount = Decimal(doc["price"])
    return "{} ({}): £{:.2f}".format(doc["name"], doc["category"], amount)


def _pence_from_pounds(text):
    whole, _, frac = text.partition(".")
    return int(whole) * 100 + int((frac + "00")[:2])


def render_parse(doc):  # right: string arithmetic, version by field presence, a helper
    pence = doc["price_pence"] if "price_pence" in doc else _pence_from_pounds(doc["price"])
    return f"{doc['name']} ({doc['category']}): £{pence // 100}.{str(pence % 100).zfill(2)}"


def render_quantize(doc):  # right: Decimal.quantize with HALF_UP, match on the version
    match doc.get("schema_version"):
        case None | 1:
            pence = int((Decimal(doc["price"]) * 100).quantize(Decimal(1), ROUND_HALF_UP))
        case _:
            pence = int(doc["price_pence"])
    return f"{doc['name']} ({doc['category']}): £{pence // 100}.{pence % 100:02d}"


def _render_with(pence_of):
    def render_product(doc):
        pence = pence_of(doc) if doc.get("schema_version", 1) == 1 else doc["price_pence"]
        return f"{doc['name']} ({doc['category']}): £{pence // 100}.{pence % 100:02d}"
    return render_product


render_float = _render_with(lambda d: int(float(d["price"]) * 100))
render_strip_dot = _render_with(lambda d: int(d["price"].replace(".", "")))


def render_current_only(doc):
    pence = doc["price_pence"]
    return f"{doc['name']} ({doc['category']}): £{pence // 100}.{pence % 100:02d}"


def render_raw_price(doc):
    if "price" in doc:
        return f"{doc['name']} ({doc['category']}): £{doc['price']}"
    return render_current_only(doc)


def render_unpadded(doc):
    pence = int(Decimal(doc["price"]) * 100) if "price" in doc else doc["price_pence"]
    return f"{doc['name']} ({doc['category']}): £{pence // 100}.{pence % 100}"


def render_migrates_in_place(doc):  # "migration on read" misread: converts the caller's document
    if "price" in doc:
        doc["price_pence"] = int(Decimal(doc.pop("price")) * 100)
        doc["schema_version"] = 2
    return render_current_only(doc)


def render_pence_as_pounds(doc):  # current versions: price_pence read as pounds
    if "schema_version" not in doc:
        return render_round(doc)
    return f"{doc['name']} ({doc['category']}): £{doc['price_pence']}.00"


def render_no_category(doc):
    line = render_round(doc)
    return line.replace(f" ({doc['category']})", "")


# ---------------------------------------------------------------- 03.3 field_types
CENSUS_TYPES = ("int", "long", "double", "decimal", "string", "bool", "null", "object", "array")


def census_not_array(collection, field):  # right: each document once, arrays only as "array"
    counts = {}
    for type_name in CENSUS_TYPES:
        query = {field: {"$type": type_name}}
        if type_name != "array":
            query[field]["$not"] = {"$type": "array"}
        n = collection.count_documents(query)
        if n:
            counts[type_name] = n
    missing = collection.count_documents({field: {"$exists": False}})
    if missing:
        counts["missing"] = missing
    return counts


def census_python(collection, field):  # right: read the field once, classify in Python
    def kind(value):
        if isinstance(value, bool):
            return "bool"
        if isinstance(value, Int64) or (isinstance(value, int) and not -2 ** 31 <= value < 2 ** 31):
            return "long"
        if isinstance(value, int):
            return "int"
        return {float: "double", str: "string", type(None): "null", dict: "object", list: "array"}.get(
            type(value), "decimal")
    counts = Counter()
    for doc in collection.find({}, {field: 1, "_id": 0}):
        counts[kind(doc[field]) if field in doc else "missing"] += 1
    return dict(counts)


def census_and(collection, field):  # right: $and of the type and "not an array", helper, dict comprehension
    def count(type_name):
        if type_name == "array":
            return collection.count_documents({field: {"$type": "array"}})
        return collection.count_documents({"$and": [{field: {"$type": type_name}},
                                                    {field: {"$not": {"$type": "array"}}}]})
    counts = {t: count(t) for t in CENSUS_TYPES}
    counts["missing"] = collection.count_documents({field: {"$exists": False}})
    return {t: n for t, n in counts.items() if n > 0}


def census_aggregate(collection, field):  # right on a server: $type as an aggregation expression
    rows = collection.aggregate([{"$group": {"_id": {"$type": f"${field}"}, "n": {"$sum": 1}}}])
    return {row["_id"]: row["n"] for row in rows}


def census_bare(collection, field):  # wrong: the $type trap (array elements counted)
    counts = {t: collection.count_documents({field: {"$type": t}}) for t in CENSUS_TYPES}
    counts["missing"] = collection.count_documents({field: {"$exists": False}})
    return {t: n for t, n in counts.items() if n}


def census_no_missing(collection, field):
    return {t: n for t, n in census_not_array(collection, field).items() if t != "missing"}


def census_zeros(collection, field):
    counts = {t: collection.count_documents({field: {"$type": t, "$not": {"$type": "array"}}}) for t in CENSUS_TYPES
              if t != "array"}
    counts["array"] = collection.count_documents({field: {"$type": "array"}})
    counts["missing"] = collection.count_documents({field: {"$exists": False}})
    return counts


def census_python_ints(collection, field):  # wrong: Int64 is an int in Python, so longs count as int
    counts = Counter()
    for doc in collection.find({}, {field: 1}):
        value = doc.get(field, KeyError)
        if value is KeyError:
            counts["missing"] += 1
        elif isinstance(value, bool):
            counts["bool"] += 1
        elif isinstance(value, int):
            counts["int"] += 1
        else:
            counts[{float: "double", str: "string", type(None): "null", dict: "object",
                    list: "array"}.get(type(value), "decimal")] += 1
    return dict(counts)


def census_marks(collection, field):  # wrong: the audit writes
    collection.update_many({}, {"$set": {"audited": True}})
    return census_not_array(collection, field)


def census_pairs(collection, field):  # wrong form: list of pairs
    return sorted(census_not_array(collection, field).items())


def census_null_is_missing(collection, field):  # wrong: {field: None} matches missing too
    counts = census_not_array(collection, field)
    counts.pop("missing", None)
    n = collection.count_documents({field: None})
    if n:
        counts["missing"] = n
    return counts


# ---------------------------------------------------------------- 03.4 product_validator
def reference_schema():
    return {
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


def schema_with(**properties):
    schema = reference_schema()
    for key, value in properties.items():
        if value is None:
            schema["properties"].pop(key)
        else:
            schema["properties"][key] = value
    return {"$jsonSchema": schema}


VALIDATOR_ANYOF = {"$jsonSchema": {
    "required": ["sku", "price_pence", "category", "name", "schema_version", "_id"],
    "additionalProperties": False,
    "properties": {
        "_id": {},
        "schema_version": {"bsonType": "int", "enum": [CURRENT_VERSION]},
        "name": {"type": "string", "minLength": 1},
        "category": {"bsonType": "string", "enum": list(CATEGORIES)},
        "price_pence": {"anyOf": [{"bsonType": "int"}, {"bsonType": "long"}], "minimum": 0},
        "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8, "minItems": 0},
        "views": {"oneOf": [{"bsonType": "int"}, {"bsonType": "long"}], "minimum": 0},
    },
}}

VALIDATOR_NOT = {"$jsonSchema": {
    "bsonType": "object",
    "required": ["name", "category", "price_pence", "sku", "_id", "schema_version"],
    "additionalProperties": False,
    "properties": {
        "_id": {"bsonType": ["int", "long", "objectId", "string", "double", "decimal", "object", "date"]},
        "schema_version": {"enum": [3]},
        "name": {"bsonType": "string", "minLength": 1},
        "category": {"enum": ["kitchen", "garden", "office", "toys", "bathroom"]},
        "price_pence": {"bsonType": "number", "not": {"bsonType": ["double", "decimal"]}, "minimum": 0},
        "sku": {"bsonType": "string", "pattern": SKU_PATTERN},
        "tags": {"bsonType": "array", "maxItems": MAX_TAGS, "items": {"bsonType": "string"}},
        "views": {"bsonType": "number", "not": {"bsonType": ["double", "decimal"]}, "minimum": 0},
    },
}}

VALIDATOR_REORDERED = {"$jsonSchema": {
    "properties": {
        "views": {"minimum": 0, "bsonType": ["long", "int"]},
        "tags": {"items": {"bsonType": ["string"]}, "maxItems": MAX_TAGS, "bsonType": ["array"]},
        "sku": {"pattern": SKU_PATTERN, "bsonType": ["string"]},
        "price_pence": {"minimum": 0, "bsonType": ["long", "int"]},
        "category": {"enum": list(reversed(CATEGORIES))},
        "name": {"minLength": 1, "bsonType": ["string"]},
        "schema_version": {"enum": [CURRENT_VERSION]},
        "_id": {"bsonType": ["objectId", "int", "long", "string"]},
    },
    "additionalProperties": False,
    "required": sorted(["_id", "schema_version", "name", "category", "price_pence", "sku"]),
}}

# wrong validators
V_VIEWS_INT = schema_with(views={"bsonType": "int", "minimum": 0})  # the census lesson
V_PRICE_INT = schema_with(price_pence={"bsonType": "int", "minimum": 0})  # a long price refused
V_PRICE_NUMBER = schema_with(price_pence={"bsonType": "number", "minimum": 0})  # doubles, decimals in
V_PRICE_NO_MIN = schema_with(price_pence={"bsonType": ["int", "long"]})
V_VIEWS_NUMBER = schema_with(views={"bsonType": "number", "minimum": 0})
V_VIEWS_NO_MIN = schema_with(views={"bsonType": ["int", "long"]})
V_NO_ID = schema_with(_id=None)  # additionalProperties False without _id
V_LOOSE = {"$jsonSchema": {k: v for k, v in reference_schema().items() if k != "additionalProperties"}}
V_BARE = reference_schema()  # not wrapped in $jsonSchema
V_NAME_EMPTY = schema_with(name={"bsonType": "string"})
V_SKU_UNANCHORED = schema_with(sku={"bsonType": "string", "pattern": "[A-Z]{3}-[0-9]{4}"})
V_CATEGORY_STRING = schema_with(category={"bsonType": "string"})
V_TAGS_7 = schema_with(tags={"bsonType": "array", "maxItems": MAX_TAGS - 1, "items": {"bsonType": "string"}})
V_TAGS_NO_MAX = schema_with(tags={"bsonType": "array", "items": {"bsonType": "string"}})
V_TAGS_NO_ITEMS = schema_with(tags={"bsonType": "array", "maxItems": MAX_TAGS})
V_VERSION_INT = schema_with(schema_version={"bsonType": "int"})
V_PRICE_MIN_1 = schema_with(price_pence={"bsonType": ["int", "long"], "minimum": 1})


def v_required(*fields):
    schema = reference_schema()
    schema["required"] = list(fields)
    return {"$jsonSchema": schema}


V_NO_REQUIRED_SKU = v_required("_id", "schema_version", "name", "category", "price_pence")
V_REQUIRES_TAGS = v_required("_id", "schema_version", "name", "category", "price_pence", "sku", "tags")
V_NO_REQUIRED_VERSION = v_required("_id", "name", "category", "price_pence", "sku")


# ---------------------------------------------------------------- 03.5 staging
S_RIGHT_ORDER = dict(validationAction="error", validationLevel="moderate")
S_SON = SON([("validationAction", "error"), ("validationLevel", "moderate")])
S_ERROR_AND_LOG = {"validationLevel": "moderate", "validationAction": "errorAndLog"}
S_STRICT = {"validationLevel": "strict", "validationAction": "error"}
S_WARN = {"validationLevel": "moderate", "validationAction": "warn"}
S_OFF = {"validationLevel": "off", "validationAction": "error"}
S_STRICT_WARN = {"validationLevel": "strict", "validationAction": "warn"}
S_TUPLE = ("moderate", "error")
S_LEVEL_ONLY = {"validationLevel": "moderate"}
S_CAPITAL = {"validationLevel": "Moderate", "validationAction": "Error"}
S_EXTRA = {"validationLevel": "moderate", "validationAction": "error", "validator": {}}
S_SHORT_KEYS = {"level": "moderate", "action": "error"}


# ---------------------------------------------------------------- more unseen answers (second round)
version_at_least = table_validator(_table(schema_version=lambda v: isinstance(v, int) and v >= CURRENT_VERSION))


def census_missing_always(collection, field):  # wrong: "missing" even when nobody lacks the field
    counts = census_not_array(collection, field)
    counts.setdefault("missing", 0)
    return counts


def census_counter(collection, field):  # right: a Counter (a dict) from one find, bson type codes by encoding
    import bson
    codes = {0x10: "int", 0x12: "long", 0x01: "double", 0x13: "decimal", 0x02: "string", 0x08: "bool",
             0x0A: "null", 0x03: "object", 0x04: "array"}
    counts = Counter()
    for doc in collection.find({}, {field: True}):
        if field not in doc:
            counts["missing"] += 1
        else:
            counts[codes[bson.encode({"v": doc[field]})[4]]] += 1
    return counts


V_VERSION_MIN = schema_with(schema_version={"bsonType": "int", "minimum": CURRENT_VERSION})
V_VIEWS_INT32_MAX = schema_with(views={"bsonType": ["int", "long"], "minimum": 0, "maximum": 2 ** 31 - 1})


def render_thousands(doc):  # wrong layout: a thousands separator
    pence = doc["price_pence"] if "price_pence" in doc else _pence_from_pounds(doc["price"])
    return f"{doc['name']} ({doc['category']}): £{pence // 100:,}.{pence % 100:02d}"


def render_float_format(doc):  # right: formatting a float to two places rounds correctly
    if "schema_version" not in doc:
        return f"{doc['name']} ({doc['category']}): £{float(doc['price']):.2f}"
    return f"{doc['name']} ({doc['category']}): £{doc['price_pence'] / 100:.2f}"

VALIDATOR_TUPLES = {"$jsonSchema": {  # right: CATEGORIES passed as the tuple it is, a query operator beside
    "type": "object",
    "required": ("_id", "schema_version", "name", "category", "price_pence", "sku"),
    "additionalProperties": False,
    "properties": {
        "_id": {}, "schema_version": {"enum": (CURRENT_VERSION,)}, "name": {"bsonType": "string", "minLength": 1},
        "category": {"enum": CATEGORIES}, "price_pence": {"bsonType": ("int", "long"), "minimum": 0},
        "sku": {"bsonType": "string", "pattern": SKU_PATTERN},
        "tags": {"bsonType": "array", "maxItems": MAX_TAGS, "items": {"bsonType": "string"}},
        "views": {"bsonType": ("int", "long"), "minimum": 0},
    },
}, "price_pence": {"$type": ["int", "long"]}}


def validate_upper_messages(doc):  # right: messages name the field in capitals
    try:
        return validate_rules(doc)
    except ValueError as error:
        raise ValueError(str(error).upper()) from None


def census_type_codes(collection, field):  # right: numeric $type codes, estimated count for the rest
    codes = {"int": 16, "long": 18, "double": 1, "decimal": 19, "string": 2, "bool": 8, "null": 10, "object": 3}
    counts = {name: collection.count_documents({"$and": [{field: {"$type": code}}, {field: {"$not": {"$type": 4}}}]})
              for name, code in codes.items()}
    counts["array"] = collection.count_documents({field: {"$type": 4}})
    counts["missing"] = collection.count_documents({}) - sum(counts.values())
    return {name: n for name, n in counts.items() if n}


def _positive(v):
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


views_positive = table_validator(_table(views=_positive))  # wrong: "0 or more" read as "more than 0"


def stamps_then_copies(doc):  # wrong: stamps the caller's dict first, then returns a copy of it
    validate_rules(doc)
    doc.setdefault("schema_version", CURRENT_VERSION)
    return dict(doc)


def render_caches_pence(doc):  # wrong: keeps the converted price on the document it was given, for next time
    if "price_pence" not in doc:
        doc["price_pence"] = int(Decimal(doc["price"]) * 100)
    pence = doc["price_pence"]
    return f"{doc['name']} ({doc['category']}): £{pence // 100}.{pence % 100:02d}"


S_CONSTRAINT = {"validationLevel": "constraint", "validationAction": "error"}  # MongoDB 9.0's level


# ---------------------------------------------------------------- third round (session 27)
def census_numbers_as_number(collection, field):  # wrong: never asks for "double" (a view count is whole)
    counts = census_not_array(collection, field)  # the same queries, less the one for "double"
    counts.pop("double", None)
    return counts


def census_number_alias(collection, field):  # wrong: "number" stands for every numeric type, in one key
    scalars = ("number", "string", "bool", "null", "object")
    counts = {t: collection.count_documents({"$and": [{field: {"$type": t}}, {field: {"$not": {"$type": "array"}}}]})
              for t in scalars}
    counts["array"] = collection.count_documents({field: {"$type": "array"}})
    counts.update(census_missing_only(collection, field))
    return {name: n for name, n in counts.items() if n}


def census_missing_only(collection, field):
    missing = collection.count_documents({field: {"$exists": False}})
    return {"missing": missing} if missing else {}


# 03.1 wrong: strips the sku before matching, so "KIT-0091\n" passes (and is returned as it came)
sku_stripped = table_validator(_table(sku=lambda v: isinstance(v, str) and re.fullmatch(SKU_PATTERN, v.strip())
                                      is not None))
# 03.1 right: re.search anchored with \Z (end of string, no newline allowed before it)
sku_search_z = table_validator(_table(sku=lambda v: isinstance(v, str)
                                      and re.search(r"^[A-Z]{3}-[0-9]{4}\Z", v) is not None))

S_UNKNOWN_ACTION = {"validationLevel": "moderate", "validationAction": "reject"}  # no such action


# ---------------------------------------------------------------- fourth round (review 29b)
def _price_or_integral_float(v):
    return (isinstance(v, int) and not isinstance(v, bool) or isinstance(v, float) and v.is_integer()) and v >= 0


# 03.1 wrong: "not a float" read as "no fraction", so 2499.0 passes as a price
float_integral_price = table_validator(_table(price_pence=_price_or_integral_float))


def render_pops_price(doc):  # wrong: takes the version 1 price off the document, then writes back what it made
    if "schema_version" not in doc:
        pence = int(Decimal(doc.pop("price")) * 100)
        doc["price"] = f"{pence / 100}"
    else:
        pence = doc["price_pence"]
    return f"{doc['name']} ({doc['category']}): £{pence // 100}.{pence % 100:02d}"


def census_bool_as_int(collection, field):  # wrong: isinstance(v, int) asked before bool, so True counts as an int
    counts = Counter()
    for doc in collection.find({}, {field: 1}):
        if field not in doc:
            counts["missing"] += 1
            continue
        value = doc[field]
        if isinstance(value, Int64):
            counts["long"] += 1
        elif isinstance(value, int):
            counts["int"] += 1
        elif isinstance(value, bool):  # never reached
            counts["bool"] += 1
        else:
            counts[{float: "double", str: "string", type(None): "null", dict: "object",
                    list: "array"}.get(type(value), "decimal")] += 1
    return dict(counts)


V_PRICE_DECIMAL = schema_with(price_pence={"bsonType": ["int", "long", "decimal"], "minimum": 0})
V_VIEWS_DECIMAL = schema_with(views={"bsonType": ["int", "long", "decimal"], "minimum": 0})

S_STRICT_ERROR_AND_LOG = {"validationLevel": "strict", "validationAction": "errorAndLog"}
S_CONSTRAINT_ERROR_AND_LOG = {"validationLevel": "constraint", "validationAction": "errorAndLog"}
