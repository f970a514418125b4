"""Seeded data: same seed, same documents; the committed samples match the generators."""

import json
from pathlib import Path

from course.datasets.catalog import MAX_TAGS, SAMPLES, catalog_products, customers_with_orders, write_samples

DATA = Path(__file__).resolve().parent.parent / "data"


def test_catalog_is_deterministic_and_shaped_for_its_reads():
    first, again = catalog_products(300, seed=7), catalog_products(300, seed=7)
    assert first == again and first != catalog_products(300, seed=8)
    assert len({p["name"] for p in first}) == 300  # unique names: paging in name order is stable
    for product in first:
        assert isinstance(product["price_pence"], int) and product["price_pence"] >= 0
        assert len(product["tags"]) <= MAX_TAGS and product["schema_version"] == 2


def test_customers_and_orders_reference_each_other():
    people, orders = customers_with_orders(customers=4, orders_per_customer=3, seed=1)
    assert len(people) == 4 and len(orders) == 12
    assert {o["customer_id"] for o in orders} == {p["_id"] for p in people}
    assert all("orders" not in p for p in people)


def test_committed_samples_match_the_generators(tmp_path):
    for path in write_samples(tmp_path):
        committed = DATA / path.name
        assert committed.exists(), f"data/{path.name} is missing: run course.datasets.catalog.write_samples('data')"
        assert json.loads(committed.read_text()) == json.loads(path.read_text())
    assert set(SAMPLES) <= {p.name for p in DATA.glob("*.json")}
