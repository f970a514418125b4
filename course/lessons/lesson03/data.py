"""The documents lab 03's checks use, built once: valid and broken products, reader cases, census sets.

Everything here is pure data derived from :mod:`course.datasets.legacy` (seeded), computed once
(``functools.cache``) and handed out as deep copies, so that no assertion sees what an earlier one
(or a learner's function) changed.  Each broken product breaks exactly one rule of the current shape.
"""

from __future__ import annotations

import copy
import functools
from collections import Counter
from typing import Any

from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId

from course.toolkit.census import MISSING, bson_type_of
from course.datasets.legacy import (CATEGORIES, CURRENT_VERSION, INT32_MAX, MAX_TAGS, POPULAR_ID, SKU_PATTERN,
                                    as_version, legacy_catalog, valid_products)

DROP = object()  #: a change that removes the field
CHECK_PRODUCTS = 60  #: the seeded catalog some checks draw products from
CENSUS_PRODUCTS = 30  #: the census's scratch catalog (small: every type query scans it)
STAGED_PRODUCTS = 20  #: the staged catalog of 03.5

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


def fresh(value: Any) -> Any:
    """A deep copy: what an assertion hands on, so nobody changes the cached original."""
    return copy.deepcopy(value)


def product(base: dict | None = None, **changes: Any) -> dict:
    """``base`` (default: the writer's kettle) with ``changes`` applied (``DROP`` removes a field)."""
    document = fresh(base if base is not None else KETTLE)
    for key, value in changes.items():
        if value is DROP:
            document.pop(key, None)
        else:
            document[key] = value
    return document


#: A valid current-version product as a writer sends it to validate(): no _id, no schema_version yet.
KETTLE = {"name": "Kettle", "category": "kitchen", "price_pence": 2499, "sku": "KIT-0091",
          "tags": ["steel", "1.7l"], "views": 3}
_MAX_TAGS = [f"t{i}" for i in range(MAX_TAGS)]


# ---- 03.1 and 03.4: valid products and products that break one rule --------------------------------
def valid_cases(stored: bool) -> list[tuple[str, dict]]:
    """(what, document) pairs the visible checks must accept; ``stored`` adds _id and schema_version (03.4)."""
    extra = {"_id": 91, "schema_version": CURRENT_VERSION} if stored else {}
    cases = [
        ("a new product", product(**extra)),
        ("a free product (price_pence 0)", product(price_pence=0, **extra)),
        ("a product nobody has viewed yet (views 0)", product(views=0, **extra)),
        ("a product with no tags and no views", product(tags=DROP, views=DROP, **extra)),
        ("a product with an empty tags list", product(tags=[], **extra)),
        (f"a product with exactly {MAX_TAGS} tags", product(tags=list(_MAX_TAGS), **extra)),
        ("a product whose views counter is a long", product(views=Int64(INT32_MAX + 1), **extra)),
        ("a product whose price_pence is a long", product(price_pence=Int64(2499), **extra)),
    ]
    if not stored:
        cases += [("a product already stamped with the current version", product(schema_version=CURRENT_VERSION)),
                  ("a product with an _id", product(_id=91))]
    return [(what, {**doc, "_id": 9100 + i} if stored else doc) for i, (what, doc) in enumerate(cases)]


@functools.cache
def _hidden_valid(stored: bool) -> list[tuple[str, dict]]:
    cases = []
    for seeded in valid_products(seed=11):
        doc = dict(seeded)
        if not stored:
            doc.pop("schema_version")
        cases.append((f"seeded product {doc['_id']} ({doc['category']})", doc))
    cases += [("a product whose _id is an ObjectId", product(_id=ObjectId("65a1b2c3d4e5f60718293a4b"))),
              ('a product whose _id is the string "p-91"', product(_id="p-91")),
              ("a product with a long price and a long counter at 0",
               product(_id=92, price_pence=Int64(0), views=Int64(0)))]
    if stored:
        cases = [(w, {**d, "schema_version": CURRENT_VERSION}) for w, d in cases]
        cases += [(f"catalog product {d['_id']}", d) for d in legacy_catalog(n=CHECK_PRODUCTS)
                  if d.get("schema_version") == CURRENT_VERSION][:8]
    return cases


def hidden_valid_cases(stored: bool) -> list[tuple[str, dict]]:
    """More valid products (other categories, other _id types, seeded catalog) for hidden checks."""
    return fresh(_hidden_valid(stored))


#: requirement -> visible broken cases: (what is wrong, the changes to the kettle, fields a message may name)
BROKEN = {
    "required": [("no name", {"name": DROP}, ("name",)), ("no category", {"category": DROP}, ("category",)),
                 ("no price_pence", {"price_pence": DROP}, ("price_pence",)), ("no sku", {"sku": DROP}, ("sku",))],
    "unknown": [('an unknown field "colour"', {"colour": "red"}, ("colour",)),
                ('the old field "price" beside price_pence', {"price": "24.99"}, ("price",))],
    "name": [('name ""', {"name": ""}, ("name",)), ("name 42", {"name": 42}, ("name",)),
             ("name None", {"name": None}, ("name",))],
    "category": [('category "kitchenware"', {"category": "kitchenware"}, ("category",)),
                 ('category "Kitchen"', {"category": "Kitchen"}, ("category",))],
    "price_pence": [('price_pence "2499" (a string of digits)', {"price_pence": "2499"}, ("price_pence",)),
                    ("price_pence True (a bool)", {"price_pence": True}, ("price_pence",)),
                    ("price_pence -100", {"price_pence": -100}, ("price_pence",)),
                    ("price_pence 24.99 (a float)", {"price_pence": 24.99}, ("price_pence",)),
                    ("price_pence 2499.0 (a float with no fraction)", {"price_pence": 2499.0}, ("price_pence",))],
    "sku": [('sku "kit-0091" (lower case)', {"sku": "kit-0091"}, ("sku",)),
            ('sku "KIT-91" (two digits)', {"sku": "KIT-91"}, ("sku",)),
            ('sku "XKIT-00912" (the pattern inside a longer string)', {"sku": "XKIT-00912"}, ("sku",)),
            ("sku 91 (an int)", {"sku": 91}, ("sku",))],
    "tags": [('tags "steel,1.7l" (a string, not a list)', {"tags": "steel,1.7l"}, ("tags",)),
             ('tags ["steel", 17] (a number among them)', {"tags": ["steel", 17]}, ("tags",)),
             (f"{MAX_TAGS + 1} tags", {"tags": [f"t{i}" for i in range(MAX_TAGS + 1)]}, ("tags",))],
    "views": [("views True (a bool)", {"views": True}, ("views",)),
              ('views "1,204" (a string)', {"views": "1,204"}, ("views",)),
              ("views -1", {"views": -1}, ("views",)), ("views 3.0 (a float)", {"views": 3.0}, ("views",))],
    "schema_version": [("schema_version 2", {"schema_version": 2}, ("schema_version",)),
                       ('schema_version "3" (a string)', {"schema_version": "3"}, ("schema_version",))],
}

#: requirement -> visible broken cases of validate() only (03.1): a server's $jsonSchema pattern matches as PCRE
#: does, where "$" also matches before a final newline, so 03.4's validator accepts these (its statement says so)
BOUNDARY_ONLY = {
    "sku": [('sku "KIT-0091\\n" (a trailing newline)', {"sku": "KIT-0091\n"}, ("sku",))],
}

#: requirement -> hidden broken cases: the same rules at their boundaries
HIDDEN_BROKEN = {
    "price_pence": [("price_pence -1", {"price_pence": -1}, ("price_pence",)),
                    ("price_pence False (a bool)", {"price_pence": False}, ("price_pence",)),
                    ("price_pence 0.0 (a float zero)", {"price_pence": 0.0}, ("price_pence",)),
                    ("price_pence None", {"price_pence": None}, ("price_pence",))],
    "views": [("views False (a bool)", {"views": False}, ("views",)), ("views None", {"views": None}, ("views",)),
              ("views Int64(-5) (a negative long)", {"views": Int64(-5)}, ("views",))],
    "tags": [("tags [None]", {"tags": [None]}, ("tags",)),
             (f"{MAX_TAGS + 2} tags", {"tags": [f"t{i}" for i in range(MAX_TAGS + 2)]}, ("tags",)),
             ('tags {"a": "b"} (an object)', {"tags": {"a": "b"}}, ("tags",))],
    "sku": [('sku "KIT-0091 " (a trailing space)', {"sku": "KIT-0091 "}, ("sku",)),
            ('sku "KITT-0091"', {"sku": "KITT-0091"}, ("sku",))],
    "schema_version": [("schema_version 4", {"schema_version": 4}, ("schema_version",))],
}

#: requirement -> visible broken cases of the stored shape only (03.4): a missing schema_version is a missing
#: required field, and 03.4's statement names the decimal among the types price_pence and views never are
STORED_ONLY = {
    "required": [("no schema_version", {"schema_version": DROP}, ("schema_version",))],
    "price_pence": [('price_pence Decimal128("2499") (a decimal)', {"price_pence": Decimal128("2499")},
                     ("price_pence",))],
    "views": [('views Decimal128("3") (a decimal)', {"views": Decimal128("3")}, ("views",))],
}


def broken_cases(requirement: str, stored: bool, hidden: bool = False) -> list[tuple[str, dict, tuple]]:
    """(what, document, fields a message may name) for ``requirement``, on the kettle (03.1) or stored (03.4)."""
    table = HIDDEN_BROKEN if hidden else BROKEN
    rows = list(table.get(requirement, []))
    if stored and not hidden:
        rows += STORED_ONLY.get(requirement, [])
    if not stored and not hidden:
        rows += BOUNDARY_ONLY.get(requirement, [])
    extra = {"schema_version": CURRENT_VERSION} if stored else {}
    cases = []
    for i, (what, changes, fields) in enumerate(rows):
        doc = product(**{**extra, **changes})
        if stored:  # a distinct _id each, so that no refusal is a duplicate key
            doc = {"_id": f"{requirement}-{'h' if hidden else 'v'}{i}", **doc}
        cases.append((what, doc, fields))
    return cases


def stored_base() -> dict:
    """The valid stored product every broken one of 03.4 is a variant of."""
    return {"_id": 9090, **product(schema_version=CURRENT_VERSION)}


# ---- 03.2: the reader ---------------------------------------------------------------------------
def line(name: str, category: str, pence: int) -> str:
    """The card line for a price in pence."""
    return f"{name} ({category}): £{pence // 100}.{pence % 100:02d}"


def reader_case(version: int, pence: int, price: str | None = None, **fields: Any) -> tuple[str, dict, int]:
    """(what, document, expected pence): the whisk at ``pence``, written in ``version`` (1 with ``price``)."""
    whisk = {"_id": 5, "name": "Oak Whisk No. 5", "category": "kitchen", "price_pence": pence, "tags": [],
             "views": 1, **fields}
    document = as_version(whisk, version)
    if version == 1 and price is not None:
        document["price"] = price
    shown = f'price "{document["price"]}"' if version == 1 else f"price_pence {pence}"
    return f"a version {version} document with {shown}", document, pence


#: the visible reader cases; none has 1-9 pence (where a missing zero pad would change the amount)
V1_CASES = [reader_case(1, 2499, "24.99"), reader_case(1, 435, "4.35"), reader_case(1, 1250, "12.5"),
            reader_case(1, 700, "7")]
CURRENT_CASES = [reader_case(3, 2499), reader_case(2, 0), reader_case(2, 100000), reader_case(3, 1015)]
#: the documents the reader must leave alone: every visible version 1 price (a reader that writes back what it
#: converted turns "7" into "7.0" and "12.50" into "12.5") and a current document
UNCHANGED_CASES = [*V1_CASES, reader_case(1, 1250, "12.50"), CURRENT_CASES[0]]
#: cases where the pence need their zero pad
LAYOUT_CASES = [reader_case(3, 705), reader_case(1, 5, "0.05"), reader_case(2, 2499), reader_case(1, 1250, "12.5"),
                reader_case(2, 123405)]


@functools.cache
def _catalog_reader_cases() -> tuple[list, list]:
    v1, current = [], []
    for doc in legacy_catalog(n=CHECK_PRODUCTS, seed=4):
        if "price_pence" in doc:
            pence = doc["price_pence"]
            target = current
        else:
            whole, _, fraction = doc["price"].partition(".")
            pence = int(whole) * 100 + int((fraction + "00")[:2])
            target = v1
        if 0 < pence % 100 < 10:
            continue
        version = doc.get("schema_version", 1)
        target.append((f"catalog product {doc['_id']} (version {version})", doc, pence))
    v1 += [reader_case(1, 29, "0.29"), reader_case(1, 115, "1.15"), reader_case(1, 10000, "100"),
           reader_case(1, 123450, "1234.5"), reader_case(1, 1015, "10.15")]
    return v1, current


def hidden_reader_cases(kind: str) -> list[tuple[str, dict, int]]:
    """More reader cases from a seeded catalog: ``kind`` "version1" or "current"."""
    v1, current = _catalog_reader_cases()
    return fresh(v1 if kind == "version1" else current)


HIDDEN_LAYOUT_CASES = [reader_case(3, 0), reader_case(2, 100009), reader_case(1, 1, "0.01"),
                       reader_case(1, 5705, "57.05"), reader_case(3, 99)]


# ---- 03.3: the census ---------------------------------------------------------------------------
@functools.cache
def _census_catalog() -> list[dict]:
    documents = legacy_catalog(n=CENSUS_PRODUCTS)
    documents[10]["views"] = "1,204"  # a spreadsheet import
    documents[11]["views"] = 12.0  # a JavaScript script
    documents[12]["views"] = Int64(40)  # the Java importer's long
    del documents[13]["views"]  # never counted
    documents[14]["views"] = None
    documents[17]["views"] = True  # an admin form's tick box (a bool is not an int, whatever Python says)
    documents[15]["tags"] = "eco"  # a tag stored as a string, not a list
    documents[16]["tags"] = ["eco", 5]
    for doc in documents:
        if doc["_id"] == POPULAR_ID:
            doc["views"] = Int64(INT32_MAX + 1)  # what $inc past the int32 maximum made of it
    return documents


@functools.cache
def _census_other() -> list[dict]:
    documents = legacy_catalog(n=24, seed=8)
    odd = [True, Decimal128("3"), {"n": 1}, 7.5, Int64(3), Int64(2 ** 40), None, "12"]
    for doc, value in zip(documents[3:], odd):
        doc["views"] = value
    del documents[20]["views"]
    del documents[21]["views"]
    for i, doc in enumerate(documents):
        doc["ratings"] = [5, 4] if i % 3 == 0 else 3 if i % 3 == 1 else [[2], "ok"]
    del documents[1]["ratings"]
    return documents


def census_documents(which: str) -> list[dict]:
    """The seed documents of a census check: "catalog" (the lab's story) or "other" (hidden checks)."""
    return fresh(_census_catalog() if which == "catalog" else _census_other())


def census_size(which: str) -> int:
    """How many documents the census collection ``which`` holds."""
    return len(_census_catalog() if which == "catalog" else _census_other())


@functools.cache
def _expected_census(which: str, field: str) -> tuple[tuple[str, int], ...]:
    source = _census_catalog() if which == "catalog" else _census_other()
    counts = Counter(bson_type_of(d[field]) if field in d else MISSING for d in source)
    return tuple(counts.items())


def expected_census(which: str, field: str) -> dict[str, int]:
    """Documents per type of ``field`` (arrays as "array", absent as "missing"), zero counts left out."""
    return dict(_expected_census(which, field))


@functools.cache
def _arrays_holding(which: str, field: str, type_name: str) -> int:
    source = _census_catalog() if which == "catalog" else _census_other()
    return sum(1 for d in source if isinstance(d.get(field), list)
               and any(bson_type_of(element) == type_name for element in d[field]))


def arrays_holding(which: str, field: str, type_name: str) -> int:
    """How many documents of the census collection ``which`` hold ``field`` as an array with an element of
    BSON type ``type_name`` (the documents a bare ``$type`` query also counts as that type)."""
    return _arrays_holding(which, field, type_name)


# ---- 03.5: a catalog that still holds old versions ------------------------------------------------
@functools.cache
def _staged_catalog() -> list[dict]:
    return legacy_catalog(n=STAGED_PRODUCTS)


def staged_catalog() -> list[dict]:
    """The old catalog 03.5's checks stage the validator on (versions 1, 2 and 3)."""
    return fresh(_staged_catalog())


def first_of_version(version: int, skip: int = 0) -> dict:
    """The (``skip``+1)-th product of the staged catalog written in ``version``."""
    return fresh([p for p in _staged_catalog() if p.get("schema_version", 1) == version][skip])
