"""Seeded shop data for lesson 02: customers, orders with embedded lines, products, reviews.

Same arguments, same documents: every generator draws from its own
:class:`random.Random` and never reads the clock (days are day numbers).
Orders embed their lines (a bounded list) and reference their customer by
``customer_id``, with an extended reference: ``customer_copy`` holds copies
of the customer's ``name`` and ``phone`` that every write to the customer
must update, and ``ship_to_at_order`` is a snapshot of the delivery address
that must never be updated.  Load the results with ``insert_many``.
"""

from __future__ import annotations

import random

#: Most lines one order may hold: the embedded list is bounded.
MAX_LINES = 50
#: How many of a product's newest reviews the product document embeds.
RECENT_REVIEWS = 10
#: Collection each kind of a mixed collection belongs in.
KIND_COLLECTIONS = {"customer": "customers", "order": "orders", "product": "products"}
#: Where documents of no known kind go when a mixed collection is split.
UNCLASSIFIED = "unclassified"

_FIRST = ("Ada", "Ben", "Chloe", "Dev", "Ella", "Femi", "Grace", "Hugo", "Isla", "Jai", "Kemi", "Leo",
          "Maya", "Nia", "Omar", "Priya", "Quinn", "Rosa", "Sam", "Tara")
_LAST = ("Shaw", "Patel", "Okafor", "Nguyen", "Evans", "Khan", "Murphy", "Silva", "Wright", "Kowalski")
_GOODS = ("Kettle", "Teapot", "Trowel", "Desk Lamp", "Kite", "Soap Dish", "Planter", "Stapler", "Puzzle", "Mirror")
_MATERIALS = ("Steel", "Oak", "Bamboo", "Glass", "Copper", "Linen")
_EVENT_TYPES = ("CREATED", "PAID", "PICKED", "PACKED", "SHIPPED")


def _phone(rng: random.Random) -> str:
    return f"07{rng.randint(100, 999)} {rng.randint(100000, 999999)}"


def customers(n: int = 40, seed: int = 2) -> list[dict]:
    """Return ``n`` customers: name, phone, email and one or two embedded addresses."""
    rng = random.Random(seed)
    people = []
    for customer_id in range(1, n + 1):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        people.append({
            "_id": customer_id,
            "schema_version": 1,
            "name": f"{first} {last}",
            "phone": _phone(rng),
            "email": f"{first.lower()}.{last.lower()}{customer_id}@example.com",
            "addresses": [{"label": label, "postcode": f"N{rng.randint(1, 22)} {rng.randint(1, 9)}AB"}
                          for label in ("home", "work")[: rng.randint(1, 2)]],
        })
    return people


def products(n: int = 60, seed: int = 2) -> list[dict]:
    """Return ``n`` products with a name and an integer price in pence."""
    rng = random.Random(seed + 1)
    return [{"_id": product_id, "name": f"{rng.choice(_MATERIALS)} {rng.choice(_GOODS)} No. {product_id}",
             "price_pence": rng.randrange(199, 9999, 10)}
            for product_id in range(1, n + 1)]


def order_lines(rng: random.Random, catalog: list[dict], count: int) -> list[dict]:
    """``count`` order lines drawn from ``catalog``: product id, name and price at the time of the order."""
    lines = []
    for product in rng.sample(catalog, count):
        lines.append({"product_id": product["_id"], "name": product["name"],
                      "qty": rng.randint(1, 4), "price_pence": product["price_pence"]})
    return lines


def order_document(order_id: int, customer: dict, lines: list[dict], placed_at: int) -> dict:
    """An order as lesson 02 stores it: lines embedded, customer referenced with copies of name and phone."""
    return {
        "_id": order_id,
        "schema_version": 1,
        "customer_id": customer["_id"],
        "customer_copy": {"name": customer["name"], "phone": customer["phone"]},
        "ship_to_at_order": dict(customer["addresses"][0]),
        "placed_at": placed_at,
        "lines": lines,
        "total_pence": sum(line["qty"] * line["price_pence"] for line in lines),
    }


def shop(customers_n: int = 40, orders_per_customer: int = 6, products_n: int = 60,
         seed: int = 2) -> dict[str, list[dict]]:
    """Return ``{"customers": [...], "orders": [...], "products": [...]}`` for one seeded shop."""
    people = customers(customers_n, seed)
    catalog = products(products_n, seed)
    rng = random.Random(seed + 2)
    orders, order_id = [], 1
    for person in people:
        for day in sorted(rng.sample(range(1, 366), orders_per_customer)):
            lines = order_lines(rng, catalog, rng.randint(1, min(6, len(catalog))))
            orders.append(order_document(order_id, person, lines, day))
            order_id += 1
    return {"customers": people, "orders": orders, "products": catalog}


def reviews(product_id: int, n: int, seed: int = 2, first_id: int = 1) -> list[dict]:
    """Return ``n`` reviews of one product, oldest first, with increasing ``at`` day numbers."""
    rng = random.Random(seed * 1000 + product_id)
    return [{"_id": first_id + k, "product_id": product_id, "stars": rng.randint(1, 5),
             "text": f"Review {first_id + k} of product {product_id}", "at": k + 1}
            for k in range(n)]


def order_event(seq: int) -> dict:
    """One entry of an order's processing history, about 150 bytes of BSON (for size demonstrations)."""
    return {"seq": seq, "at": 1_700_000_000 + seq, "type": _EVENT_TYPES[seq % len(_EVENT_TYPES)],
            "by": f"staff-{seq % 1000:03d}", "note": f"Packed at the Leyton depot, parcel code {seq:08d}, shelf B"}


#: the kinds of mixed_records' odd documents, which name no collection
_ODD_KINDS = ("supplier", None, "Customer", "orders", "product ")


def mixed_records(customers_n: int = 20, orders_n: int = 40, products_n: int = 15, strays: int = 3,
                  seed: int = 5, odd_kinds: int = 0) -> list[dict]:
    """Return customers, orders and products mixed in one list, each with a ``kind`` field.

    Ids are strings unique across kinds ("c1", "o1", "p1"), as one collection
    needs.  ``strays`` documents have no ``kind`` at all (an old writer forgot
    it); ``odd_kinds`` documents have a kind that names no collection, in turn
    ``"supplier"``, ``None``, then a known kind spelt otherwise (``"Customer"``,
    ``"orders"``, ``"product "``: kinds match exactly).  The order of the list is
    shuffled.
    """
    rng = random.Random(seed)
    records = []
    for k in range(1, customers_n + 1):
        records.append({"_id": f"c{k}", "kind": "customer", "name": f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
                        "email": f"user{k}@example.com", "status": rng.choice(("active", "closed"))})
    for k in range(1, products_n + 1):
        records.append({"_id": f"p{k}", "kind": "product", "name": f"{rng.choice(_MATERIALS)} {rng.choice(_GOODS)}",
                        "price_pence": rng.randrange(199, 9999, 10), "status": rng.choice(("listed", "withdrawn"))})
    for k in range(1, orders_n + 1):
        records.append({"_id": f"o{k}", "kind": "order", "customer_id": f"c{rng.randint(1, max(customers_n, 1))}",
                        "total_pence": rng.randrange(500, 50000, 5), "status": rng.choice(("paid", "shipped"))})
    for k in range(1, strays + 1):
        records.append({"_id": f"x{k}", "name": f"imported row {k}", "status": "unknown"})
    for k in range(1, odd_kinds + 1):
        records.append({"_id": f"s{k}", "kind": _ODD_KINDS[(k - 1) % len(_ODD_KINDS)], "name": f"Supplier {k}",
                        "status": "unknown"})
    rng.shuffle(records)
    return records
