"""Seeded generators for every dataset the lessons use.

Same arguments, same documents: each generator takes a ``seed`` and draws
from its own :class:`random.Random`, never from the clock.  Load the result
with ``insert_many`` (per-document insert loops are slow on mongoeco).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

CATEGORIES = ("kitchen", "garden", "office", "toys", "bathroom")
_MATERIALS = ("Steel", "Oak", "Bamboo", "Glass", "Copper", "Ceramic", "Linen", "Brass")
_NOUNS = {
    "kitchen": ("Kettle", "Teapot", "Colander", "Whisk", "Grater", "Skillet"),
    "garden": ("Trowel", "Planter", "Hose Reel", "Pruner", "Watering Can", "Bird Feeder"),
    "office": ("Desk Lamp", "Stapler", "Pen Pot", "Notebook", "Letter Tray", "Clipboard"),
    "toys": ("Kite", "Spinning Top", "Puzzle", "Yo-yo", "Train Set", "Marble Run"),
    "bathroom": ("Soap Dish", "Towel Rail", "Mirror", "Bath Mat", "Tumbler", "Toothbrush Cup"),
}
_TAGS = ("eco", "gift", "bestseller", "new", "handmade", "compact", "dishwasher-safe", "refill")
#: Current shape of a catalog product (see lesson 01).
CATALOG_SCHEMA_VERSION = 2
#: Most tags a product may carry: the embedded list is bounded.
MAX_TAGS = 8


def catalog_products(n: int = 2000, seed: int = 7) -> list[dict]:
    """Return ``n`` catalog products shaped by their reads (lesson 01).

    Each has an integer ``_id``, ``schema_version``, a unique ``name``, a
    ``category``, an integer ``price_pence`` and a short bounded ``tags`` list.
    """
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    rng = random.Random(seed)
    products = []
    for product_id in range(1, n + 1):
        category = CATEGORIES[rng.randrange(len(CATEGORIES))]
        name = f"{rng.choice(_MATERIALS)} {rng.choice(_NOUNS[category])} No. {product_id}"
        products.append({
            "_id": product_id,
            "schema_version": CATALOG_SCHEMA_VERSION,
            "name": name,
            "category": category,
            "price_pence": rng.randrange(199, 12999, 10),
            "tags": sorted(rng.sample(_TAGS, rng.randint(0, 3))),
        })
    return products


def customers_with_orders(customers: int = 50, orders_per_customer: int = 20,
                          seed: int = 11) -> tuple[list[dict], list[dict]]:
    """Return (customers, orders): bounded embedded addresses, unbounded referenced orders.

    Orders carry ``customer_id`` and a ``placed_at`` day number (no clock).
    """
    rng = random.Random(seed)
    people, orders = [], []
    order_id = 1
    for customer_id in range(1, customers + 1):
        people.append({
            "_id": customer_id,
            "schema_version": 1,
            "name": f"Customer {customer_id}",
            "addresses": [
                {"label": label, "postcode": f"N{rng.randint(1, 22)} {rng.randint(1, 9)}AB"}
                for label in ("home", "work")[: rng.randint(1, 2)]
            ],
        })
        for day in sorted(rng.sample(range(1, 366), orders_per_customer)):
            orders.append({
                "_id": order_id,
                "schema_version": 1,
                "customer_id": customer_id,
                "placed_at": day,
                "total_pence": rng.randrange(500, 50000, 5),
            })
            order_id += 1
    return people, orders


#: The committed samples under data/: file name -> how to make it.
SAMPLES = {
    "catalog-sample.json": lambda: catalog_products(n=20, seed=7),
}


def write_samples(directory: Path) -> list[Path]:
    """Write every sample in :data:`SAMPLES` into ``directory``; return the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in SAMPLES.items():
        path = directory / name
        path.write_text(json.dumps(make(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written
