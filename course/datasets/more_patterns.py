"""Seeded data for lesson 07, more patterns and relationships.

Every generator takes a ``seed`` and draws from its own :class:`random.Random` (never the clock), or
builds a fixed shape: same arguments, same documents.  Load the results with ``insert_many``.
"""

from __future__ import annotations

import datetime
import random

START = datetime.datetime(2026, 3, 1, 9, 0, 0)
CUTOFF = datetime.datetime(2026, 6, 1)  #: archive: orders placed before this day are cold
FLUSH_EVERY = 10  #: approximation: one write per this many views
SESSION_TTL = 30 * 24 * 3600  #: archive: sessions expire 30 days after lastSeenAt (seconds)

_COLORS = ("red", "blue", "black", "white", "green")
_SIZES = ("S", "M", "L", "XL")
_MATERIALS = ("cotton", "wool", "linen", "steel", "oak")
_NAMES = ("An", "Binh", "Chi", "Dung", "Giang", "Hoa", "Khanh", "Linh", "Minh", "Nam", "Phuong", "Quan")


def attribute_products(n: int = 12, seed: int = 71) -> list[dict]:
    """``n`` products in the attribute pattern: their specs as ``attrs``, a list of ``{k, v}`` pairs.

    Product 2 has ``color`` blue and a ``trim`` that is red, so a query that matches ``k`` and ``v`` in
    different entries finds it among the red products; product 3 has a ``size`` of "M" and a trim "M".
    """
    rng = random.Random(seed)
    found = []
    for i in range(1, n + 1):
        attrs = [{"k": "color", "v": rng.choice(_COLORS)}, {"k": "size", "v": rng.choice(_SIZES)}]
        if i % 2:
            attrs.append({"k": "material", "v": rng.choice(_MATERIALS)})
        if i % 3 == 0:
            attrs.append({"k": "weightGrams", "v": rng.randrange(100, 2_000, 50)})
        found.append({"_id": i, "name": f"Product {i}", "attrs": attrs})
    found[0]["attrs"][0]["v"] = "red"
    found[1]["attrs"] = [{"k": "color", "v": "blue"}, {"k": "trim", "v": "red"}, {"k": "size", "v": "L"}]
    found[2]["attrs"] = [{"k": "color", "v": "red"}, {"k": "size", "v": "S"}, {"k": "trim", "v": "M"}]
    return found


def view_events(n: int, pages: tuple[str, ...] = ("home", "sale", "help"), seed: int = 72) -> list[dict]:
    """``n`` page views as ``{page, seq}``: ``seq`` counts that page's views from 1, as the application does."""
    rng = random.Random(seed)
    counts: dict[str, int] = {}
    found = []
    for _ in range(n):
        page = rng.choice(pages)
        counts[page] = counts.get(page, 0) + 1
        found.append({"page": page, "seq": counts[page]})
    return found


def archive_orders(n: int = 20, seed: int = 73) -> list[dict]:
    """``n`` orders placed a week apart from March 2026; order 14 is placed exactly at :data:`CUTOFF`."""
    rng = random.Random(seed)
    found = []
    for i in range(1, n + 1):
        placed = START + datetime.timedelta(days=7 * (i - 1), hours=rng.randrange(10))
        found.append({"_id": i, "customerId": rng.randrange(1, 6), "placedAt": placed,
                      "status": "DELIVERED" if placed < CUTOFF else rng.choice(("PLACED", "SHIPPED", "DELIVERED")),
                      "total": rng.randrange(50, 900) * 1_000})
    found[13]["placedAt"] = CUTOFF
    return found


def policies(n: int = 4, seed: int = 74) -> list[dict]:
    """``n`` insurance policies at revision 1, the current version of each."""
    rng = random.Random(seed)
    return [{"_id": f"P-{100 + i}", "holder": f"{rng.choice(_NAMES)} {i}", "revision": 1,
             "coverage": rng.randrange(10, 50) * 1_000_000, "premium": rng.randrange(20, 90) * 10_000,
             "updatedAt": START} for i in range(1, n + 1)]


#: the category tree, as (name, parent): the lab's own fixed shape
TREE = (("Products", None), ("Electronics", "Products"), ("Books", "Products"),
        ("Phones", "Electronics"), ("Laptops", "Electronics"), ("Smartphones", "Phones"),
        ("Feature phones", "Phones"), ("Fiction", "Books"), ("Non-fiction", "Books"),
        ("History", "Non-fiction"), ("Smartphone cases", "Smartphones"))


def categories(tree: tuple = TREE) -> list[dict]:
    """The tree's categories, each with all four tree patterns' fields.

    ``parent`` (parent reference), ``children`` (child references, sorted), ``ancestors`` (array of
    ancestors, root first) and ``path`` (materialized path of the ancestors, ``",Products,Books,"``).
    """
    parent_of = dict(tree)
    found = []
    for name, parent in tree:
        ancestors = []
        up = parent
        while up is not None:
            ancestors.insert(0, up)
            up = parent_of[up]
        found.append({"_id": name, "parent": parent,
                      "children": sorted(child for child, above in tree if above == name),
                      "ancestors": ancestors, "path": "," + "".join(a + "," for a in ancestors)})
    return found


def students(n: int = 6) -> list[dict]:
    """``n`` students, none enrolled yet (``courseIds`` empty)."""
    return [{"_id": f"s{i}", "name": f"{_NAMES[i % len(_NAMES)]} {i}", "courseIds": []} for i in range(1, n + 1)]


def courses(n: int = 4) -> list[dict]:
    """``n`` courses, nobody enrolled yet (``studentIds`` empty)."""
    return [{"_id": f"c{i}", "title": f"Course {i}", "studentIds": []} for i in range(1, n + 1)]


def shop_customers(n: int = 8, seed: int = 75) -> list[dict]:
    """``n`` customers with a name and the fields the order screen does not show."""
    rng = random.Random(seed)
    return [{"_id": i, "name": f"{rng.choice(_NAMES)} {chr(64 + i)}", "email": f"c{i}@example.com",
             "loyaltyPoints": rng.randrange(5_000)} for i in range(1, n + 1)]


def shop_orders(n: int = 60, customers_: int = 8, seed: int = 76, extended: bool = False) -> list[dict]:
    """``n`` orders referencing a customer by ``customerId``; with ``extended`` they also copy the
    customer's ``_id`` and ``name`` (an extended reference)."""
    rng = random.Random(seed)
    names = {c["_id"]: c["name"] for c in shop_customers(customers_)}
    found = []
    for i in range(1, n + 1):
        customer = rng.randrange(1, customers_ + 1)
        order = {"_id": i, "customerId": customer, "status": rng.choice(("PLACED", "PAID", "SHIPPED")),
                 "total": rng.randrange(20, 900) * 1_000}
        if extended:
            order["customer"] = {"_id": customer, "name": names[customer]}
        found.append(order)
    return found


#: prices as a shop's price list gives them: decimal strings, some that a float cannot hold exactly
PRICES = ("19.99", "0.29", "4.35", "1.10", "12", "0.07", "1005.50")
