"""The legacy shop of lesson 06: a database with every anti-pattern ``course audit`` finds, and its clean copy.

``legacy_shop()`` is the shop as years of quick fixes left it:

* ``customers`` embed their whole order history (``orders``), which grows with
  the customer's age and has a long tail (a few business customers buy every
  week); some ``phone`` numbers were stored as numbers by an old import;
* ``products``: the bestseller embeds all its 20,000 ``reviews`` (a document of
  about 2 MB among documents of a few hundred bytes); one ``views`` counter
  passed the int32 maximum and turned long; an index on ``supplier_id`` that no
  read uses;
* ``orders`` carry an extended reference ``customer_copy`` (lesson 02's
  convention) that drifted for customers renamed since; documents without
  ``schema_version`` beside versions 1 and 2; an index on ``customer_id`` that is
  a prefix of the one on ``customer_id, placed_at``;
* ``payments``: three shapes of one entity (card, bank transfer, voucher) and no
  field saying which;
* ``carts_acme``, ``carts_globex``, ...: one collection per tenant;
* ``suppliers``: documents that all agree on one shape, and no validator.

``legacy_shop(clean=True)`` is the same shop repaired: order history in
``orders`` with a subset of five in the customer, reviews in pages of 100
(``review_pages``) with the ten newest in the product, counters long
everywhere, copies in sync, one version, a ``method`` discriminator, one
``carts`` collection with a ``tenant`` field, a validator on every collection,
no redundant or unused index.  ``load_shop(db, shop)`` writes either into a
course database; ``shop_reads(db)`` runs the application's reads.  Every value
is drawn from ``random.Random(seed)``; dates count back from :data:`NOW`.
"""

from __future__ import annotations

import datetime
import math
import random
from dataclasses import dataclass, field
from typing import Any

from bson.int64 import Int64

from course.store.namespace import guard

#: The shop's "today": every date is this minus some days (no clock is read).
NOW = datetime.datetime(2026, 10, 1, 12, 0, 0)
TENANTS = ("acme", "globex", "hooli", "initech", "umbrella")
CATEGORIES = ("kitchen", "garden", "office", "toys", "bath")
BESTSELLER = 1
BESTSELLER_REVIEWS = 20_000
#: The product whose views counter passed the int32 maximum.
LONG_COUNTER = 7
INT32_MAX = 2 ** 31 - 1
RECENT_ORDERS = 5
RECENT_REVIEWS = 10
REVIEW_PAGE = 100
#: Business customers whose order history is the long tail.
BUSINESS_CUSTOMERS = (11, 42, 150)
_FIRST = ("Ada", "Ben", "Chloe", "Dev", "Ella", "Femi", "Grace", "Hugo", "Isla", "Jai", "Kemi", "Leo")
_LAST = ("Shaw", "Patel", "Okafor", "Nguyen", "Evans", "Khan", "Murphy", "Silva")
_WORDS = ("sturdy", "lovely", "late", "cheap", "broken", "perfect", "small", "heavy", "quiet", "bright")


@dataclass
class Shop:
    """A shop's collections, their indexes (keys, options) and their validators."""

    collections: dict[str, list[dict]] = field(default_factory=dict)
    indexes: dict[str, list[tuple[list, dict]]] = field(default_factory=dict)
    validators: dict[str, dict] = field(default_factory=dict)

    def only(self, names) -> "Shop":
        """The same shop reduced to the collections ``names`` (a name ending in ``*`` stands for every
        collection it starts: ``carts_*``); the documents are shared, not copied."""
        names = list(names)

        def wanted(name: str) -> bool:
            return any(name == n or (n.endswith("*") and name.startswith(n[:-1])) for n in names)

        return Shop({k: v for k, v in self.collections.items() if wanted(k)},
                    {k: v for k, v in self.indexes.items() if wanted(k)},
                    {k: v for k, v in self.validators.items() if wanted(k)})


def _schema(**types: Any) -> dict:
    """A ``$jsonSchema`` validator requiring every field given, each of its BSON type(s)."""
    return {"$jsonSchema": {"bsonType": "object", "required": sorted(types),
                            "properties": {name: {"bsonType": t} for name, t in types.items()}}}


def _phone(rng: random.Random) -> str:
    return f"07{rng.randint(100, 999)} {rng.randint(100000, 999999)}"


def _customers(rng: random.Random, n: int) -> list[dict]:
    people = []
    for customer_id in range(1, n + 1):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        age_days = rng.randint(30, 3650)
        people.append({"_id": customer_id, "name": f"{first} {last}", "phone": _phone(rng),
                       "email": f"customer{customer_id}@example.com",
                       "since": NOW - datetime.timedelta(days=age_days)})
    return people


def _history(rng: random.Random, customer: dict) -> list[dict]:
    """The customer's orders since they joined: about six a year, fifty times that for a business."""
    years = (NOW - customer["since"]).days / 365.25
    rate = 150.0 if customer["_id"] in BUSINESS_CUSTOMERS else rng.lognormvariate(math.log(6), 0.5)
    count = round(years * rate)
    span = (NOW - customer["since"]).days
    days = sorted(rng.randint(0, span) for _ in range(count))
    return [{"order_no": k + 1, "placed_at": customer["since"] + datetime.timedelta(days=d),
             "total_pence": rng.randrange(299, 19999)} for k, d in enumerate(days)]


def _products(rng: random.Random, n: int) -> list[dict]:
    return [{"_id": product_id, "name": f"Product {product_id}", "category": CATEGORIES[product_id % 5],
             "price_pence": rng.randrange(199, 9999, 10), "supplier_id": rng.randint(1, 40),
             "tags": rng.sample(_WORDS, rng.randint(0, 4)), "views": rng.randrange(0, 50_000)}
            for product_id in range(1, n + 1)]


def _reviews(rng: random.Random, product_id: int, count: int) -> list[dict]:
    """``count`` reviews, oldest first: stars and a short text (few fields: the embedded engines insert
    each field of 20,000 embedded reviews one by one)."""
    return [{"stars": rng.randint(1, 5),
             "text": f"{rng.choice(_WORDS)} and {rng.choice(_WORDS)}, {rng.choice(_WORDS)} too"}
            for _ in range(count)]


def _lines(rng: random.Random, products: list[dict]) -> list[dict]:
    return [{"product_id": p["_id"], "name": p["name"], "qty": rng.randint(1, 3), "price_pence": p["price_pence"]}
            for p in rng.sample(products, rng.randint(1, 4))]


def _orders(rng: random.Random, n: int, customers: list[dict], products: list[dict]) -> list[dict]:
    orders = []
    for order_id in range(1, n + 1):
        customer = rng.choice(customers)
        lines = _lines(rng, products)
        orders.append({"_id": order_id, "customer_id": customer["_id"],
                       "customer_copy": {"name": customer["name"], "phone": customer["phone"]},
                       "placed_at": NOW - datetime.timedelta(days=n - order_id, hours=rng.randint(0, 23)),
                       "lines": lines, "total_pence": sum(l["qty"] * l["price_pence"] for l in lines),
                       "status": rng.choice(("PAID", "SHIPPED", "DELIVERED"))})
    return orders


def _as_v2(order: dict, rng: random.Random) -> dict:
    return {**order, "schema_version": 2, "channel": rng.choice(("web", "app")),
            "ship_to_at_order": {"postcode": f"N{rng.randint(1, 22)} {rng.randint(1, 9)}AB"}}


def _payment(rng: random.Random, payment_id: int, order: dict) -> dict:
    common = {"_id": payment_id, "order_id": order["_id"], "amount_pence": order["total_pence"],
              "paid_at": order["placed_at"] + datetime.timedelta(minutes=5), "currency": "GBP"}
    method = ("card", "card", "bank", "voucher")[payment_id % 4]
    if method == "card":
        details = {"card_brand": rng.choice(("VISA", "MC")), "card_last4": f"{rng.randint(0, 9999):04d}",
                   "card_expiry": f"{rng.randint(1, 12):02d}/{rng.randint(27, 31)}", "auth_code": f"A{payment_id:06d}"}
    elif method == "bank":
        details = {"iban": f"GB{rng.randint(10, 99)}BANK{rng.randint(10**7, 10**8 - 1)}", "bic": "BANKGB2L",
                   "bank_reference": f"ORDER-{order['_id']}"}
    else:
        details = {"voucher_code": f"V-{rng.randint(10**5, 10**6 - 1)}", "issued_by": rng.choice(("promo", "refund"))}
    return {**common, "method": method, **details}


def _suppliers(rng: random.Random, n: int = 40) -> list[dict]:
    return [{"_id": supplier_id, "name": f"Supplier {supplier_id}", "country": rng.choice(("GB", "DE", "VN")),
             "lead_days": rng.randint(2, 30), "active": rng.random() < 0.9} for supplier_id in range(1, n + 1)]


#: the name of each carts_<tenant> collection's index (db.carts holding it means a collection was renamed)
TENANT_INDEX = "tenant_carts_by_user"


def _carts(rng: random.Random, tenant: str, n: int = 20) -> list[dict]:
    return [{"_id": f"{tenant}-{user}", "user_id": user,
             "items": [{"product_id": rng.randint(1, 200), "qty": rng.randint(1, 3)} for _ in range(rng.randint(0, 4))],
             "updated_at": NOW - datetime.timedelta(hours=rng.randint(1, 500))} for user in range(1, n + 1)]


def legacy_shop(clean: bool = False, *, seed: int = 6, customers: int = 300, orders: int = 600,
                products: int = 200, payments: int = 300, reviews: int = BESTSELLER_REVIEWS) -> Shop:
    """The legacy shop (see the module docstring), or with ``clean=True`` its repaired copy."""
    rng = random.Random(seed)
    people = _customers(rng, customers)
    catalog = _products(rng, products)
    order_docs = _orders(rng, orders, people, catalog)
    histories = {c["_id"]: _history(rng, c) for c in people}
    product_reviews = {p["_id"]: _reviews(rng, p["_id"], reviews if p["_id"] == BESTSELLER else rng.randint(0, 5))
                       for p in catalog}
    payment_docs = [_payment(rng, k + 1, order_docs[k % len(order_docs)]) for k in range(payments)]
    shop = Shop()
    if clean:
        _clean(shop, rng, people, catalog, order_docs, histories, product_reviews, payment_docs)
    else:
        _legacy(shop, rng, people, catalog, order_docs, histories, product_reviews, payment_docs)
    return shop


def _legacy(shop, rng, people, catalog, order_docs, histories, product_reviews, payment_docs) -> None:
    numbered = {}
    for customer in people[::10]:  # an old import stored these phones as numbers (copies included)
        customer["phone"] = numbered[customer["_id"]] = int(customer["phone"].replace(" ", ""))
    for order in order_docs:
        if order["customer_id"] in numbered:
            order["customer_copy"]["phone"] = numbered[order["customer_id"]]
    renamed = {c["_id"] for c in people[3::12]}  # renamed after their orders were copied, copies left behind
    for customer in people:
        if customer["_id"] in renamed:
            customer["name"] += "-Jones"
    shop.collections["customers"] = [{**c, "orders": histories[c["_id"]]} for c in people]
    products = [{**p, "reviews": product_reviews[p["_id"]]} for p in catalog]
    products[LONG_COUNTER - 1]["views"] = Int64(INT32_MAX + 1)
    shop.collections["products"] = products
    orders = []
    for index, order in enumerate(order_docs):
        if index < 120:
            shaped = dict(order)  # the first import wrote no version
        elif index < 400:
            shaped = {**order, "schema_version": 1}
        else:
            shaped = _as_v2(order, rng)
        orders.append(shaped)
    shop.collections["orders"] = orders
    shop.collections["payments"] = [{k: v for k, v in p.items() if k != "method"} for p in payment_docs]
    shop.collections["suppliers"] = _suppliers(rng)
    for tenant in TENANTS:
        shop.collections[f"carts_{tenant}"] = _carts(rng, tenant)
        shop.indexes[f"carts_{tenant}"] = [([("user_id", 1)], {"name": TENANT_INDEX})]
        shop.validators[f"carts_{tenant}"] = _schema(user_id="int", items="array", updated_at="date")
    shop.indexes.update({
        "customers": [([("email", 1)], {"unique": True})],
        "orders": [([("customer_id", 1)], {}), ([("customer_id", 1), ("placed_at", -1)], {})],
        "products": [([("category", 1), ("price_pence", 1)], {}), ([("supplier_id", 1)], {})],
        "payments": [([("order_id", 1)], {})],
    })


def _clean(shop, rng, people, catalog, order_docs, histories, product_reviews, payment_docs) -> None:
    shop.collections["customers"] = [
        {**c, "recent_orders": [{"order_no": o["order_no"], "placed_at": o["placed_at"],
                                 "total_pence": o["total_pence"]} for o in histories[c["_id"]][-RECENT_ORDERS:]]}
        for c in people]
    shop.collections["products"] = [{**p, "views": Int64(p["views"]),
                                     "recent_reviews": product_reviews[p["_id"]][-RECENT_REVIEWS:]} for p in catalog]
    pages = []
    for product in catalog:
        reviews = product_reviews[product["_id"]]
        for page, start in enumerate(range(0, len(reviews), REVIEW_PAGE), start=1):
            chunk = reviews[start:start + REVIEW_PAGE]
            pages.append({"_id": f"{product['_id']}-{page}", "product_id": product["_id"], "page": page,
                          "count": len(chunk), "reviews": chunk})
    shop.collections["review_pages"] = pages
    shop.collections["orders"] = [_as_v2(o, rng) for o in order_docs]
    shop.collections["payments"] = payment_docs
    shop.collections["suppliers"] = _suppliers(rng)
    shop.collections["carts"] = [{**cart, "tenant": tenant} for tenant in TENANTS for cart in _carts(rng, tenant)]
    shop.indexes.update({
        "customers": [([("email", 1)], {"unique": True})],
        "orders": [([("customer_id", 1), ("placed_at", -1)], {})],
        "products": [([("category", 1), ("price_pence", 1)], {})],
        "review_pages": [([("product_id", 1), ("page", 1)], {})],
        "payments": [([("order_id", 1)], {})],
        "carts": [([("tenant", 1), ("user_id", 1)], {})],
    })
    shop.validators.update({
        "customers": _schema(name="string", phone="string", email="string", since="date", recent_orders="array"),
        "products": _schema(name="string", category="string", price_pence="int", supplier_id="int", tags="array",
                            views="long", recent_reviews="array"),
        "review_pages": _schema(product_id="int", page="int", count="int", reviews="array"),
        "orders": _schema(schema_version="int", customer_id="int", customer_copy="object", placed_at="date",
                          lines="array", total_pence="int", status="string", channel="string",
                          ship_to_at_order="object"),
        "payments": _schema(order_id="int", amount_pence="int", paid_at="date", currency="string", method="string"),
        "suppliers": _schema(name="string", country="string", lead_days="int", active="bool"),
        "carts": _schema(tenant="string", user_id="int", items="array", updated_at="date"),
    })


def load_shop(db: Any, shop: Shop, *, validators: bool = True) -> None:
    """Write ``shop`` into ``db`` (a course database, emptied first): validators, documents, indexes.

    Validators are created only when ``validators`` is true (mongomock cannot store them).
    """
    guard(db.name)
    for name in db.list_collection_names():
        db[name].drop()
    for name, documents in shop.collections.items():
        if validators and name in shop.validators:
            db.create_collection(name, validator=shop.validators[name])
        for start in range(0, len(documents), 500):
            db[name].insert_many(documents[start:start + 500])
    for name, specs in shop.indexes.items():
        for keys, options in specs:
            db[name].create_index(keys, **options)


def shop_reads(db: Any, clean: bool = False) -> dict[str, Any]:
    """The application's reads of the legacy shop (or of the clean copy), each result as plain data."""
    reads = {
        "customer_by_email": db.customers.find_one({"email": "customer1@example.com"}, {"name": 1}),
        "orders_of_customer": [d["_id"] for d in db.orders.find({"customer_id": 11}, {"_id": 1})
                               .sort("placed_at", -1).limit(5)],
        "category_page": [d["_id"] for d in db.products.find({"category": "kitchen"}, {"_id": 1})
                          .sort("price_pence", 1).limit(10)],
        "payments_of_order": [d["_id"] for d in db.payments.find({"order_id": 5}, {"_id": 1}).sort("_id", 1)],
    }
    if clean:
        reads["cart"] = db.carts.find_one({"tenant": "acme", "user_id": 3}, {"items": 1})
        reads["review_page"] = db.review_pages.find_one({"product_id": BESTSELLER, "page": 2}, {"count": 1})
    else:
        reads["cart"] = db["carts_acme"].find_one({"user_id": 3}, {"items": 1})
    return reads
