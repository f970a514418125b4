"""Learner answers to lab 05, written from the statements before reading the checkers (a few added after).

Right answers use other valid idioms than the reference solutions; wrong answers make the mistakes
the lesson warns about, each breaking one requirement.  Functions only: the lists that pair them
with requirements are in tests/lessons/test_lesson05.py.
"""

from __future__ import annotations

import copy
from collections import Counter

from bson.int64 import Int64
from pymongo import UpdateOne

OLD = {"schema_version": {"$exists": False}}
INT32_MAX = 2**31 - 1
_PY_TO_BSON = {str: "string", list: "array", dict: "object", float: "double", bool: "bool",
               type(None): "null", Int64: "long", int: "int"}


def _get(doc, path):
    value = doc
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return "missing"
        value = value[part]
    return _PY_TO_BSON.get(type(value), type(value).__name__)


# 05.1 ----------------------------------------------------------------------------------------
def audit_counter(orders):
    """$project the types, Counter the rows, re-decide int/long with a $type query (distinct)."""
    longs = set(orders.distinct("_id", {"views": {"$type": "long"}}))
    rows = orders.aggregate([{"$project": {
        "v": {"$ifNull": ["$schema_version", 1]},
        "phone": {"$type": "$customer.phone"},
        "phones": {"$type": "$customer.phones"},
        "views": {"$type": "$views"}}}])
    census = Counter()
    for row in rows:
        views = row["views"]
        if views in ("int", "long"):
            views = "long" if row["_id"] in longs else "int"
        census[(row["v"], row["phone"], row["phones"], views)] += 1
    return dict(census)


def audit_python_helper(orders):
    """Classify in Python with a helper, and decide int/long with two $type queries."""
    longs = {d["_id"] for d in orders.find({"views": {"$type": "long"}}, {"_id": 1})}
    ints = {d["_id"] for d in orders.find({"views": {"$type": "int"}}, {"_id": 1})}
    census = {}
    for doc in orders.find():
        views = "long" if doc["_id"] in longs else "int" if doc["_id"] in ints else _get(doc, "views")
        key = (doc.get("schema_version", 1), _get(doc, "customer.phone"), _get(doc, "customer.phones"), views)
        census[key] = census.get(key, 0) + 1
    return census


def audit_two_pipelines(orders):
    """Two $group pipelines split by a $match on the $type query operator: longs, and the rest."""
    def group(match, views):
        pipeline = [{"$match": match}, {"$group": {"_id": {
            "v": {"$ifNull": ["$schema_version", 1]},
            "phone": {"$type": "$customer.phone"},
            "phones": {"$type": "$customer.phones"},
            "views": views}, "n": {"$sum": 1}}}]
        return {(r["_id"]["v"], r["_id"]["phone"], r["_id"]["phones"], r["_id"]["views"]): r["n"]
                for r in orders.aggregate(pipeline)}
    census = group({"views": {"$type": "long"}}, "long")
    for key, n in group({"views": {"$not": {"$type": "long"}}}, {"$type": "$views"}).items():
        census[key] = census.get(key, 0) + n
    return census


def audit_group(orders):
    """The one-pipeline $group census, as on a server."""
    rows = orders.aggregate([{"$group": {"_id": {
        "v": {"$ifNull": ["$schema_version", 1]},
        "phone": {"$type": "$customer.phone"},
        "phones": {"$type": "$customer.phones"},
        "views": {"$type": "$views"}},
        "n": {"$sum": 1}}}])
    return {(r["_id"]["v"], r["_id"]["phone"], r["_id"]["phones"], r["_id"]["views"]): r["n"] for r in rows}


def audit_long_by_value(orders):
    """Wrong (longs): decides long by the value (> int32 max), so a small long counts as int."""
    census = Counter()
    for doc in orders.find():
        views = doc.get("views")
        integer = isinstance(views, int) and not isinstance(views, bool)
        kind = ("long" if views > INT32_MAX else "int") if integer else _get(doc, "views")
        census[(doc.get("schema_version", 1), _get(doc, "customer.phone"), _get(doc, "customer.phones"), kind)] += 1
    return dict(census)


def audit_version_none(orders):
    """Wrong (version): reads schema_version as stored, so version 1 comes out as None."""
    census = audit_counter(orders)
    return {(None if key[0] == 1 else key[0],) + key[1:]: n for key, n in census.items()}


def audit_two_versions(orders):
    """Wrong (version): version 2 when schema_version is 2, else 1, so a version 3 order counts as 1 (review 29)."""
    census = Counter()
    for key, n in audit_counter(orders).items():
        census[(2 if key[0] == 2 else 1,) + key[1:]] += n
    return dict(census)


def audit_python_type_names(orders):
    """Wrong (types): Python's type names ("str", "list", "NoneType") instead of $type's."""
    names = {"string": "str", "array": "list", "missing": "NoneType", "null": "NoneType", "double": "float"}
    census = Counter()
    for k, n in audit_counter(orders).items():  # "missing" and "null" both become "NoneType": counted together
        census[(k[0], names.get(k[1], k[1]), names.get(k[2], k[2]), k[3])] += n
    return dict(census)


def _census_naming(orders, name, type_query=True):
    """A Python census naming each value with ``name(value, present)``; int versus long by a $type query
    (unless not ``type_query``: then as ``name`` says)."""
    longs = set(orders.distinct("_id", {"views": {"$type": "long"}}))

    def at(doc, path):
        value = doc
        for part in path.split("."):
            if not isinstance(value, dict) or part not in value:
                return name(None, False)
            value = value[part]
        return name(value, True)

    census = Counter()
    for doc in orders.find():
        views = at(doc, "views")
        if views in ("int", "long") and type_query:
            views = "long" if doc["_id"] in longs else "int"
        census[(doc.get("schema_version", 1), at(doc, "customer.phone"), at(doc, "customer.phones"), views)] += 1
    return dict(census)


def _named_by_isinstance(value, present, double="double", bool_first=True):
    if not present:
        return "missing"
    if value is None:
        return "null"
    if bool_first and isinstance(value, bool):
        return "bool"
    kinds = ((int, "int"), (float, double), (str, "string"), (list, "array"), (dict, "object"))
    return next((kind for python, kind in kinds if isinstance(value, python)), type(value).__name__)


def audit_isinstance(orders):
    """Review47 05.1 R1: a Python census by isinstance alone (bool first, Int64 as long), no $type at all."""
    def name(value, present):
        return "long" if present and isinstance(value, Int64) else _named_by_isinstance(value, present)
    return _census_naming(orders, name, type_query=False)


def audit_double_named_float(orders):
    """Review47 05.1 W2: an isinstance census that names a double "float"."""
    return _census_naming(orders, lambda value, present: _named_by_isinstance(value, present, double="float"))


def audit_bool_named_int(orders):
    """Review47 05.1 W3: an isinstance census that tests int before bool, so a bool is named "int"."""
    return _census_naming(orders, lambda value, present: _named_by_isinstance(value, present, bool_first=False))


def audit_missing_named_null(orders):
    """Review47 05.1 W5: .get() for every field, so an absent phone is named "null" instead of "missing"."""
    return _census_naming(orders, lambda value, present: _named_by_isinstance(value, True))


def audit_null_named_missing(orders):
    """Wrong (types): a stored null phone named "missing", as a .get() census that treats None as absent does
    (review 29)."""
    return _census_naming(orders, lambda value, present: _named_by_isinstance(value, present and value is not None))


def audit_pairs(orders):
    """Wrong (form): a list of (shape, count) pairs instead of a dict."""
    return sorted(audit_counter(orders).items(), key=str)


def audit_legacy_only(orders):
    """Wrong (counts): audits only the version 1 orders."""
    census = audit_counter(orders)
    return {key: n for key, n in census.items() if key[0] == 1}


# 05.2 ----------------------------------------------------------------------------------------
TO_V2_IFNULL = [
    {"$set": {"customer.phones": {"$cond": {"if": {"$ifNull": ["$customer.phone", False]},
                                            "then": ["$customer.phone"], "else": []}}}},
    {"$set": {"schema_version": 2}},
    {"$unset": ["customer.phone"]},
]
TO_V2_SWITCH = [
    {"$set": {"schema_version": 2, "customer.phones": {"$switch": {
        "branches": [{"case": {"$eq": [{"$type": "$customer.phone"}, "string"]}, "then": ["$customer.phone"]}],
        "default": []}}}},
    {"$unset": "customer.phone"},
]
#: Right: the new field given as an embedded document of fields, which a server sets inside customer (review 29)
TO_V2_EMBEDDED = [
    {"$set": {"schema_version": 2, "customer": {"phones": {
        "$cond": [{"$eq": [{"$type": "$customer.phone"}, "missing"]}, [], ["$customer.phone"]]}}}},
    {"$unset": "customer.phone"},
]
TO_V2_NULL = [{"$set": {"schema_version": 2, "customer.phones": ["$customer.phone"]}}, {"$unset": "customer.phone"}]
TO_V2_KEEPS_PHONE = [{"$set": {"schema_version": 2, "customer.phones": {
    "$cond": [{"$eq": [{"$type": "$customer.phone"}, "missing"]}, [], ["$customer.phone"]]}}}]
#: Wrong (shape): customer becomes a new document holding phones alone ($mergeObjects of one document is an
#: expression, so the customer's other fields are lost; a plain {"phones": ...} would be set inside it)
TO_V2_REPLACES_CUSTOMER = [
    {"$set": {"schema_version": 2, "customer": {"$mergeObjects": [{"phones": {
        "$cond": [{"$eq": [{"$type": "$customer.phone"}, "missing"]}, [], ["$customer.phone"]]}}]}}},
    {"$unset": "customer.phone"},
]


def migrate_order_fam(orders, order_id):
    """find_one_and_update filtered on the old version: 1 when it found the order, else 0."""
    before = orders.find_one_and_update({"_id": order_id, "schema_version": {"$exists": False}}, TO_V2_IFNULL)
    return 0 if before is None else 1


def migrate_order_bulk(orders, order_id):
    """A single-operation bulk_write, version 1 written as schema_version: None (missing or null)."""
    return orders.bulk_write([UpdateOne({"_id": order_id, "schema_version": None}, TO_V2_SWITCH)]).modified_count


def migrate_order_many(orders, order_id):
    """update_many on one _id, through a helper that builds the filter."""
    def still_v1(order_id):
        return {"$and": [{"_id": order_id}, {"schema_version": {"$exists": False}}]}
    return orders.update_many(still_v1(order_id), TO_V2_SWITCH).modified_count


def make_migrate_order(pipeline, version_filter=True):
    """migrate_order with ``pipeline``, with or without the version filter."""
    def migrate_order(orders, order_id):
        query = {"_id": order_id, **(OLD if version_filter else {})}
        return orders.update_one(query, pipeline).modified_count
    return migrate_order


def migrate_order_filter_on_version_1(orders, order_id):
    """Wrong (shape): filters on schema_version 1, which no version 1 order holds, so nothing is migrated."""
    return orders.update_one({"_id": order_id, "schema_version": 1}, TO_V2_SWITCH).modified_count


def migrate_order_bool(orders, order_id):
    """Wrong (count): returns True/False instead of how many documents changed."""
    return orders.update_one({"_id": order_id, **OLD}, TO_V2_SWITCH).modified_count == 1


def migrate_order_always_one(orders, order_id):
    """Wrong (count): reports 1 whether or not anything changed."""
    orders.update_one({"_id": order_id, **OLD}, TO_V2_SWITCH)
    return 1


def migrate_order_upserts(orders, order_id):
    """Wrong (only version 1): upsert=True creates orders, and a second run tries to insert again."""
    return orders.update_one({"_id": order_id, **OLD}, TO_V2_SWITCH, upsert=True).modified_count


def migrate_order_read_then_write(orders, order_id):
    """Wrong (one update): reads the phone, then writes a computed value: a concurrent phone change is lost."""
    doc = orders.find_one({"_id": order_id, **OLD})
    if doc is None:
        return 0
    phone = doc["customer"].get("phone")
    update = {"$set": {"schema_version": 2, "customer.phones": [] if phone is None else [phone]},
              "$unset": {"customer.phone": ""}}
    return orders.update_one({"_id": order_id, **OLD}, update).modified_count


def migrate_order_two_updates(orders, order_id):
    """Wrong (one update): two updates, so a reader can see an order half version 1, half version 2."""
    query = {"_id": order_id, **OLD}
    first = orders.update_one(query, [{"$set": {"customer.phones": {
        "$cond": [{"$eq": [{"$type": "$customer.phone"}, "missing"]}, [], ["$customer.phone"]]}}}])
    if not first.modified_count:
        return 0
    orders.update_one({"_id": order_id}, {"$set": {"schema_version": 2}, "$unset": {"customer.phone": ""}})
    return 1


# 05.3 ----------------------------------------------------------------------------------------
def upgrade_deepcopy(doc):
    """copy.deepcopy then pop: detects version 2 by the new field."""
    if doc is None or "phones" in doc.get("customer", {}):
        return doc
    new = copy.deepcopy(doc)
    phone = new["customer"].pop("phone", None)
    new["customer"]["phones"] = [phone] if phone is not None else []
    new["schema_version"] = 2
    return new


def upgrade_rebuild(doc):
    """Builds a new dict explicitly."""
    if doc is None or doc.get("schema_version") == 2:
        return doc
    customer = {k: v for k, v in doc["customer"].items() if k != "phone"}
    customer["phones"] = [doc["customer"]["phone"]] if "phone" in doc["customer"] else []
    return {**doc, "schema_version": 2, "customer": customer}


def upgrade_no_none(doc):
    """Upgrade that does not accept None (the statement does not ask it to)."""
    if doc.get("schema_version") == 2:
        return doc
    return upgrade_rebuild(doc)


def read_order_by_value(orders, order_id):
    """find_one with the _id as the filter value (pymongo's shorthand)."""
    return upgrade_deepcopy(orders.find_one({"_id": order_id}))


def read_order_loop(orders, order_id):
    """A cursor with limit(1)."""
    for doc in orders.find({"_id": order_id}).limit(1):
        return upgrade_rebuild(doc)
    return None


def find_by_phone_aggregate(orders, phone):
    """aggregate with $match, returned as a lazy map (any iterable will do)."""
    cursor = orders.aggregate([{"$match": {"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}}])
    return map(upgrade_deepcopy, cursor)


def find_by_phone_two_queries(orders, phone):
    """Two queries, the old field first (a migration only moves orders from old to new), merged by _id."""
    found = {}
    for query in ({"customer.phone": phone}, {"customer.phones": {"$in": [phone]}}):
        for doc in orders.find(query):
            found.setdefault(doc["_id"], doc)
    return [upgrade_rebuild(doc) for doc in found.values()]


def find_by_phone_generator(orders, phone):
    """A generator, sorted by _id."""
    for doc in orders.find({"$or": [{"customer.phone": phone}, {"customer.phones": {"$in": [phone]}}]}).sort("_id"):
        yield upgrade_rebuild(doc)


def upgrade_null_phone(doc):
    """Wrong (upgrade): an order with no phone gets [None]."""
    if doc is None or doc.get("schema_version") == 2:
        return doc
    customer = dict(doc["customer"])
    customer["phones"] = [customer.pop("phone", None)]
    return {**doc, "schema_version": 2, "customer": customer}


def upgrade_keeps_phone(doc):
    """Wrong (upgrade): adds phones but keeps the old field."""
    if doc is None or doc.get("schema_version") == 2:
        return doc
    customer = dict(doc["customer"])
    customer["phones"] = [customer["phone"]] if "phone" in customer else []
    return {**doc, "schema_version": 2, "customer": customer}


def upgrade_pops_every_phone(doc):
    """Wrong (upgrade): pops customer.phone whatever the version, so a dual-written version 2 order loses it
    (review 29)."""
    new = copy.deepcopy(doc)
    customer = new.setdefault("customer", {})
    phone = customer.pop("phone", None)
    if "schema_version" not in new:
        customer["phones"] = [] if phone is None else [phone]
        new["schema_version"] = 2
    return new


def read_order_raw(orders, order_id):
    """Wrong (read_order): returns what is stored, version 1 included."""
    return orders.find_one({"_id": order_id})


def read_order_raises_when_missing(orders, order_id):
    """Wrong (read_order): upgrade(None) raises for an order that does not exist."""
    return upgrade_no_none(orders.find_one({"_id": order_id}))


def read_order_migrates(orders, order_id):
    """Wrong (read only): migrates the order it reads (writes the upgraded document back)."""
    doc = upgrade_rebuild(orders.find_one({"_id": order_id}))
    if doc is not None:
        orders.replace_one({"_id": order_id, **OLD}, doc)
    return doc


def find_by_phone_new_field(orders, phone):
    """Wrong (find_by_phone): only the new field, so version 1 orders are missed."""
    return [upgrade_rebuild(d) for d in orders.find({"customer.phones": phone})]


def find_by_phone_first_phone(orders, phone):
    """Review47 05.3 W1: either field, but customer.phones matched on its first phone only."""
    query = {"$or": [{"customer.phone": phone}, {"customer.phones.0": phone}]}
    return [upgrade_rebuild(d) for d in orders.find(query)]


def find_by_phone_raw(orders, phone):
    """Wrong (find_by_phone): both places, but returned as stored (version 1 shape)."""
    return list(orders.find({"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}))


def find_by_phone_counts_views(orders, phone):
    """Wrong (read only): counts a view on every order it finds."""
    query = {"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}
    orders.update_many(query, {"$inc": {"views": 1}})
    return [upgrade_rebuild(d) for d in orders.find(query)]


# 05.4 ----------------------------------------------------------------------------------------
def _walk_by_id_ranges(to_v2):
    """Walk _id ranges in order, resumable from the last _id; count what update_many changed."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved, last = 0, None
        while True:
            query = {} if last is None else {"_id": {"$gt": last}}
            ids = [d["_id"] for d in orders.find(query, {"_id": 1}).sort("_id", 1).limit(batch_size)]
            if not ids:
                return moved
            changed = orders.update_many({"_id": {"$in": ids}, **OLD}, to_v2).modified_count
            moved += changed
            last = ids[-1]
            log(f"_ids {ids[0]}..{last}: {changed} migrated")
            sleep(pause)
    return migrate_in_batches


def _walk_range_bounds(to_v2):
    """Version filter plus _id > last, sorted; each batch updated by its _id bounds."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        total, last = 0, None
        while True:
            query = dict(OLD) if last is None else {**OLD, "_id": {"$gt": last}}
            batch = list(orders.find(query, {"_id": 1}).sort([("_id", 1)]).limit(batch_size))
            if not batch:
                break
            low, high = batch[0]["_id"], batch[-1]["_id"]
            result = orders.update_many({"_id": {"$gte": low, "$lte": high}, **OLD}, to_v2)
            total += result.modified_count
            last = high
            log("batch %s-%s: %d" % (low, high, result.modified_count))
            sleep(pause)
        return total
    return migrate_in_batches


def make_batch_bulk(to_v2):
    """The reference loop, written with bulk_write of one UpdateMany and a helper per batch."""
    from pymongo import UpdateMany

    def one_batch(orders, batch_size):
        ids = [d["_id"] for d in orders.find(OLD, {"_id": 1}).limit(batch_size)]
        if not ids:
            return None
        return orders.bulk_write([UpdateMany({"_id": {"$in": ids}, **OLD}, to_v2)]).modified_count

    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved = 0
        while (changed := one_batch(orders, batch_size)) is not None:
            moved += changed
            log(f"{changed} orders migrated ({moved} so far)")
            sleep(pause)
        return moved
    return migrate_in_batches


def _walk_no_version_filter(to_v2):
    """Wrong (only version 1): walks _id ranges and rewrites every order, version 2 included."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved, last = 0, None
        while True:
            query = {} if last is None else {"_id": {"$gt": last}}
            ids = [d["_id"] for d in orders.find(query, {"_id": 1}).sort("_id", 1).limit(batch_size)]
            if not ids:
                return moved
            moved += orders.update_many({"_id": {"$in": ids}}, to_v2).modified_count
            last = ids[-1]
            log("batch")
            sleep(pause)
    return migrate_in_batches


def make_batch_unguarded_update(to_v2):
    """Wrong (only version 1): selects version 1 ids, then updates them by _id alone."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved = 0
        while ids := [d["_id"] for d in orders.find(OLD, {"_id": 1}).sort("_id", 1).limit(batch_size)]:
            moved += orders.update_many({"_id": {"$in": ids}}, to_v2).modified_count
            log(f"{len(ids)} selected")
            sleep(pause)
        return moved
    return migrate_in_batches


def make_batch_off_by_one(to_v2):
    """Wrong (batch size): batches of batch_size + 1."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved = 0
        while ids := [d["_id"] for d in orders.find(OLD, {"_id": 1}).limit(batch_size + 1)]:
            moved += orders.update_many({"_id": {"$in": ids}, **OLD}, to_v2).modified_count
            log(f"{moved}")
            sleep(pause)
        return moved
    return migrate_in_batches


def make_batch_all_at_once(to_v2):
    """Wrong (batch size): one update_many for everything that is left, repeated until nothing is."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved = 0
        while changed := orders.update_many(OLD, to_v2).modified_count:
            moved += changed
            log(f"migrated {changed}")
            sleep(pause)
        return moved
    return migrate_in_batches


def make_batch_logs_per_order(to_v2):
    """Wrong (log): one log line per order instead of one per batch."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved = 0
        while ids := [d["_id"] for d in orders.find(OLD, {"_id": 1}).limit(batch_size)]:
            moved += orders.update_many({"_id": {"$in": ids}, **OLD}, to_v2).modified_count
            for order_id in ids:
                log(f"migrated {order_id}")
            sleep(pause)
        return moved
    return migrate_in_batches


def make_batch_fixed_pause(to_v2):
    """Wrong (pause): sleeps a fixed 0.05 s whatever pause says."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved = 0
        while ids := [d["_id"] for d in orders.find(OLD, {"_id": 1}).limit(batch_size)]:
            moved += orders.update_many({"_id": {"$in": ids}, **OLD}, to_v2).modified_count
            log(f"{moved}")
            sleep(0.05)
        return moved
    return migrate_in_batches


def _walk_counts_selected(to_v2):
    """Wrong (returns): an _id-range walk that reports how many orders it looked at, not how many moved."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        seen, last = 0, None
        while True:
            query = {} if last is None else {"_id": {"$gt": last}}
            ids = [d["_id"] for d in orders.find(query, {"_id": 1}).sort("_id", 1).limit(batch_size)]
            if not ids:
                return seen
            orders.update_many({"_id": {"$in": ids}, **OLD}, to_v2)
            seen += len(ids)
            last = ids[-1]
            log(f"{seen}")
            sleep(pause)
    return migrate_in_batches


def make_batch_counts_ids(to_v2):
    """Wrong (returns): adds how many ids each batch selected, not how many the update changed (review 29)."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved = 0
        while ids := [d["_id"] for d in orders.find(OLD, {"_id": 1}).sort("_id", 1).limit(batch_size)]:
            orders.update_many({"_id": {"$in": ids}, **OLD}, to_v2)
            moved += len(ids)
            log(f"{moved} so far")
            sleep(pause)
        return moved
    return migrate_in_batches


def make_batch_unbounded_sweep(to_v2):
    """Wrong (batch size): walks by _id in batches, then sweeps what is left in one update_many (review 29)."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved, last = 0, None
        while ids := [d["_id"] for d in orders.find({**OLD, **({} if last is None else {"_id": {"$gt": last}})},
                                                    {"_id": 1}).sort("_id", 1).limit(batch_size)]:
            moved += orders.update_many({"_id": {"$in": ids}, **OLD}, to_v2).modified_count
            last = ids[-1]
            log(f"up to {last}")
            sleep(pause)
        swept = orders.update_many(OLD, to_v2).modified_count
        log(f"final sweep: {swept}")
        return moved + swept
    return migrate_in_batches


def make_batch_swallows(to_v2):
    """Wrong (resumable): catches the interruption and returns as if it had finished."""
    inner = make_batch_range_bounds(to_v2)

    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        try:
            return inner(orders, batch_size, pause, sleep, log)
        except Exception:
            return 0
    return migrate_in_batches


def make_batch_snapshot(to_v2):
    """Wrong (migrates): a snapshot of the version 1 _ids at the start misses orders written meanwhile."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        ids = [d["_id"] for d in orders.find(OLD, {"_id": 1})]
        moved = 0
        for start in range(0, len(ids), batch_size):
            moved += orders.update_many({"_id": {"$in": ids[start:start + batch_size]}, **OLD}, to_v2).modified_count
            log("batch")
            sleep(pause)
        return moved
    return migrate_in_batches


def _walk_bulk_update_ones(to_v2):
    """Right: an _id walk, each batch one bulk_write of an UpdateOne per order (unordered)."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        total, last = 0, None
        while True:
            query = dict(OLD)
            if last is not None:
                query["_id"] = {"$gt": last}
            ids = [d["_id"] for d in orders.find(query, {"_id": 1}).sort("_id", 1).limit(batch_size)]
            if not ids:
                break
            result = orders.bulk_write([UpdateOne({"_id": i, **OLD}, to_v2) for i in ids], ordered=False)
            total += result.modified_count
            last = ids[-1]
            log(f"{len(ids)} selected, {result.modified_count} migrated")
            sleep(pause)
        return total
    return migrate_in_batches


def make_batch_update_one_each(to_v2):
    """Right: each batch selected again by the version filter, then one update_one per order of it."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        migrated = 0
        while True:
            batch = list(orders.find(OLD, {"_id": 1}).sort("_id", 1).limit(batch_size))
            if not batch:
                return migrated
            n = 0
            for doc in batch:
                n += orders.update_one({"_id": doc["_id"], **OLD}, to_v2).modified_count
            migrated += n
            log(f"batch of {len(batch)}: {n} migrated")
            sleep(pause)
    return migrate_in_batches


def make_batch_pause_before_and_summary(to_v2):
    """Right: sleeps only between two batches (not after the last), and logs a summary line at the end."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved, first = 0, True
        while True:
            ids = orders.distinct("_id", OLD)[:batch_size]
            if not ids:
                break
            if not first:
                sleep(pause)
            first = False
            changed = orders.update_many({"_id": {"$in": ids}, **OLD}, to_v2).modified_count
            moved += changed
            log(f"migrated {changed}")
        log(f"done: {moved} orders migrated")
        return moved
    return migrate_in_batches


def _walk_carries_on(to_v2):
    """Wrong (resumable): catches what sleep raises and goes on with the next batch."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved, last = 0, None
        while True:
            query = {} if last is None else {"_id": {"$gt": last}}
            ids = [d["_id"] for d in orders.find({**query, **OLD}, {"_id": 1}).sort("_id", 1).limit(batch_size)]
            if not ids:
                return moved
            moved += orders.update_many({"_id": {"$in": ids}, **OLD}, to_v2).modified_count
            last = ids[-1]
            log(f"up to _id {last}: {moved}")
            try:
                sleep(pause)
            except Exception:  # a deploy is no reason to stop half-way, thinks the learner
                pass
    return migrate_in_batches


# 05.5 ----------------------------------------------------------------------------------------
def disagreements_aggregate(orders):
    """$expr in an aggregation: first of phones against phone, both defaulting to null."""
    pipeline = [
        {"$match": {"customer.phones": {"$exists": True}}},
        {"$match": {"$expr": {"$ne": [{"$ifNull": ["$customer.phone", None]},
                                      {"$ifNull": [{"$arrayElemAt": ["$customer.phones", 0]}, None]}]}}},
        {"$sort": {"_id": 1}},
        {"$project": {"_id": 1}},
    ]
    return [d["_id"] for d in orders.aggregate(pipeline)]


def disagreements_python(orders):
    """Python comparison with a helper, sorted in Python."""
    def first(phones):
        return phones[0] if phones else None
    docs = orders.find({"customer.phones": {"$exists": True}}, ["customer.phone", "customer.phones"])
    return sorted(d["_id"] for d in docs if d["customer"].get("phone") != first(d["customer"]["phones"]))


def disagreements_sorted_cursor(orders):
    """A list-of-pairs sort and a list comprehension."""
    cursor = orders.find({"customer.phones": {"$exists": True}}).sort([("_id", 1)])
    return [d["_id"] for d in cursor
            if ([d["customer"]["phone"]] if "phone" in d["customer"] else []) != d["customer"]["phones"][:1]]


def disagreements_anywhere(orders):
    """Wrong (first): accepts the phone anywhere in the list."""
    found = []
    for d in orders.find({"customer.phones": {"$exists": True}}).sort("_id", 1):
        phones = d["customer"]["phones"] or [None]
        if d["customer"].get("phone") not in phones:
            found.append(d["_id"])
    return found


def disagreements_needs_both(orders):
    """Wrong (no phone): only looks at orders that have both fields."""
    query = {"customer.phone": {"$exists": True}, "customer.phones": {"$exists": True}}
    return [d["_id"] for d in orders.find(query).sort("_id", 1)
            if [d["customer"]["phone"]] != d["customer"]["phones"][:1]]


def disagreements_includes_unmigrated(orders):
    """Wrong (unmigrated): lists orders without customer.phones too."""
    return sorted(set(disagreements_python(orders))
                  | {d["_id"] for d in orders.find({"customer.phones": {"$exists": False}}, {"_id": 1})})


def disagreements_unsorted(orders):
    """Wrong (order): in the collection's natural order."""
    found = set(disagreements_python(orders))
    return [d["_id"] for d in orders.find({"customer.phones": {"$exists": True}}) if d["_id"] in found]


def disagreements_documents(orders):
    """Wrong (form): returns {"_id": ...} documents instead of the _ids."""
    return [{"_id": i} for i in disagreements_python(orders)]


def disagreements_repairs(orders):
    """Wrong (read only): repairs every disagreement it finds (the old field wins)."""
    found = disagreements_python(orders)
    for d in orders.find({"_id": {"$in": found}}):
        phone = d["customer"].get("phone")
        orders.update_one({"_id": d["_id"]}, {"$set": {"customer.phones": [] if phone is None else [phone]}})
    return found


def disagreements_report_collection(orders):
    """Wrong (read only): writes its report to a collection with $merge."""
    pipeline = [{"$match": {"customer.phones": {"$exists": True}}}, {"$project": {"customer": 1}},
                {"$merge": {"into": "reconcile_report"}}]
    list(orders.aggregate(pipeline))
    report = orders.database["reconcile_report"]
    return disagreements_python(report)


def disagreements_first_operator(orders):
    """Right: $expr comparing customer.phone with {$first: ...} of the list (a missing field on both sides agrees)."""
    pipeline = [
        {"$match": {"customer.phones": {"$exists": True}}},
        {"$match": {"$expr": {"$ne": ["$customer.phone", {"$first": "$customer.phones"}]}}},
        {"$sort": {"_id": 1}},
        {"$project": {"_id": 1}},
    ]
    return [d["_id"] for d in orders.aggregate(pipeline)]


def disagreements_type_missing(orders):
    """Right: [phone] (or [] when $type says missing) against phones[:1], computed with $addFields."""
    pipeline = [
        {"$match": {"customer.phones": {"$exists": True}}},
        {"$addFields": {
            "old": {"$cond": [{"$eq": [{"$type": "$customer.phone"}, "missing"]}, [], ["$customer.phone"]]},
            "first": {"$slice": ["$customer.phones", 1]},
        }},
        {"$match": {"$expr": {"$ne": ["$old", "$first"]}}},
        {"$sort": {"_id": 1}},
    ]
    return [d["_id"] for d in orders.aggregate(pipeline)]


# 05.6 ----------------------------------------------------------------------------------------
VALIDATOR_RANGE = {"$jsonSchema": {
    "bsonType": "object",
    "required": ["schema_version", "customer"],
    "properties": {
        "schema_version": {"bsonType": ["int", "long"], "minimum": 2, "maximum": 2},
        "customer": {"bsonType": "object", "required": ["phones"], "properties": {
            "phones": {"bsonType": "array", "items": {"bsonType": "string"}}}},
        "views": {"bsonType": ["int", "long"]},
    },
}}
VALIDATOR_WITH_QUERY = {"$and": [
    {"schema_version": 2},
    {"$jsonSchema": {"required": ["customer"], "properties": {
        "customer": {"required": ["phones"], "properties": {"phones": {"bsonType": "array"}}}}}},
]}
VALIDATOR_NUMBER_ENUM = {"$jsonSchema": {
    "required": ["customer", "schema_version"],
    "properties": {
        "schema_version": {"bsonType": "number", "enum": [2]},
        "customer": {"required": ["phones"], "properties": {"phones": {"bsonType": "array"}}},
    },
}}
VALIDATOR_INT_VIEWS = {"$jsonSchema": {**VALIDATOR_RANGE["$jsonSchema"], "properties": {
    **VALIDATOR_RANGE["$jsonSchema"]["properties"], "views": {"bsonType": "int"}}}}
VALIDATOR_NONEMPTY = {"$jsonSchema": {**VALIDATOR_RANGE["$jsonSchema"], "properties": {
    **VALIDATOR_RANGE["$jsonSchema"]["properties"],
    "customer": {"bsonType": "object", "required": ["phones"],
                 "properties": {"phones": {"bsonType": "array", "minItems": 1}}}}}}
VALIDATOR_NO_VERSION = {"$jsonSchema": {"bsonType": "object", "required": ["customer"], "properties": {
    "customer": {"bsonType": "object", "required": ["phones"], "properties": {"phones": {"bsonType": "array"}}}}}}
#: Wrong (refuses_v1, review 38): schema_version at least 2, so a version 3 order passes
VALIDATOR_VERSION_AT_LEAST_2 = {"$jsonSchema": {**VALIDATOR_RANGE["$jsonSchema"], "properties": {
    **VALIDATOR_RANGE["$jsonSchema"]["properties"], "schema_version": {"bsonType": ["int", "long"], "minimum": 2}}}}
#: Wrong (refuses_v1, review 38): schema_version required but any int, so schema_version 1 passes
VALIDATOR_VERSION_ANY_INT = {"$jsonSchema": {**VALIDATOR_RANGE["$jsonSchema"], "properties": {
    **VALIDATOR_RANGE["$jsonSchema"]["properties"], "schema_version": {"bsonType": "int"}}}}
VALIDATOR_VERSION_ONLY = {"$jsonSchema": {"required": ["schema_version"], "properties": {
    "schema_version": {"enum": [2]}}}}
STAGES = [("moderate", "warn"), ("moderate", "error"), ("strict", "error")]


def _then_sweep(walk, sweep=None):
    """A walk by _id, then the same walk (or ``sweep``) once more from the start: the final sweep for orders
    written behind it."""
    def make(to_v2):
        job, again = walk(to_v2), (sweep or walk)(to_v2)

        def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
            moved = job(orders, batch_size, pause, sleep, log)
            return moved + again(orders, batch_size, pause, sleep, log)
        return migrate_in_batches
    make.__doc__ = walk.__doc__
    return make


make_batch_by_id_ranges = _then_sweep(_walk_by_id_ranges)
make_batch_range_bounds = _then_sweep(_walk_range_bounds)
make_batch_bulk_update_ones = _then_sweep(_walk_bulk_update_ones)
make_batch_no_version_filter = _then_sweep(_walk_no_version_filter, sweep=_walk_range_bounds)
make_batch_counts_selected = _then_sweep(_walk_counts_selected)
make_batch_carries_on = _then_sweep(_walk_carries_on)
make_batch_walk_no_sweep = _walk_range_bounds  #: Wrong (migrates): misses an order written behind the walk


def make_batch_walks_until_a_pass_moves_nothing(to_v2):
    """Written from the statement: whole walks by _id, repeated until a walk from the start migrates nothing."""
    def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        total = 0
        while True:
            this_pass, last = 0, None
            while True:
                after = {"_id": {"$gt": last}} if last is not None else {}
                ids = [d["_id"] for d in orders.find({**after, **OLD}, {"_id": 1}).sort("_id", 1).limit(batch_size)]
                if not ids:
                    break
                this_pass += orders.update_many({"_id": {"$in": ids}, **OLD}, to_v2).modified_count
                last = ids[-1]
                log(f"pass up to _id {last}: {this_pass} migrated")
                sleep(pause)
            total += this_pass
            if this_pass == 0:
                return total
    return migrate_in_batches
