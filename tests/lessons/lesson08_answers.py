"""Learner answers to lab 08, written from the statements: right ones in other idioms, wrong ones that make the
mistakes the lesson warns about, each breaking one requirement.  Functions and data only: the lists that pair
them with requirements are in tests/lessons/test_lesson08.py.
"""

from __future__ import annotations

import re

from bson.son import SON
from pymongo import ASCENDING, IndexModel, InsertOne, UpdateMany
from pymongo.collation import Collation

CI = {"locale": "en", "strength": 2}

# 08.1 the fleet's key ----------------------------------------------------------------------------------
FLEET_RIGHT = {
    "hashed device alone": {"deviceId": "hashed"},
    "pairs, hashed device then ts": [("deviceId", "hashed"), ("ts", 1)],
    "SON, hashed device then _id": SON([("deviceId", "hashed"), ("_id", 1)]),
}
FLEET_WRONG = {
    "deviceId ranged: new devices sort last": ("inserts", {"deviceId": 1}, "last chunk"),
    "deviceId then ts, ranged": ("inserts", {"deviceId": 1, "ts": 1}, "one shard takes 100%"),
    "hashed _id: reads broadcast": ("queries", {"_id": "hashed"}, "broadcast"),
    "hashed ts: reads broadcast": ("queries", {"ts": "hashed"}, "range on the hashed field"),
    "site then device: reads broadcast": ("queries", {"site": 1, "deviceId": 1}, "broadcast"),
}

# 08.3 refining ------------------------------------------------------------------------------------------
REFINE_RIGHT = {
    "tenant then _id": {"tenantId": 1, "_id": 1},
    "pairs, tenant then invoiceNo": [("tenantId", 1), ("invoiceNo", ASCENDING)],
    "tenant then hashed _id": {"tenantId": 1, "_id": "hashed"},
}


# 08.4 case-insensitive ----------------------------------------------------------------------------------
def index_model(customers):
    customers.create_indexes([IndexModel([("name", ASCENDING)], collation={"locale": "en", "strength": 2},
                                         name="by_name_ci")])


def index_compound(customers):
    customers.create_index([("name", 1), ("tier", 1)], collation=dict(CI))


def index_descending(customers):
    customers.create_index([("name", -1)], collation={"strength": 2, "locale": "en"}, name="name_desc_ci")


def index_collation_object(customers):
    customers.create_index([("name", ASCENDING)], collation=Collation(locale="en", strength=2))


def index_named_plain(customers):
    customers.create_index("name", name="name_ci")


def index_strength_1(customers):
    customers.create_index("name", collation={"locale": "en", "strength": 1})


def index_plain(customers):
    customers.create_index("name")


def index_lower_copy(customers):
    customers.create_index("name_lower")


def search_eq(name):
    return {"filter": {"name": {"$eq": name}}, "collation": {"locale": "en", "strength": 2}}


def search_in(name):
    return dict(filter={"name": {"$in": [name]}}, collation=dict(CI), sort=[("_id", 1)])


def search_full_collation(name):
    return {"filter": {"name": name}, "collation": {"locale": "en", "strength": 2, "caseLevel": False,
                                                     "numericOrdering": False}, "projection": {"name": 1}}


def search_regex(name):
    return {"filter": {"name": {"$regex": f"^{re.escape(name)}$", "$options": "i"}}}


def search_compiled_regex(name):
    return {"filter": {"name": re.compile(f"^{re.escape(name)}$", re.IGNORECASE)}}


def search_french(name):
    return {"filter": {"name": name}, "collation": {"locale": "fr", "strength": 2}}


def search_first_only(name):
    return {"filter": {"name": name}, "collation": dict(CI), "limit": 1}


def search_basic_tier(name):
    return {"filter": {"name": name, "tier": "basic"}, "collation": dict(CI)}


def search_no_collation(name):
    return {"filter": {"name": name}}


def search_numeric_ordering(name):
    return {"filter": {"name": name}, "collation": {**CI, "numericOrdering": True}}


def search_en_us(name):
    return {"filter": {"name": name}, "collation": {"locale": "en_US", "strength": 2}}


def index_tier_first(customers):
    customers.create_index([("tier", 1), ("name", 1)], collation=CI)


def search_collation_object(name):
    return {"filter": {"name": name}, "collation": Collation("en", strength=2)}


# 08.5 change streams ------------------------------------------------------------------------------------
def options_start_after(token):
    if token is None:
        return {"full_document": "updateLookup"}
    return {"start_after": token, "full_document": "updateLookup"}


def options_always(token):
    return dict(full_document="updateLookup", resume_after=token)


def options_with_pipeline(token):
    found = {"full_document": "updateLookup",
             "pipeline": [{"$match": {"operationType": {"$in": ["insert", "update", "replace", "delete"]}}}]}
    if token:
        found["resume_after"] = token
    return found


def options_ignore_token(token):
    return {"full_document": "updateLookup"}


def options_no_lookup(token):
    return {} if token is None else {"resume_after": token}


def options_when_available(token):
    return {"full_document": "whenAvailable", **({"resume_after": token} if token else {})}


def options_lookup_first_start_only(token):
    """updateLookup asked for on the first start only: a resumed stream's updates lack the customer."""
    return {"resume_after": token} if token else {"full_document": "updateLookup"}


def options_waiting(token):
    """A learner who passes the driver's own default wait: the course's loop must not wait on it."""
    return {"full_document": "updateLookup", "resume_after": token, "max_await_time_ms": None}


def apply_bulk(orders, event):
    who = event["documentKey"]["_id"]
    kind = event["operationType"]
    if kind == "delete":
        orders.bulk_write([UpdateMany({"customerId": who}, {"$unset": {"customer.phone": 1}})])
    elif kind in ("update", "replace") and event.get("fullDocument"):
        doc = event["fullDocument"]
        orders.bulk_write([UpdateMany({"customerId": who}, {"$set": {"customer": {"name": doc["name"],
                                                                                  "phone": doc["phone"]}}})])


def apply_one_by_one(orders, event):
    who = event["documentKey"]["_id"]
    if event["operationType"] not in ("update", "replace", "delete"):
        return
    for order in list(orders.find({"customerId": who}, {"_id": 1})):
        if event["operationType"] == "delete":
            orders.update_one({"_id": order["_id"]}, {"$unset": {"customer.phone": ""}})
        elif event.get("fullDocument") is not None:
            orders.update_one({"_id": order["_id"]}, {"$set": {"customer.name": event["fullDocument"]["name"],
                                                               "customer.phone": event["fullDocument"]["phone"]}})


def apply_match_case(orders, event):
    match event:
        case {"operationType": "update" | "replace", "fullDocument": {"name": name, "phone": phone}}:
            orders.update_many({"customerId": event["documentKey"]["_id"]},
                               {"$set": {"customer.name": name, "customer.phone": phone}})
        case {"operationType": "delete"}:
            orders.update_many({"customerId": event["documentKey"]["_id"]}, {"$unset": {"customer.phone": ""}})


def apply_first_order_only(orders, event):
    who = event["documentKey"]["_id"]
    if event["operationType"] in ("update", "replace") and event.get("fullDocument"):
        orders.update_one({"customerId": who}, {"$set": {"customer.name": event["fullDocument"]["name"],
                                                         "customer.phone": event["fullDocument"]["phone"]}})
    elif event["operationType"] == "delete":
        orders.update_one({"customerId": who}, {"$unset": {"customer.phone": ""}})


def apply_delete_drops_copy(orders, event):
    who = event["documentKey"]["_id"]
    if event["operationType"] in ("update", "replace") and event.get("fullDocument"):
        orders.update_many({"customerId": who}, {"$set": {"customer.name": event["fullDocument"]["name"],
                                                          "customer.phone": event["fullDocument"]["phone"]}})
    elif event["operationType"] == "delete":
        orders.update_many({"customerId": who}, {"$unset": {"customer": ""}})


def apply_deletes_orders(orders, event):
    apply_bulk(orders, event)
    if event["operationType"] == "delete":
        orders.delete_many({"customerId": event["documentKey"]["_id"]})


def apply_updates_only(orders, event):
    if event["operationType"] == "update" and event.get("fullDocument"):
        doc = event["fullDocument"]
        orders.update_many({"customerId": doc["_id"]}, {"$set": {"customer.name": doc["name"],
                                                                 "customer.phone": doc["phone"]}})
    elif event["operationType"] == "delete":
        orders.update_many({"customerId": event["documentKey"]["_id"]}, {"$unset": {"customer.phone": ""}})


def apply_trusts_full_document(orders, event):
    kind = event["operationType"]
    who = event["documentKey"]["_id"]
    if kind in ("update", "replace"):
        doc = event["fullDocument"]
        orders.update_many({"customerId": who}, {"$set": {"customer.name": doc["name"],
                                                          "customer.phone": doc["phone"]}})
    elif kind == "delete":
        orders.update_many({"customerId": who}, {"$unset": {"customer.phone": ""}})


def apply_copies_every_field(orders, event):
    who, doc = event["documentKey"]["_id"], event.get("fullDocument")
    if event["operationType"] in ("update", "replace") and doc:
        orders.update_many({"customerId": who}, {"$set": {f"customer.{k}": v for k, v in doc.items() if k != "_id"}})
    elif event["operationType"] == "delete":
        orders.update_many({"customerId": who}, {"$unset": {"customer.phone": ""}})


def apply_by_copied_name(orders, event):
    """Finds the copies by the name they hold, then by customerId: another customer of that name is changed too."""
    who, doc = event["documentKey"]["_id"], event.get("fullDocument")
    if event["operationType"] in ("update", "replace") and doc:
        orders.update_many({"customer.name": doc["name"]}, {"$set": {"customer.phone": doc["phone"]}})
        orders.update_many({"customerId": who}, {"$set": {"customer.name": doc["name"],
                                                          "customer.phone": doc["phone"]}})
    elif event["operationType"] == "delete":
        orders.update_many({"customerId": who}, {"$unset": {"customer.phone": ""}})


def apply_insert_upserts(orders, event):
    """An insert upserts an order holding the new customer's copy."""
    who, doc = event["documentKey"]["_id"], event.get("fullDocument")
    if event["operationType"] == "insert":
        orders.update_many({"customerId": who}, {"$set": {"customer.name": doc["name"],
                                                          "customer.phone": doc.get("phone")}}, upsert=True)
    elif event["operationType"] in ("update", "replace") and doc:
        orders.update_many({"customerId": who}, {"$set": {"customer.name": doc["name"],
                                                          "customer.phone": doc["phone"]}})
    elif event["operationType"] == "delete":
        orders.update_many({"customerId": who}, {"$unset": {"customer.phone": ""}})


def apply_gone_drops_phone(orders, event):
    """Takes an update whose customer is gone (fullDocument None) for a delete."""
    who, doc = event["documentKey"]["_id"], event.get("fullDocument")
    if event["operationType"] == "delete" or (event["operationType"] in ("update", "replace") and doc is None):
        orders.update_many({"customerId": who}, {"$unset": {"customer.phone": ""}})
    elif event["operationType"] in ("update", "replace"):
        orders.update_many({"customerId": who}, {"$set": {"customer.name": doc["name"],
                                                          "customer.phone": doc["phone"]}})


def apply_counts_versions(orders, event):
    """Counts the changes applied to each order: another field, and not the same the second time."""
    who, doc = event["documentKey"]["_id"], event.get("fullDocument")
    if event["operationType"] in ("update", "replace") and doc:
        orders.update_many({"customerId": who}, {"$set": {"customer.name": doc["name"], "customer.phone": doc["phone"]},
                                                 "$inc": {"copyVersion": 1}})
    elif event["operationType"] == "delete":
        orders.update_many({"customerId": who}, {"$unset": {"customer.phone": ""}, "$inc": {"copyVersion": 1}})


def apply_whole_copy(orders, event):
    who, doc = event["documentKey"]["_id"], event.get("fullDocument")
    if event["operationType"] in ("update", "replace") and doc:
        orders.update_many({"customerId": who}, {"$set": {"customer": {"name": doc["name"], "phone": doc["phone"]}}})
    elif event["operationType"] == "delete":
        orders.update_many({"customerId": who}, {"$unset": {"customer.phone": True}})


# 08.6 time series ---------------------------------------------------------------------------------------
def create_by_command(db):
    db.command({"create": "readings", "timeseries": {"timeField": "ts", "metaField": "sensor",
                                                     "granularity": "minutes"},
                "expireAfterSeconds": 2_592_000})


def create_with_dict(db):
    options = dict(timeField="ts", metaField="sensor", granularity="minutes")
    db.create_collection(name="readings", timeseries=options, expireAfterSeconds=60 * 60 * 24 * 30)


def create_by_command_name(db):
    """pymongo's command(name, value, **fields) form."""
    db.command("create", "readings", timeseries={"timeField": "ts", "metaField": "sensor", "granularity": "minutes"},
               expireAfterSeconds=30 * 24 * 3600)


def create_then_collmod(db):
    """The expiry set after creation, by collMod (a server takes it; mongoeco has no collMod)."""
    db.create_collection("readings", timeseries={"timeField": "ts", "metaField": "sensor", "granularity": "minutes"})
    db.command({"collMod": "readings", "expireAfterSeconds": 2_592_000})


def create_ordinary_with_ttl(db):
    db.create_collection("readings")
    db.readings.create_index("ts", expireAfterSeconds=2_592_000)


def create_seconds(db):
    db.create_collection("readings", timeseries={"timeField": "ts", "metaField": "sensor", "granularity": "seconds"},
                         expireAfterSeconds=2_592_000)


def create_no_expiry(db):
    db.create_collection("readings", timeseries={"timeField": "ts", "metaField": "sensor", "granularity": "minutes"})


def create_30_seconds(db):
    db.create_collection("readings", timeseries={"timeField": "ts", "metaField": "sensor", "granularity": "minutes"},
                         expireAfterSeconds=30)


def record_insert_many(readings, sensor_id, ts, value):
    readings.insert_many([{"sensor": sensor_id, "ts": ts, "value": value}])


def record_bulk(readings, sensor_id, ts, value):
    readings.bulk_write([InsertOne({"value": value, "ts": ts, "sensor": sensor_id})])


def record_built(readings, sensor_id, ts, value):
    document = dict(ts=ts)
    document.update(sensor=sensor_id, value=value)
    readings.insert_one(document)


def record_bucket(readings, sensor_id, ts, value):
    readings.update_one({"sensor": sensor_id, "count": {"$lt": 200}},
                        {"$push": {"measurements": {"ts": ts, "value": value}}, "$inc": {"count": 1},
                         "$setOnInsert": {"ts": ts}}, upsert=True)


def record_renamed(readings, sensor_id, ts, value):
    readings.insert_one({"ts": ts, "sensorId": sensor_id, "value": value})


def create_bucket_span(db):
    db.create_collection("readings", timeseries={"timeField": "ts", "metaField": "sensor", "bucketMaxSpanSeconds": 3600,
                                                 "bucketRoundingSeconds": 3600}, expireAfterSeconds=2_592_000)


def create_30_days_in_minutes(db):
    db.create_collection("readings", timeseries={"timeField": "ts", "metaField": "sensor", "granularity": "minutes"},
                         expireAfterSeconds=30 * 24 * 60)


def record_twice(readings, sensor_id, ts, value):
    for _ in range(2):
        readings.insert_one({"ts": ts, "sensor": sensor_id, "value": value})


def record_nested_sensor(readings, sensor_id, ts, value):
    readings.insert_one({"ts": ts, "sensor": {"id": sensor_id}, "value": value})


# 08.7 limits --------------------------------------------------------------------------------------------
LIMITS = {
    "document_mib": 16,
    "nesting_depth": 100,
    "indexes_per_collection": 64,
    "fields_per_compound_index": 32,
    "transaction_seconds": 60,
    "refused_schema_keyword": "format",
    "on_write_conflict": "retry the whole transaction",
}


def limits_with(**changed):
    """The right limits with some answers changed."""
    return {"limits": {**LIMITS, **changed}}
