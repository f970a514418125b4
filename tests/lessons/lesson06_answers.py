"""Answers to lab 06 written from the notebook's statements: right ones in other idioms, and wrong ones
making the mistakes the lesson warns about (each breaking one requirement)."""

from __future__ import annotations

from bson.int64 import Int64

from course import ____

INT32_MAX = 2 ** 31 - 1


# ---- 06.1: drop the redundant index -------------------------------------------------------------------
def _key_list(info):
    return [tuple(pair) for pair in info["key"]]


def _sets_apart(info):
    """What a prefix index does that a longer one cannot: a rule, an expiry, or only some documents."""
    return bool(info.get("unique") or info.get("expireAfterSeconds") is not None or info.get("sparse")
                or info.get("partialFilterExpression"))


def drop_redundant_sets(db):
    """Right: a prefix test with tuples, names collected per collection; options compared as the audit does."""
    for name in db.list_collection_names():
        indexes = {index: (_key_list(info), info) for index, info in db[name].index_information().items()}
        doomed = {index for index, (keys, info) in indexes.items()
                  if index != "_id_" and not _sets_apart(info)
                  and any(len(other) > len(keys) and tuple(other[:len(keys)]) == tuple(keys)
                          and not (other_info.get("sparse") or other_info.get("partialFilterExpression"))
                          and other_info.get("collation") == info.get("collation")
                          for other_name, (other, other_info) in indexes.items() if other_name != index)}
        for index in sorted(doomed):
            db[name].drop_index(index)


def _drop_plain_prefixes(db, names, is_prefix):
    """Drop in each collection of ``names`` the plain indexes ``is_prefix(index, info, others)`` judges redundant."""
    for name in names:
        infos = db[name].index_information()
        doomed = [index for index, info in infos.items()
                  if index != "_id_" and not _sets_apart(info) and is_prefix(index, info, infos)]
        for index in doomed:
            db[name].drop_index(index)


def _prefix_by_keys(index, info, infos):
    keys = [tuple(k) for k in info["key"]]
    return any(len(o["key"]) > len(keys) and [tuple(k) for k in o["key"]][:len(keys)] == keys
               and not (o.get("sparse") or o.get("partialFilterExpression")) and o.get("collation") == info.get("collation")
               for other, o in infos.items() if other != index)


def drop_redundant_orders_only(db):
    """Wrong (dropped): the audit's rule, applied to db.orders only (the redundant index in products stays)."""
    _drop_plain_prefixes(db, ["orders"], _prefix_by_keys)


def drop_redundant_by_name(db):
    """Wrong (dropped): an index is a prefix when another index's name starts with its name and "_": an index
    with a name of its own is never found."""
    _drop_plain_prefixes(db, db.list_collection_names(), lambda index, info, infos: any(
        other != index and other.startswith(index + "_") and not (o.get("sparse") or o.get("partialFilterExpression"))
        and o.get("collation") == info.get("collation") for other, o in infos.items()))


def drop_redundant_sorted(db):
    """Right: indexes sorted by length, each compared with the longer plain ones of its collation."""
    for name in sorted(db.list_collection_names()):
        collection = db[name]
        infos = sorted(collection.index_information().items(), key=lambda item: len(item[1]["key"]))
        for position, (index, info) in enumerate(infos):
            if index == "_id_" or _sets_apart(info):
                continue
            keys = [list(k) for k in info["key"]]
            if any([list(k) for k in other["key"]][:len(keys)] == keys
                   for _, other in infos[position + 1:]
                   if len(other["key"]) > len(keys) and not _sets_apart({**other, "unique": False,
                                                                          "expireAfterSeconds": None})
                   and other.get("collation") == info.get("collation")):
                collection.drop_index(index)


def drop_redundant_by_keys(db):
    """Right: the audit's own rule, through its IndexInfo (course.audit.indexes) on a hand-made snapshot."""
    from course.audit.indexes import indexes_of
    from course.audit.redundant_index import covering
    from course.audit.snapshot import CollectionSnapshot

    for name in db.list_collection_names():
        parsed = indexes_of(CollectionSnapshot(name, 0, [], "all", db[name].index_information()))
        for index, info in parsed.items():
            if any(covering(info, other) and len(other.keys) > len(info.keys) for other in parsed.values()):
                db[name].drop_index(index)


def _drop_prefixes(db, exempt, fits=lambda short, long: True):
    """Drop each index (not _id_, not ``exempt``) that is a prefix of a longer one that ``fits`` it."""
    for name in db.list_collection_names():
        info = db[name].index_information()
        for index, spec in info.items():
            keys = list(spec["key"])
            if index != "_id_" and not exempt(spec) and any(
                    len(o["key"]) > len(keys) and list(o["key"])[:len(keys)] == keys and fits(spec, o)
                    for other, o in info.items() if other != index):
                db[name].drop_index(index)


def drop_redundant_unique_only(db):
    """Wrong (kept): the old rule, only unique prefixes kept: the TTL, sparse, partial and collation ones go."""
    _drop_prefixes(db, lambda spec: spec.get("unique"))


def drop_redundant_short_options_only(db):
    """Wrong (kept): looks at the prefix's options only: a plain prefix of a partial index is dropped."""
    _drop_prefixes(db, _sets_apart, lambda short, long: long.get("collation") == short.get("collation"))


def drop_redundant_lists_only(db):
    """Wrong (dropped): finds the redundant indexes and prints them, never drops them."""
    for name in db.list_collection_names():
        info = db[name].index_information()
        for index, i in info.items():
            keys = list(i["key"])
            for other, j in info.items():
                if other != index and list(j["key"])[:len(keys)] == keys and len(j["key"]) > len(keys):
                    print("redundant:", name, index)


def drop_redundant_the_longer(db):
    """Wrong (kept): the comparison the wrong way round: drops the longer index."""
    for name in db.list_collection_names():
        info = db[name].index_information()
        doomed = set()
        for index, i in info.items():
            keys = list(i["key"])
            for other, j in info.items():
                if other != index and list(j["key"])[:len(keys)] == keys and len(j["key"]) > len(keys):
                    doomed.add(other)
        for index in doomed:
            db[name].drop_index(index)


def drop_every_index(db):
    """Wrong (kept): drop_indexes() everywhere: nothing is redundant any more, nothing is indexed either."""
    for name in db.list_collection_names():
        db[name].drop_indexes()


# ---- 06.2: the counter that turned long ---------------------------------------------------------------
WIDEN_PIPELINE = [{"$set": {"views": {"$toLong": "$views"}}}]


def widen_pipeline(db):
    """Right where update pipelines exist: one update_many with $toLong."""
    db.products.update_many({}, WIDEN_PIPELINE)


def _guarded(db, value_of, query=None, replace=False):
    """Each product's counter rewritten by a write that matches only the value read; retried when it moved."""
    for product in db.products.find(query or {}, {"views": 1}):
        views = product["views"]
        while True:
            guard = {"_id": product["_id"], "views": views}
            if replace:
                result = db.products.replace_one(guard, {"views": value_of(views)})
            else:
                result = db.products.update_one(guard, {"$set": {"views": value_of(views)}})
            if result.matched_count:
                break
            views = db.products.find_one({"_id": product["_id"]}, {"views": 1})["views"]


def widen_compare_and_set(db):
    """Right (on every backend): update_one guarded by the value read, read again and retried when it moved."""
    _guarded(db, Int64)


def widen_bulk_guarded(db):
    """Right: a bulk_write of UpdateOne operations, each guarded by the value read; the missed ones retried."""
    from pymongo import UpdateOne

    pending = list(db.products.find({}, {"views": 1}))
    while pending:
        db.products.bulk_write([UpdateOne({"_id": p["_id"], "views": p["views"]},
                                          {"$set": {"views": Int64(p["views"])}}) for p in pending])
        again = db.products.find({"_id": {"$in": [p["_id"] for p in pending]}}, {"views": 1})
        pending = [p for p in again if not isinstance(p["views"], Int64)]


def widen_bulk(db):
    """Wrong (live): a bulk_write of UpdateOne operations setting the values read: a view counted between is lost."""
    from pymongo import UpdateOne

    operations = [UpdateOne({"_id": p["_id"]}, {"$set": {"views": Int64(p["views"])}})
                  for p in db.products.find({}, {"views": 1})]
    if operations:
        db.products.bulk_write(operations)


def widen_replace(db):
    """Wrong (live): replace_one of each whole product as read, views widened: a view counted between is lost."""
    for product in list(db.products.find()):
        product["views"] = Int64(int(product["views"]))
        db.products.replace_one({"_id": product["_id"]}, product)


def widen_guarded_no_retry(db):
    """Wrong (live): update_one guarded by the value read, never retried: a counter that moved stays an int."""
    for product in db.products.find({}, {"views": 1}):
        db.products.update_one({"_id": product["_id"], "views": product["views"]},
                               {"$set": {"views": Int64(product["views"])}})


def widen_loop_unguarded(db):
    """Wrong (live): the lesson's old loop, update_one per product setting Int64 of the value read."""
    for product in db.products.find({}, {"views": 1}):
        db.products.update_one({"_id": product["_id"]}, {"$set": {"views": Int64(product["views"])}})


def widen_to_int(db):
    """Wrong (long): 'normalises' every counter to a Python int, which stays int32 when it fits."""
    _guarded(db, int)


def widen_to_double(db):
    """Wrong (long): one type, but a double, not a long."""
    _guarded(db, float)


def widen_capping(db):
    """Wrong (value): longs everywhere, but the overflowed counter capped at the int32 maximum."""
    _guarded(db, lambda views: Int64(min(int(views), INT32_MAX)))


# ---- 06.3: add the discriminator ----------------------------------------------------------------------
def method_loop(db):
    """Right: one update_one per payment, the method decided in Python."""
    for payment in db.payments.find({}):
        if "card_last4" in payment:
            method = "card"
        elif "iban" in payment:
            method = "bank"
        elif "voucher_code" in payment:
            method = "voucher"
        else:
            continue
        db.payments.update_one({"_id": payment["_id"]}, {"$set": {"method": method}})


def method_pipeline(db):
    """Right where update pipelines exist: one update_many with $switch."""
    db.payments.update_many({}, [{"$set": {"method": {"$switch": {"branches": [
        {"case": {"$ne": [{"$type": "$card_last4"}, "missing"]}, "then": "card"},
        {"case": {"$ne": [{"$type": "$iban"}, "missing"]}, "then": "bank"},
        {"case": {"$ne": [{"$type": "$voucher_code"}, "missing"]}, "then": "voucher"}],
        "default": "$$REMOVE"}}}}])


def method_bulk(db):
    """Right: a bulk_write of three UpdateMany operations."""
    from pymongo import UpdateMany

    db.payments.bulk_write([UpdateMany({"card_last4": {"$exists": True}}, {"$set": {"method": "card"}}),
                            UpdateMany({"iban": {"$exists": True}}, {"$set": {"method": "bank"}}),
                            UpdateMany({"voucher_code": {"$exists": True}}, {"$set": {"method": "voucher"}})])


def method_by_absence(db):
    """Wrong (method): 'no iban and no voucher code' taken as card, 'no card' as bank: vouchers become banks."""
    db.payments.update_many({"card_last4": {"$exists": True}}, {"$set": {"method": "card"}})
    db.payments.update_many({"card_last4": {"$exists": False}}, {"$set": {"method": "bank"}})


def method_capitals(db):
    """Wrong (method): the right split, but other names ("CARD", "BANK_TRANSFER", "VOUCHER")."""
    for method, marker in (("CARD", "card_last4"), ("BANK_TRANSFER", "iban"), ("VOUCHER", "voucher_code")):
        db.payments.update_many({marker: {"$exists": True}}, {"$set": {"method": method}})


def method_rebuilt(db):
    """Wrong (unchanged): each payment rewritten with the common fields and its method only."""
    common = ("_id", "order_id", "amount_pence", "paid_at", "currency")
    for payment in list(db.payments.find()):
        method = "card" if "card_last4" in payment else "bank" if "iban" in payment else "voucher"
        db.payments.replace_one({"_id": payment["_id"]}, {**{k: payment[k] for k in common}, "method": method})


def method_projected_copy(db):
    """Wrong (unchanged): replace_one of a copy read with a projection of the marker fields: order_id and the
    rest are lost (review 29: only 'unchanged' breaks, not 'method')."""
    for payment in list(db.payments.find({}, {"card_last4": 1, "iban": 1, "voucher_code": 1})):
        method = "card" if "card_last4" in payment else "bank" if "iban" in payment else "voucher"
        db.payments.replace_one({"_id": payment["_id"]}, {**payment, "method": method})


# ---- 06.4: merge the tenants ------------------------------------------------------------------------
def merge_one_by_one(db):
    """Right: insert_one per cart, upserted by _id so a retry cannot duplicate, then drop."""
    for name in list(db.list_collection_names()):
        if not name.startswith("carts_"):
            continue
        tenant = name.split("_", 1)[1]
        for cart in db[name].find():
            cart["tenant"] = tenant
            db.carts.replace_one({"_id": cart["_id"]}, cart, upsert=True)
        db.drop_collection(name)
    db.carts.create_index(list({"tenant": 1, "user_id": 1}.items()))


def merge_aggregate(db):
    """Right: an aggregation adds the tenant field; its result goes into carts under an index name of its own."""
    from pymongo import ASCENDING

    for name in db.list_collection_names():
        if name.startswith("carts_"):
            tenant = name.removeprefix("carts_")
            carts = list(db[name].aggregate([{"$addFields": {"tenant": tenant}}]))
            if carts:
                db["carts"].insert_many(carts)
            db[name].drop()
    db["carts"].create_index([("tenant", ASCENDING), ("user_id", ASCENDING)], name="tenant_user")


def merge_bulk(db):
    """Right: one insert_many of every tenant's carts, then the drops."""
    from pymongo import IndexModel

    names = [n for n in db.list_collection_names() if n.startswith("carts_")]
    carts = [dict(cart, tenant=name[6:]) for name in names for cart in db[name].find()]
    if carts:
        db.carts.insert_many(carts, ordered=True)
    for name in names:
        db[name].drop()
    db.carts.create_indexes([IndexModel([("tenant", 1), ("user_id", 1)])])


def merge_empties_old(db):
    """Wrong (dropped): copies every cart, then empties the tenants' collections instead of dropping them."""
    _merge(db, lambda name: name[len("carts_"):], drop=False)
    for name in db.list_collection_names():
        if name.startswith("carts_"):
            db[name].delete_many({})


def _merge(db, tenant_of, drop=True, index=True, drop_first=False):
    if drop_first:
        db.carts.drop()
    for name in db.list_collection_names():
        if name.startswith("carts_"):
            carts = [{**cart, "tenant": tenant_of(name)} for cart in db[name].find()]
            if carts:
                db.carts.insert_many(carts)
            if drop:
                db[name].drop()
    if index:
        db.carts.create_index([("tenant", 1), ("user_id", 1)])


def merge_full_name(db):
    """Wrong (merged): the tenant holds the whole collection name, carts_acme."""
    _merge(db, lambda name: name)


def merge_keeps_old(db):
    """Wrong (dropped): copies every cart but leaves the tenants' collections in place."""
    _merge(db, lambda name: name[len("carts_"):], drop=False)


def merge_no_index(db):
    """Wrong (index): merged and dropped, but no index for the cart read."""
    _merge(db, lambda name: name[len("carts_"):], index=False)


def merge_user_index(db):
    """Wrong (index): an index on user_id alone: the read filters on tenant first."""
    _merge(db, lambda name: name[len("carts_"):], index=False)
    db.carts.create_index("user_id")


def merge_drops_target_first(db):
    """Wrong (twice): starts by dropping db.carts 'to start clean': a second run empties it."""
    _merge(db, lambda name: name[len("carts_"):], drop_first=True)


# ---- 06.5: refresh the copies --------------------------------------------------------------------------
def refresh_per_order(db):
    """Right: one update_one per order, looking up its customer."""
    customers = {c["_id"]: c for c in db.customers.find({}, {"name": 1, "phone": 1})}
    for order in db.orders.find({}, {"customer_id": 1}):
        customer = customers[order["customer_id"]]
        db.orders.update_one({"_id": order["_id"]}, {"$set": {"customer_copy": {"name": customer["name"],
                                                                               "phone": customer["phone"]}}})


def refresh_only_stale(db):
    """Right: only the orders whose copy differs are updated, in a bulk_write."""
    from pymongo import UpdateMany

    operations = []
    for customer in db.customers.find({}, {"name": 1, "phone": 1}):
        stale = {"customer_id": customer["_id"], "$or": [{"customer_copy.name": {"$ne": customer["name"]}},
                                                         {"customer_copy.phone": {"$ne": customer["phone"]}}]}
        operations.append(UpdateMany(stale, {"$set": {"customer_copy.name": customer["name"],
                                                      "customer_copy.phone": customer["phone"]}}))
    if operations:
        db.orders.bulk_write(operations)


def refresh_lookup(db):
    """Right where pipelines exist: $lookup the customers, then set each order's copy."""
    rows = db.orders.aggregate([
        {"$lookup": {"from": "customers", "localField": "customer_id", "foreignField": "_id", "as": "c"}},
        {"$project": {"name": {"$arrayElemAt": ["$c.name", 0]}, "phone": {"$arrayElemAt": ["$c.phone", 0]}}}])
    for row in list(rows):
        db.orders.update_one({"_id": row["_id"]}, {"$set": {"customer_copy.name": row["name"],
                                                            "customer_copy.phone": row["phone"]}})


def refresh_names_only(db):
    """Wrong (fresh): refreshes the name, which the audit showed drifting, and forgets the phone."""
    for customer in db.customers.find({}, {"name": 1}):
        db.orders.update_many({"customer_id": customer["_id"]}, {"$set": {"customer_copy.name": customer["name"]}})


def refresh_whole_customer(db):
    """Wrong (only): the copy becomes the whole customer document (email, since, ... too)."""
    for customer in db.customers.find({}):
        copy = {k: v for k, v in customer.items() if k != "_id"}
        db.orders.update_many({"customer_id": customer["_id"]}, {"$set": {"customer_copy": copy}})


def refresh_marks_customers(db):
    """Wrong (only): refreshes every copy, and marks each customer with copies_synced."""
    for customer in db.customers.find({}, {"name": 1, "phone": 1}):
        db.orders.update_many({"customer_id": customer["_id"]},
                              {"$set": {"customer_copy": {"name": customer["name"], "phone": customer["phone"]}}})
        db.customers.update_one({"_id": customer["_id"]}, {"$set": {"copies_synced": True}})


def refresh_by_order_id(db):
    """Wrong (fresh): the copy taken from the customer whose _id is the order's _id."""
    for order in db.orders.find({}, {"_id": 1}):
        customer = db.customers.find_one({"_id": order["_id"]}, {"name": 1, "phone": 1})
        if customer:
            db.orders.update_one({"_id": order["_id"]}, {"$set": {"customer_copy.name": customer["name"],
                                                                  "customer_copy.phone": customer["phone"]}})


# ---- 06.6: move the order history out -------------------------------------------------------------------
def repair_orders_reversed_tail(db):
    """Right: upserts by a made-up _id, then replace_one of the whole customer guarded by the array read (a
    customer whose array moved since is left for the next run); the five newest are the last five, reversed."""
    for customer in list(db.customers.find({"orders": {"$exists": True}})):
        entries = customer.pop("orders")
        for entry in entries:
            db.order_history.replace_one({"_id": f"{customer['_id']}/{entry['order_no']}"},
                                         {"customer_id": customer["_id"], **entry}, upsert=True)
        earlier = customer.get("recent_orders", [])
        customer["recent_orders"] = sorted(earlier + entries[-5:], key=lambda e: e["placed_at"])[-5:][::-1]
        db.customers.replace_one({"_id": customer["_id"], "orders": entries}, customer)


def repair_orders_bulk(db):
    """Right: all entries upserted in one bulk_write, then one bulk_write of $pullAll updates and the unset."""
    from pymongo import ReplaceOne, UpdateMany, UpdateOne

    copies, updates = [], []
    for customer in db.customers.find({"orders": {"$exists": True}}, {"orders": 1, "recent_orders": 1}):
        orders = customer["orders"]
        copies += [ReplaceOne({"_id": {"customer": customer["_id"], "order": e["order_no"]}},
                              dict(e, customer_id=customer["_id"]), upsert=True) for e in orders]
        newest = sorted(customer.get("recent_orders", []) + orders, key=lambda e: (e["placed_at"], e["order_no"]),
                        reverse=True)[:5]
        updates.append(UpdateOne({"_id": customer["_id"]}, {"$set": {"recent_orders": newest},
                                                            "$pullAll": {"orders": orders}}))
    if copies:
        db.order_history.bulk_write(copies)
    if updates:
        db.customers.bulk_write(updates + [UpdateMany({"orders": {"$size": 0}}, {"$unset": {"orders": 1}})])


def repair_orders_upserts(db):
    """Right: history documents keyed by customer and order number, upserted; $pull of the order numbers moved."""
    for customer in db.customers.find({"orders": {"$exists": True}}, {"orders": 1, "recent_orders": 1}):
        for entry in customer["orders"]:
            db.order_history.update_one({"_id": f"{customer['_id']}-{entry['order_no']}"},
                                        {"$set": {"customer_id": customer["_id"], **entry}}, upsert=True)
        recent = sorted(customer.get("recent_orders", []) + customer["orders"], key=lambda e: e["placed_at"])[-5:]
        recent.reverse()
        moved = [entry["order_no"] for entry in customer["orders"]]
        db.customers.update_one({"_id": customer["_id"]}, {"$set": {"recent_orders": recent},
                                                          "$pull": {"orders": {"order_no": {"$in": moved}}}})
        db.customers.update_one({"_id": customer["_id"], "orders": {"$size": 0}}, {"$unset": {"orders": ""}})


def repair_orders_merge_on_fields(db):
    """Right: per customer, the array read, then its entries unwound and $merge'd on (customer_id, order_no),
    which a unique index covers; then the entries read pulled."""
    db.order_history.create_index([("customer_id", 1), ("order_no", 1)], unique=True)
    for customer in db.customers.find({"orders": {"$exists": True}}, {"orders": 1, "recent_orders": 1}):
        db.customers.aggregate([
            {"$match": {"_id": customer["_id"]}},
            {"$unwind": "$orders"},
            {"$replaceWith": {"$mergeObjects": [{"customer_id": "$_id"}, "$orders"]}},
            {"$merge": {"into": "order_history", "on": ["customer_id", "order_no"], "whenMatched": "keepExisting",
                        "whenNotMatched": "insert"}},
        ])
        recent = sorted(customer.get("recent_orders", []) + customer["orders"], key=lambda e: e["placed_at"],
                        reverse=True)[:5]
        db.customers.update_one({"_id": customer["_id"]}, {"$set": {"recent_orders": recent},
                                                          "$pullAll": {"orders": customer["orders"]}})
        db.customers.update_one({"_id": customer["_id"], "orders": []}, {"$unset": {"orders": ""}})


def repair_orders_upserts_by_fields(db):
    """Right: a unique index on (customer_id, order_no), then one upsert per entry by those fields."""
    db.order_history.create_index([("customer_id", 1), ("order_no", 1)], unique=True)
    for customer in db.customers.find({"orders": {"$exists": True}}, {"orders": 1, "recent_orders": 1}):
        for entry in customer["orders"]:
            db.order_history.update_one({"customer_id": customer["_id"], "order_no": entry["order_no"]},
                                        {"$setOnInsert": {"placed_at": entry["placed_at"],
                                                          "total_pence": entry["total_pence"]}}, upsert=True)
        newest = sorted(customer.get("recent_orders", []) + customer["orders"],
                        key=lambda e: (e["placed_at"], e["order_no"]), reverse=True)[:5]
        db.customers.update_one({"_id": customer["_id"]}, {"$set": {"recent_orders": newest},
                                                          "$pullAll": {"orders": customer["orders"]}})
        db.customers.update_one({"_id": customer["_id"], "orders": []}, {"$unset": {"orders": ""}})


def _repair(db, recent_of, unset=True, select_all=False, extra=None, merge_recent=True, keyed=True):
    """The safe repair (keyed upserts, $pullAll, the empty array unset) with one mistake switched on."""
    from pymongo import InsertOne, ReplaceOne

    query = {} if select_all else {"orders": {"$exists": True}}
    for customer in list(db.customers.find(query, {"orders": 1, "recent_orders": 1})):
        entries = customer.get("orders", [])
        if entries:
            db.order_history.bulk_write([
                ReplaceOne({"_id": f"{customer['_id']}-{e['order_no']}"}, {"customer_id": customer["_id"], **e},
                           upsert=True) if keyed else InsertOne({"customer_id": customer["_id"], **e})
                for e in entries])
        earlier = customer.get("recent_orders", []) if merge_recent else []
        update = {"$set": {"recent_orders": recent_of(earlier + entries), **(extra or {})}}
        if unset:
            update["$pullAll"] = {"orders": entries}
        db.customers.update_one({"_id": customer["_id"]}, update)
        if unset:
            db.customers.update_one({"_id": customer["_id"], "orders": []}, {"$unset": {"orders": ""}})


def _newest(entries, n=5):
    return sorted(entries, key=lambda e: e["placed_at"], reverse=True)[:n]


def repair_orders_oldest(db):
    """Wrong (recent): the first five entries: the oldest orders, not the newest."""
    _repair(db, lambda entries: sorted(entries, key=lambda e: e["placed_at"])[:5])


def repair_orders_ten(db):
    """Wrong (recent): keeps ten, not five."""
    _repair(db, lambda entries: _newest(entries, 10))


def repair_orders_recent_from_this_run(db):
    """Wrong (recent): recent_orders from the entries this run moved only, so a later run drops the older ones
    (review 29)."""
    _repair(db, _newest, merge_recent=False)


def repair_orders_keeps_array(db):
    """Wrong (removed): copies the history out but leaves the array in the customer."""
    _repair(db, _newest, unset=False, merge_recent=False)


def repair_orders_moved_flag(db):
    """Wrong (removed): also marks each customer history_moved: True (the customer changed beyond its orders)."""
    _repair(db, _newest, extra={"history_moved": True})


def repair_orders_reads_every_array(db):
    """Wrong (twice): goes over every customer and reads customer["orders"]: a second run, when the arrays are
    gone, raises KeyError."""
    from pymongo import ReplaceOne

    for customer in list(db.customers.find({}, {"orders": 1, "recent_orders": 1})):
        entries = customer["orders"]
        if entries:
            db.order_history.bulk_write([ReplaceOne({"_id": f"{customer['_id']}-{e['order_no']}"},
                                                    {"customer_id": customer["_id"], **e}, upsert=True)
                                         for e in entries])
        newest = _newest(customer.get("recent_orders", []) + entries)
        db.customers.update_one({"_id": customer["_id"]},
                                {"$set": {"recent_orders": newest}, "$pullAll": {"orders": entries}})
        db.customers.update_one({"_id": customer["_id"], "orders": []}, {"$unset": {"orders": ""}})


def repair_orders_every_customer(db):
    """Wrong (twice): goes over every customer each time: a second run empties recent_orders."""
    _repair(db, _newest, select_all=True, merge_recent=False)


def repair_orders_fresh_ids(db):
    """Wrong (crash): $pullAll of what it copied, but insert_many with fresh _ids: a rerun copies again."""
    _repair(db, _newest, keyed=False)


def repair_orders_unset_whole_array(db):
    """Wrong (live): the lesson's old solution: keyed upserts, then $unset of the whole array read earlier."""
    from pymongo import ReplaceOne

    for customer in db.customers.find({"orders": {"$exists": True}}, {"orders": 1}):
        entries = customer["orders"]
        if entries:
            db.order_history.bulk_write([
                ReplaceOne({"_id": f"{customer['_id']}-{entry['order_no']}"},
                           {"customer_id": customer["_id"], **entry}, upsert=True)
                for entry in entries])
        newest = sorted(entries, key=lambda entry: entry["placed_at"], reverse=True)[:5]
        db.customers.update_one({"_id": customer["_id"]},
                                {"$set": {"recent_orders": newest}, "$unset": {"orders": ""}})


def repair_orders_without_customer(db):
    """Wrong (moved): the history documents lack customer_id (they are the entries as they were)."""
    from pymongo import ReplaceOne

    for customer in list(db.customers.find({"orders": {"$exists": True}}, {"orders": 1, "recent_orders": 1})):
        entries = customer["orders"]
        if entries:
            db.order_history.bulk_write([ReplaceOne({"_id": f"{customer['_id']}-{e['order_no']}"}, dict(e),
                                                    upsert=True) for e in entries])
        db.customers.update_one({"_id": customer["_id"]},
                                {"$set": {"recent_orders": _newest(customer.get("recent_orders", []) + entries)},
                                 "$pullAll": {"orders": entries}})
        db.customers.update_one({"_id": customer["_id"], "orders": []}, {"$unset": {"orders": ""}})


def repair_orders_business_skipped(db):
    """Wrong (moved): moves only customers with at most 300 orders (the big ones 'later'), but empties all."""
    from pymongo import ReplaceOne

    for customer in list(db.customers.find({"orders": {"$exists": True}}, {"orders": 1, "recent_orders": 1})):
        entries = customer["orders"]
        if entries and len(entries) <= 300:
            db.order_history.bulk_write([ReplaceOne({"_id": f"{customer['_id']}-{e['order_no']}"},
                                                    {"customer_id": customer["_id"], **e}, upsert=True)
                                         for e in entries])
        db.customers.update_one({"_id": customer["_id"]},
                                {"$set": {"recent_orders": _newest(customer.get("recent_orders", []) + entries)},
                                 "$pullAll": {"orders": entries}})
        db.customers.update_one({"_id": customer["_id"], "orders": []}, {"$unset": {"orders": ""}})


PLACEHOLDER_FUNCTIONS = {
    "drop_redundant_index": lambda db: ____, "widen_counters": lambda db: ____, "add_method": lambda db: ____,
    "merge_tenants": lambda db: ____, "refresh_copies": lambda db: ____, "repair_orders": lambda db: ____,
}


# ---- added after the unseen-answer review -------------------------------------------------------------
def drop_redundant_ignoring_directions(db):
    """Wrong (kept): compares the fields only, not their directions."""
    for name in db.list_collection_names():
        info = db[name].index_information()
        fields = {i: [k[0] for k in spec["key"]] for i, spec in info.items()}
        for index, keys in fields.items():
            if index != "_id_" and not info[index].get("unique") and any(
                    len(o) > len(keys) and o[:len(keys)] == keys for other, o in fields.items() if other != index):
                db[name].drop_index(index)


def drop_redundant_any_order(db):
    """Wrong (kept): a prefix in any order (compares sets of keys)."""
    for name in db.list_collection_names():
        info = db[name].index_information()
        for index, spec in info.items():
            keys = {tuple(k) for k in spec["key"]}
            if index != "_id_" and not spec.get("unique") and any(
                    len(o["key"]) > len(keys) and keys <= {tuple(k) for k in o["key"]}
                    for other, o in info.items() if other != index):
                db[name].drop_index(index)


def drop_redundant_by_key_spec(db):
    """Not a right answer: pymongo turns the keys into the default name, so an index named otherwise is not found
    (IndexNotFound on a server, and everywhere with course.store.quirks); kept to show it."""
    for name in db.list_collection_names():
        info = db[name].index_information()
        for index, spec in info.items():
            keys = [tuple(k) for k in spec["key"]]
            if index != "_id_" and not spec.get("unique") and any(
                    len(o["key"]) > len(keys) and [tuple(k) for k in o["key"]][:len(keys)] == keys
                    for other, o in info.items() if other != index):
                db[name].drop_index(keys)


def widen_convert_pipeline(db):
    """Right: one update_many with $convert to long."""
    db.products.update_many({}, [{"$set": {"views": {"$convert": {"input": "$views", "to": "long"}}}}])


def widen_merge(db):
    """Wrong (live): an aggregation that converts the values it read and replaces the products with them."""
    db.products.aggregate([{"$set": {"views": {"$toLong": "$views"}}},
                           {"$merge": {"into": "products", "on": "_id", "whenMatched": "replace"}}])


def widen_only_overflowed(db):
    """Wrong (long): converts only the counters past the int32 maximum (already longs): a no-op."""
    _guarded(db, Int64, {"views": {"$gt": INT32_MAX}})


def widen_first_hundred(db):
    """Wrong (long): only the first 100 products."""
    first = [p["_id"] for p in db.products.find({}, {"_id": 1}).sort("_id", 1).limit(100)]
    _guarded(db, Int64, {"_id": {"$in": first}})


def widen_loses_fields(db):
    """Wrong (unchanged): replace_one with the counter alone: every other field lost."""
    _guarded(db, Int64, replace=True)


def merge_tenant_split_on_underscore(db):
    """Wrong (merged): the tenant is name.split("_")[1]: carts_umbrella_corp's carts get tenant "umbrella"."""
    for name in db.list_collection_names():
        if name.startswith("carts_"):
            tenant = name.split("_")[1]
            for cart in db[name].find():
                db.carts.replace_one({"_id": cart["_id"]}, {**cart, "tenant": tenant}, upsert=True)
            db[name].drop()
    db.carts.create_index([("tenant", 1), ("user_id", 1)])


def merge_rename_drop_target(db):
    """Wrong (merged): tags the first tenant's carts and renames its collection onto carts with dropTarget=True."""
    names = [n for n in db.list_collection_names() if n.startswith("carts_")]
    for name in names:
        db[name].update_many({}, {"$set": {"tenant": name[len("carts_"):]}})
    if names:
        db[names[0]].rename("carts", dropTarget=True)
        for name in names[1:]:
            for cart in db[name].find():
                db.carts.replace_one({"_id": cart["_id"]}, cart, upsert=True)
            db[name].drop()
    db.carts.create_index([("tenant", 1), ("user_id", 1)])


def merge_by_rename(db):
    """Wrong (merged): renames the first tenant's collection to carts, then copies the others."""
    names = sorted(n for n in db.list_collection_names() if n.startswith("carts_"))
    if names:
        first = names[0]
        tenant = first[len("carts_"):]
        db[first].update_many({}, {"$set": {"tenant": tenant}})
        db[first].rename("carts")
        for name in names[1:]:
            db.carts.insert_many([{**c, "tenant": name[len("carts_"):]} for c in db[name].find()])
            db[name].drop()
    db.carts.create_index([("tenant", 1), ("user_id", 1)])


def merge_loses_items(db):
    """Wrong (merged): copies each cart without its items."""
    for name in db.list_collection_names():
        if name.startswith("carts_"):
            carts = [{**{k: v for k, v in c.items() if k != "items"}, "tenant": name[len("carts_"):]}
                     for c in db[name].find()]
            if carts:
                db.carts.insert_many(carts)
            db[name].drop()
    db.carts.create_index([("tenant", 1), ("user_id", 1)])


def merge_fresh_ids(db):
    """Wrong (merged): copies each cart under a new _id (review 29: the message must say so)."""
    for name in db.list_collection_names():
        if name.startswith("carts_"):
            carts = [{**{k: v for k, v in c.items() if k != "_id"}, "tenant": name[len("carts_"):]}
                     for c in db[name].find()]
            if carts:
                db.carts.insert_many(carts)
            db[name].drop()
    db.carts.create_index([("tenant", 1), ("user_id", 1)])


def widen_inc_long_zero(db):
    """Right: $inc by a long 0 (an int plus a long is a long)."""
    db.products.update_many({}, {"$inc": {"views": Int64(0)}})


def widen_to_other_collection(db):
    """Wrong (long): writes the converted products to products_v2, leaves products as they were."""
    converted = [{**p, "views": Int64(p["views"])} for p in db.products.find()]
    if converted:
        db.products_v2.insert_many(converted)


def repair_orders_skips_empty(db):
    """Wrong (removed, recent): the reference repair, but a customer whose orders is empty is skipped: it keeps
    orders [] and gets no recent_orders."""
    for customer in db.customers.find({"orders": {"$exists": True}}, {"orders": 1, "recent_orders": 1}):
        entries = customer["orders"]
        if not entries:
            continue
        for entry in entries:
            db.order_history.replace_one({"_id": f"{customer['_id']}-{entry['order_no']}"},
                                         {"customer_id": customer["_id"], **entry}, upsert=True)
        recent = sorted(customer.get("recent_orders", []) + entries, key=lambda e: e["placed_at"], reverse=True)
        copied = max(entry["order_no"] for entry in entries)
        db.customers.update_one({"_id": customer["_id"]}, {"$set": {"recent_orders": recent[:5]},
                                                           "$pull": {"orders": {"order_no": {"$lte": copied}}}})
        db.customers.update_one({"_id": customer["_id"], "orders": []}, {"$unset": {"orders": ""}})
