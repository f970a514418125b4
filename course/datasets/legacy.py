"""A catalog with a history (lesson 03): three versions of the product shape, and broken writes.

* version 1 (no ``schema_version`` field): last year's import script stored
  ``price`` as a string of pounds, ``"24.99"``;
* version 2 (lesson 01's shape): ``price_pence``, an int, and ``tags``;
* version 3 (current): version 2 plus the ``sku`` the new price feed
  identifies products by, like ``"KIT-0042"``.

Every product carries a ``views`` counter (an int).  One very popular product
starts at the int32 maximum, so the lab's next ``$inc`` turns it into a long.
Everything is drawn from ``random.Random(seed)``: same arguments, same documents.
"""

from __future__ import annotations

import random

from bson.int64 import Int64

from course.datasets.catalog import CATEGORIES, MAX_TAGS, catalog_products

CURRENT_VERSION = 3
SKU_PATTERN = r"^[A-Z]{3}-[0-9]{4}$"
INT32_MAX = 2 ** 31 - 1
#: The product whose views counter sits at the int32 maximum.
POPULAR_ID = 7
#: Prices chosen so that int(float(price) * 100) is off by a penny.
_AWKWARD_PRICES = (435, 1015, 29, 5705, 115, 1005)


def sku_for(product_id: int, category: str) -> str:
    """The product's SKU: three letters of its category and a four-digit number."""
    return f"{category[:3].upper()}-{product_id:04d}"


def pounds(pence: int) -> str:
    """Pence as the pounds string version 1 stored: 2499 -> "24.99"."""
    return f"{pence // 100}.{pence % 100:02d}"


def as_version(product: dict, version: int) -> dict:
    """The same product written in ``version`` 1, 2 or 3 of the shape."""
    common = {"_id": product["_id"], "name": product["name"], "category": product["category"]}
    if version == 1:
        return {**common, "price": pounds(product["price_pence"]), "views": product["views"]}
    shaped = {"_id": product["_id"], "schema_version": version, "name": product["name"],
              "category": product["category"], "price_pence": product["price_pence"],
              "tags": list(product["tags"]), "views": product["views"]}
    if version == 2:
        return shaped
    if version == CURRENT_VERSION:
        return {**shaped, "sku": sku_for(product["_id"], product["category"])}
    raise ValueError(f"the catalog has versions 1, 2 and {CURRENT_VERSION}, not {version!r}")


def legacy_catalog(n: int = 300, seed: int = 3) -> list[dict]:
    """``n`` products as they sit in a catalog that lived through three shapes.

    About a fifth are version 1, two fifths version 2, the rest version 3
    (the first few, with awkward prices, are version 1; product ``POPULAR_ID`` is version 3 with ``views`` at the int32 maximum).
    """
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    rng = random.Random(seed)
    documents = []
    for index, product in enumerate(catalog_products(n=n, seed=seed)):
        product = {**product, "views": rng.randrange(0, 5000)}
        if index < len(_AWKWARD_PRICES):
            product["price_pence"] = _AWKWARD_PRICES[index]
        draw = rng.random()
        version = 1 if draw < 0.2 else 2 if draw < 0.6 else CURRENT_VERSION
        if index < len(_AWKWARD_PRICES):
            version = 1  # the old import script's float trouble shows on these
        if product["_id"] == POPULAR_ID:
            version, product["views"] = CURRENT_VERSION, INT32_MAX
        documents.append(as_version(product, version))
    return documents


def valid_products(seed: int = 5) -> list[dict]:
    """Current-version products a validator must accept, edge cases included.

    A free product (price 0), no tags, the most tags allowed, and a ``views``
    counter that has become a long.
    """
    rng = random.Random(seed)
    base = [as_version({**p, "views": rng.randrange(0, 900)}, CURRENT_VERSION)
            for p in catalog_products(n=6, seed=seed)]
    base[0]["price_pence"] = 0
    base[1]["tags"] = []
    base[2]["tags"] = [f"tag{i}" for i in range(MAX_TAGS)]
    base[3]["views"] = Int64(INT32_MAX + 1)
    base[4]["views"] = 0
    for offset, product in enumerate(base):
        product["_id"] = 9001 + offset
        product["sku"] = sku_for(product["_id"], product["category"])
    return base


def broken_products(seed: int = 5) -> list[tuple[str, dict]]:
    """(what is wrong, document): current-version products that each break one rule."""
    good = valid_products(seed)[5]

    def broken(**changes) -> dict:
        document = {**good, "tags": list(good["tags"])}
        for key, value in changes.items():
            if value is _DROP:
                document.pop(key, None)
            else:
                document[key] = value
        return document

    return [
        ("price_pence is a string", broken(price_pence="2499")),
        ("price_pence is a double", broken(price_pence=24.99)),
        ("price_pence is negative", broken(price_pence=-100)),
        ("price_pence is a bool", broken(price_pence=True)),
        ("price_pence is missing", broken(price_pence=_DROP)),
        ("name is missing", broken(name=_DROP)),
        ("name is empty", broken(name="")),
        ("category is not a catalog category", broken(category="garden-ish")),
        ("sku does not match the pattern", broken(sku="kit-42")),
        ("sku is missing", broken(sku=_DROP)),
        ("schema_version is 2", broken(schema_version=2)),
        ("views is a string", broken(views="1,204")),
        ("tags holds a number", broken(tags=["eco", 5])),
        ("an unknown field", broken(price="24.99")),
    ]


def feed_rows() -> list[dict]:
    """What the new price feed sends: ``price`` as a formatted string, keyed by SKU."""
    return [
        {"sku": "KIT-0091", "name": "Kettle", "category": "kitchen", "price": "2499"},
        {"sku": "GAR-0092", "name": "Trowel", "category": "garden", "price": "£4.35"},
        {"sku": "OFF-0093", "name": "Stapler", "category": "office", "price": "1,299"},
    ]


class _Drop:
    def __repr__(self) -> str:
        return "<drop>"


_DROP = _Drop()

__all__ = ["CATEGORIES", "CURRENT_VERSION", "INT32_MAX", "MAX_TAGS", "POPULAR_ID", "SKU_PATTERN", "as_version",
           "broken_products", "feed_rows", "legacy_catalog", "pounds", "sku_for", "valid_products"]
