"""Lab 08's seeded data: a sensor fleet and its new devices, tenants' invoices, customers and their orders.

Every generator is a pure function of its arguments (a seeded ``random.Random``, no clock), so a check and
the notebook see the same documents every time.
"""

from __future__ import annotations

import datetime
import random
from typing import Any

from bson import ObjectId

START = datetime.datetime(2026, 3, 2)  #: the fleet's first reading
SHARDS = 3  #: shards of the model cluster in every sharding exercise
CHUNK_DOCS = 100  #: [model] the chunk size, in documents
MAX_INSERT_SHARE = 0.5  #: 08.1: no shard may take more than this share of the week's inserts


def _object_id(when: datetime.datetime, counter: int) -> ObjectId:
    """An ObjectId as a driver makes one at ``when``: the timestamp first, so later ids are greater."""
    stamp = int(when.replace(tzinfo=datetime.timezone.utc).timestamp())
    return ObjectId(stamp.to_bytes(4, "big") + b"\x08\x08\x08\x08\x08" + counter.to_bytes(3, "big"))


def fleet_readings(devices: int = 200, per_device: int = 10, seed: int = 8) -> list[dict]:
    """The fleet's stored readings: ``devices`` sensors (dev-000 ...), ``per_device`` readings each, hourly."""
    rng = random.Random(seed)
    docs = []
    for hour in range(per_device):
        for device in range(devices):
            ts = START + datetime.timedelta(hours=hour, seconds=device)
            docs.append({"_id": _object_id(ts, len(docs)), "deviceId": f"dev-{device:03d}", "ts": ts,
                         "site": f"site-{device % 12:02d}", "temp": round(rng.uniform(15, 30), 1)})
    return docs


def week_of_inserts(first: int = 200, devices: int = 60, per_device: int = 10, seed: int = 8) -> list[dict]:
    """The week's insert stream: ``devices`` new sensors (dev-200 ... as the fleet grows), in time order."""
    rng = random.Random(seed + 1)
    begin = START + datetime.timedelta(days=7)
    docs = []
    for hour in range(per_device):
        for device in range(first, first + devices):
            ts = begin + datetime.timedelta(hours=hour, seconds=device)
            docs.append({"_id": _object_id(ts, 10**6 + len(docs)), "deviceId": f"dev-{device:03d}", "ts": ts,
                         "site": f"site-{device % 12:02d}", "temp": round(rng.uniform(15, 30), 1)})
    return docs


#: 08.1's workload: the reads the fleet's application makes (name -> filter)
FLEET_QUERIES = {
    "one_device_one_day": {"deviceId": "dev-042",
                           "ts": {"$gte": START, "$lt": START + datetime.timedelta(days=1)}},
    "one_device_latest": {"deviceId": "dev-117"},
}
#: the same reads for other devices (a hidden check: a new device's and another stored one's)
FLEET_QUERIES_OTHER = {
    "one_device_one_day": {"deviceId": "dev-231",
                           "ts": {"$gte": START + datetime.timedelta(days=7),
                                  "$lt": START + datetime.timedelta(days=8)}},
    "one_device_latest": {"deviceId": "dev-005"},
}

TENANT_SIZES = {"t01": 40, "t02": 55, "t03": 450, "t04": 30, "t05": 60, "t06": 45, "t07": 350, "t08": 35,
                "t09": 50, "t10": 42, "t11": 300, "t12": 38}


def invoices(sizes: Any = None, seed: int = 8) -> list[dict]:
    """Tenants' invoices: a few large tenants among many small ones; issued over a year, one _id each.

    ``sizes`` maps tenant to invoice count (a dict, or its items as a tuple of pairs).
    """
    rng = random.Random(seed)
    docs = []
    for tenant, count in sorted(dict(sizes or TENANT_SIZES).items()):
        for number in range(count):
            issued = datetime.datetime(2025, 1, 1) + datetime.timedelta(minutes=rng.randrange(365 * 24 * 60))
            docs.append({"_id": len(docs) + 1, "tenantId": tenant, "invoiceNo": number + 1, "issuedAt": issued,
                         "status": rng.choice(["draft", "sent", "paid"]), "total": rng.randrange(1_000, 90_000)})
    return docs


#: 08.3, hidden check: other tenants, two of them large
OTHER_TENANT_SIZES = {"a1": 20, "a2": 520, "a3": 25, "a4": 260, "a5": 33, "a6": 70}


def customers_by_email(count: int = 300, seed: int = 8) -> list[dict]:
    """Customers sharded on a hashed email in 08.2."""
    rng = random.Random(seed)
    first = ["ana", "bruno", "carla", "davi", "elisa", "fabio", "gabi", "heitor", "iris", "joao"]
    return [{"_id": n, "email": f"{rng.choice(first)}.{n}@example.com"} for n in range(1, count + 1)]


#: 08.4: customers whose names differ in case, and some only in accents or by a letter
NAMED_CUSTOMERS = [
    "Ana Lima", "ana lima", "ANA LIMA", "Ána Lima", "Ana Limas", "Anna Lima",
    "Bruno Costa", "bruno costa", "BRUNO COSTA", "Bruno Cóstá", "Bruno", "Costa Bruno",
    "José Souza", "jose souza", "JOSÉ SOUZA", "José  Souza", "Maria", "maria", "MARIA", "Mária", "Mariana",
]


def named_customers() -> list[dict]:
    """08.4's customers, one per name above."""
    return [{"_id": n, "name": name, "tier": "gold" if n % 3 == 0 else "basic"}
            for n, name in enumerate(NAMED_CUSTOMERS, start=1)]


def shop_customers(count: int = 6) -> list[dict]:
    """08.5's source: customers with a name and a phone."""
    return [{"_id": n, "name": f"Customer {n}", "phone": f"+55 11 9{n:04d}-000{n}"} for n in range(1, count + 1)]


def shop_orders(customers: int = 6, count: int = 24) -> list[dict]:
    """08.5's copies: orders holding an extended reference to their customer (name and phone)."""
    people = {c["_id"]: c for c in shop_customers(customers)}
    orders = []
    for n in range(1, count + 1):
        who = people[(n * 5) % customers + 1]
        orders.append({"_id": n, "customerId": who["_id"], "total": 1_000 + 37 * n,
                       "customer": {"name": who["name"], "phone": who["phone"]}})
    return orders
