"""Seeded orders for lesson 05: a collection caught half-way through a schema change.

Version 1 orders carry one phone number as a string, ``customer.phone``, and no
``schema_version`` field.  Version 2 orders carry ``schema_version: 2`` and a
list, ``customer.phones``.  Both shapes coexist, as they do in a collection
too large to change at once.  A few orders have no phone at all, and two
have a ``views`` counter that is a 64-bit long: one because ``$inc`` pushed it
past the int32 maximum, one because another service wrote it as a long.

Same arguments, same documents: every generator draws from its own
:class:`random.Random`, never from the clock.
"""

from __future__ import annotations

import random
from typing import Any

from bson.int64 import Int64

INT32_MAX = 2**31 - 1
#: The order whose int32 ``views`` counter sits at the maximum until :func:`seed_orders` increments it.
OVERFLOW_ID = 6
#: The order whose ``views`` was written as a small 64-bit long by a reporting service.
SMALL_LONG_ID = 9
#: Orders with no phone at all (version 1: no ``customer.phone``; version 2: ``phones: []``).
NO_PHONE_IDS = (4, 17, 33)
VERSION_FIELD = "schema_version"


def phone_of(customer_id: int) -> str:
    """The phone number of customer ``customer_id`` (ten digits, as a string)."""
    return f"09{(customer_id * 7919) % 100_000_000:08d}"


def legacy_orders(n: int = 240, seed: int = 5, customers: int = 60, v2_share: float = 0.15) -> list[dict]:
    """Return ``n`` orders, mostly version 1, some version 2, sharing ``customers`` customers.

    Order ``OVERFLOW_ID`` has ``views`` at the int32 maximum (increment it once
    to make it a long), order ``SMALL_LONG_ID`` has a small ``Int64`` counter,
    and the orders in ``NO_PHONE_IDS`` have no phone.
    """
    if not isinstance(n, int) or n < max(NO_PHONE_IDS):
        raise ValueError(f"n must be an int of at least {max(NO_PHONE_IDS)}, got {n!r}")
    rng = random.Random(seed)
    orders = []
    for order_id in range(1, n + 1):
        customer_id = rng.randint(1, customers)
        version = 2 if rng.random() < v2_share else 1
        customer: dict[str, Any] = {"_id": customer_id, "name": f"Customer {customer_id}"}
        if order_id not in NO_PHONE_IDS:
            if version == 1:
                customer["phone"] = phone_of(customer_id)
            else:
                customer["phones"] = [phone_of(customer_id)]
        elif version == 2:
            customer["phones"] = []
        order: dict[str, Any] = {"_id": order_id, "tenantId": f"t{customer_id % 5}"}
        if version == 2:
            order[VERSION_FIELD] = 2
        order["customer"] = customer
        order["total_pence"] = rng.randrange(500, 90_000, 5)
        order["views"] = rng.randint(0, 400)
        orders.append(order)
    orders[OVERFLOW_ID - 1]["views"] = INT32_MAX
    orders[SMALL_LONG_ID - 1]["views"] = Int64(12)
    return orders


def seed_orders(collection: Any, orders: list[dict]) -> int:
    """Insert ``orders`` (one ``insert_many``), then ``$inc`` the int32-maximum counter once.

    Returns the number of orders inserted.  On a server and on mongoeco the
    incremented counter becomes a 64-bit long, as it would in production.
    """
    collection.insert_many([dict(o) for o in orders])
    collection.update_one({"_id": OVERFLOW_ID, "views": INT32_MAX}, {"$inc": {"views": 1}})
    return len(orders)
