"""Seeded data for lesson 04, the schema design patterns.

Every generator takes a ``seed`` and draws from its own :class:`random.Random`
(never the clock): same arguments, same documents.  Load the results with
``insert_many``.
"""

from __future__ import annotations

import datetime
import random

START = datetime.datetime(2026, 10, 1, 8, 0, 0)
DAY = datetime.datetime(2026, 10, 8)  #: the day of the bucket exercise's stock events

RECENT_REVIEWS = 10  #: subset: reviews kept in the product
BUCKET_CAP = 50  #: bucket: events per bucket document
FOLLOWER_THRESHOLD = 50  #: outlier: followers embedded before overflowing
EXTRA_PAGE = 100  #: outlier: followers per overflow document
_FIRST = ("An", "Binh", "Chi", "Dung", "Giang", "Hoa", "Khanh", "Linh", "Minh", "Nam", "Phuong", "Quan")
_LAST = ("Nguyen", "Tran", "Le", "Pham", "Hoang", "Vu", "Dang", "Bui")
_WORDS = ("sturdy", "lovely", "late", "cheap", "broken", "perfect", "small", "heavy", "quiet", "bright")


def products(n: int = 20, seed: int = 41) -> list[dict]:
    """``n`` products with an empty ``recentReviews`` subset and no followers yet."""
    rng = random.Random(seed)
    return [{"_id": i, "tenantId": f"t{i % 3}", "name": f"Product {i}",
             "price": rng.randrange(50_000, 900_000, 1_000), "recentReviews": [], "followers": []}
            for i in range(1, n + 1)]


def reviews_for(product_id: int, n: int, seed: int = 42, first_id: int = 1) -> list[dict]:
    """``n`` reviews of one product, oldest first, one hour apart; ids count up from ``first_id``."""
    rng = random.Random(seed * 1_000 + product_id)
    return [{"_id": first_id + k, "productId": product_id, "stars": rng.randint(1, 5),
             "text": f"{rng.choice(_WORDS)} and {rng.choice(_WORDS)}",
             "at": START + datetime.timedelta(hours=k)} for k in range(n)]


def customers(n: int = 12, seed: int = 43) -> list[dict]:
    """``n`` customer profiles: stable fields (name, phone) beside volatile ones (points, last seen)."""
    rng = random.Random(seed)
    found = []
    for i in range(1, n + 1):
        found.append({"_id": i, "tenantId": f"t{i % 3}",
                      "name": f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
                      "phone": f"090{rng.randrange(10**7):07d}",
                      "email": f"customer{i}@example.com",
                      "loyaltyPoints": rng.randrange(5_000),
                      "lastSeenAt": START - datetime.timedelta(minutes=rng.randrange(10_000)),
                      "stats": {"orderCount": 0, "totalSpent": 0}})
    return found


def order_items(rng: random.Random) -> list[dict]:
    """One to four order lines with integer quantities and unit prices (in dong)."""
    return [{"sku": f"SKU-{rng.randrange(1, 200):03d}", "qty": rng.randint(1, 3),
             "unitPrice": rng.randrange(10_000, 500_000, 1_000)} for _ in range(rng.randint(1, 4))]


def new_orders(n: int, customer_ids: list[int], seed: int = 44, first_id: int = 1) -> list[dict]:
    """``n`` orders as a checkout hands them over: items, no total yet."""
    rng = random.Random(seed)
    return [{"_id": first_id + k, "customerId": rng.choice(customer_ids), "items": order_items(rng),
             "status": "PLACED"} for k in range(n)]


def stock_events(n: int, seed: int = 45) -> list[dict]:
    """``n`` stock movements (IN or OUT with a quantity), a minute apart."""
    rng = random.Random(seed)
    return [{"type": rng.choice(("IN", "OUT", "OUT")), "qty": rng.randint(1, 9),
             "at": START + datetime.timedelta(minutes=k)} for k in range(n)]


def catalog_items(seed: int = 46) -> list[dict]:
    """A polymorphic catalog: phones, shirts and books in one collection, told apart by ``kind``."""
    rng = random.Random(seed)
    items = []
    for i in range(1, 31):
        kind = ("phone", "shirt", "book")[i % 3]
        base = {"_id": i, "tenantId": f"t{i % 2}", "kind": kind, "name": f"{kind.title()} {i}",
                "price": rng.randrange(100_000, 9_000_000, 10_000)}
        if kind == "phone":
            base["specs"] = {"ramGb": rng.choice((4, 8, 12)), "storageGb": rng.choice((128, 256, 512))}
        elif kind == "shirt":
            base["specs"] = {"sizes": sorted(rng.sample(["S", "M", "L", "XL"], 2)), "material": "cotton"}
        else:
            base["specs"] = {"isbn": f"978-0-{rng.randrange(10**6):06d}-{i % 10}"}
        items.append(base)
    return items


def versioned_orders(seed: int = 47) -> list[dict]:
    """Orders in two live shapes: v1 (no schema_version, ``customer.phone``) and v2 (``customer.phones``).

    Phone ``0901234567`` appears in both shapes (orders 2 and 9), and order 5 is a v1 order without a phone.
    """
    rng = random.Random(seed)
    orders = []
    for i in range(1, 13):
        phone = "0901234567" if i in (2, 9) else f"090{rng.randrange(10**7):07d}"
        if i <= 6:
            customer = {"name": f"Customer {i}"} if i == 5 else {"name": f"Customer {i}", "phone": phone}
            orders.append({"_id": i, "tenantId": "t1", "total": rng.randrange(100_000, 900_000, 1_000),
                           "customer": customer})
        else:
            phones = [phone] + ([f"091{rng.randrange(10**7):07d}"] if i % 2 else [])
            orders.append({"_id": i, "tenantId": "t1", "schema_version": 2,
                           "total": rng.randrange(100_000, 900_000, 1_000),
                           "customer": {"name": f"Customer {i}", "phones": phones}})
    return orders
