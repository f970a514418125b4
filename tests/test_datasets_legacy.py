"""The legacy catalog: three versions side by side, seeded, and broken products that each break one rule."""

import re

from course.datasets.legacy import (CATEGORIES, CURRENT_VERSION, INT32_MAX, POPULAR_ID, SKU_PATTERN, as_version,
                                    broken_products, feed_rows, legacy_catalog, pounds, valid_products)


def test_catalog_is_deterministic_and_holds_every_version():
    first = legacy_catalog(120, seed=3)
    assert first == legacy_catalog(120, seed=3) and first != legacy_catalog(120, seed=4)
    versions = {p.get("schema_version", 1) for p in first}
    assert versions == {1, 2, CURRENT_VERSION}
    popular = next(p for p in first if p["_id"] == POPULAR_ID)
    assert popular["views"] == INT32_MAX and popular["schema_version"] == CURRENT_VERSION


def test_versions_have_their_documented_shapes():
    for product in legacy_catalog(120):
        version = product.get("schema_version", 1)
        if version == 1:
            assert isinstance(product["price"], str) and "price_pence" not in product
        else:
            assert isinstance(product["price_pence"], int) and "price" not in product
        assert ("sku" in product) == (version == CURRENT_VERSION)


def test_old_prices_include_float_traps():
    v1 = [p for p in legacy_catalog(60) if "price" in p]
    assert any(int(float(p["price"]) * 100) != int(p["price"].replace(".", "")) for p in v1)


def test_same_product_in_every_version():
    product = {"_id": 5, "name": "Whisk", "category": "kitchen", "price_pence": 435, "tags": [], "views": 1}
    assert as_version(product, 1)["price"] == pounds(435) == "4.35"
    assert as_version(product, CURRENT_VERSION)["sku"] == "KIT-0005"


def test_valid_and_broken_products():
    for product in valid_products():
        assert re.fullmatch(SKU_PATTERN, product["sku"]) and product["category"] in CATEGORIES
    broken = broken_products()
    assert len({what for what, _ in broken}) == len(broken)
    assert all(doc != valid_products()[5] for _, doc in broken)
    assert all("price" in row and isinstance(row["price"], str) for row in feed_rows())
