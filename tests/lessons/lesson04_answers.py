"""Learner answers to lab 04, most written from the statements before reading the checkers.

Right answers use other valid idioms than the reference solutions; wrong answers make the mistakes
the lesson warns about, each breaking one requirement.  Functions and data only: the lists that pair
them with requirements are in tests/lessons/test_lesson04.py.
"""

from __future__ import annotations

import re

from pymongo import IndexModel, UpdateMany, UpdateOne
from pymongo.errors import DuplicateKeyError

from course.datasets.patterns import BUCKET_CAP, EXTRA_PAGE, FOLLOWER_THRESHOLD, RECENT_REVIEWS


# 04.1 subset -----------------------------------------------------------------------------------------
def _summary(review):
    return {"reviewId": review["_id"], "stars": review["stars"], "text": review["text"], "at": review["at"]}


def _push_front(db, review, summary=None, slice_=RECENT_REVIEWS, guard=True, newest_first=True):
    """Push the summary sorted by date (so a late retry of an old review sorts out of the kept part)."""
    query = {"_id": review["productId"]}
    if guard:
        query["recentReviews.reviewId"] = {"$ne": review["_id"]}
    each = {"$each": [summary or _summary(review)], "$sort": {"at": -1 if newest_first else 1}, "$slice": slice_}
    db.products.update_one(query, {"$push": {"recentReviews": each}})


def review_find_one_and_update(db, review):
    db.reviews.find_one_and_update({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
    db.products.bulk_write([UpdateOne(
        {"_id": review["productId"], "recentReviews": {"$not": {"$elemMatch": {"reviewId": review["_id"]}}}},
        {"$push": {"recentReviews": {"$each": [_summary(review)], "$sort": {"at": -1}, "$slice": RECENT_REVIEWS}}})])


def review_replace_and_sort(db, review):
    db.reviews.replace_one({"_id": review["_id"]}, review, upsert=True)
    summary = {key: review[key] for key in ("stars", "text", "at")} | {"reviewId": review["_id"]}
    db.products.update_one(
        {"_id": review["productId"], "recentReviews.reviewId": {"$ne": review["_id"]}},
        {"$push": {"recentReviews": {"$each": [summary], "$sort": {"at": -1}, "$slice": RECENT_REVIEWS}}})


def review_catch_duplicate(db, review):
    try:
        db.reviews.insert_one(dict(review))
    except DuplicateKeyError:
        pass  # a retry: the review is stored already
    _push_front(db, review)


def review_product_only(db, review):
    _push_front(db, review)


def review_summary_stored(db, review):
    db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": _summary(review)}, upsert=True)
    _push_front(db, review)


def review_uncapped(db, review):
    db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
    db.products.update_one({"_id": review["productId"], "recentReviews.reviewId": {"$ne": review["_id"]}},
                           {"$push": {"recentReviews": {"$each": [_summary(review)], "$sort": {"at": -1}}}})


def review_keeps_eleven(db, review):
    db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
    _push_front(db, review, slice_=RECENT_REVIEWS + 1)


def review_appended(db, review):
    db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
    _push_front(db, review, slice_=-RECENT_REVIEWS, newest_first=False)


def review_whole_copy(db, review):
    db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
    _push_front(db, review, summary={"reviewId": review["_id"], **review})


def review_id_key(db, review):
    db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
    summary = {"_id": review["_id"], "stars": review["stars"], "text": review["text"], "at": review["at"]}
    db.products.update_one({"_id": review["productId"], "recentReviews._id": {"$ne": review["_id"]}},
                           {"$push": {"recentReviews": {"$each": [summary], "$sort": {"at": -1}, "$slice": 10}}})


def review_unguarded(db, review):
    db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
    _push_front(db, review, guard=False)


def review_plain_insert(db, review):
    db.reviews.insert_one(dict(review))
    _push_front(db, review)


def review_front_guarded(db, review):
    """Review47 04.1 W1: $position 0 guarded by $ne; a retry of a review that left the 10 puts it back in front."""
    db.reviews.replace_one({"_id": review["_id"]}, dict(review), upsert=True)
    db.products.update_one(
        {"_id": review["productId"], "recentReviews.reviewId": {"$ne": review["_id"]}},
        {"$push": {"recentReviews": {"$each": [_summary(review)], "$position": 0, "$slice": RECENT_REVIEWS}}})


def review_front_guarded_by_date(db, review):
    """$position 0, pushed only while the review is newer than the oldest kept (or there is room)."""
    db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
    room = {f"recentReviews.{RECENT_REVIEWS - 1}": {"$exists": False}}
    newer = {f"recentReviews.{RECENT_REVIEWS - 1}.at": {"$lt": review["at"]}}
    db.products.update_one(
        {"_id": review["productId"], "recentReviews.reviewId": {"$ne": review["_id"]}, "$or": [room, newer]},
        {"$push": {"recentReviews": {"$each": [_summary(review)], "$position": 0, "$slice": RECENT_REVIEWS}}})


def review_skips_known(db, review):
    if db.reviews.find_one({"_id": review["_id"]}) is not None:
        return  # "already done": but the product may never have been updated
    db.reviews.insert_one(dict(review))
    _push_front(db, review)


# 04.2 extended reference --------------------------------------------------------------------------
def order_projection(db, order_id, customer_id, items):
    customer = db.customers.find_one({"_id": customer_id}, {"_id": 1, "name": 1, "phone": 1})
    db.orders.insert_one({"_id": order_id, "customer": customer, "items": items, "status": "PLACED"})


def order_comprehension(db, order_id, customer_id, items):
    profile = db.customers.find_one({"_id": customer_id})
    db.orders.insert_one({"_id": order_id, "items": list(items),
                          "customer": {field: profile[field] for field in ("_id", "name", "phone")}})


def order_aggregate(db, order_id, customer_id, items):
    [customer] = db.customers.aggregate([{"$match": {"_id": customer_id}},
                                         {"$project": {"name": 1, "phone": 1}}])
    db.orders.insert_one({"_id": order_id, "customer": customer, "items": items})


def index_model(db):
    db.orders.create_indexes([IndexModel([("customer._id", 1)], name="orders_by_customer")])


def index_dict(db):
    db.orders.create_index({"customer._id": 1})


def index_compound(db):
    db.orders.create_index([("customer._id", 1), ("status", 1)], name="customer_then_status")


def phone_bulk(db, customer_id, phone):
    db.customers.bulk_write([UpdateOne({"_id": customer_id}, {"$set": {"phone": phone}})])
    db.orders.bulk_write([UpdateMany({"customer._id": customer_id}, {"$set": {"customer.phone": phone}})])


def phone_find_one_and_update(db, customer_id, phone):
    db.customers.find_one_and_update({"_id": customer_id}, {"$set": {"phone": phone}})
    db.orders.update_many({"customer._id": customer_id}, {"$set": {"customer.phone": phone}})


def phone_only_changed(db, customer_id, phone):
    db.customers.update_one({"_id": customer_id}, {"$set": {"phone": phone}})
    db.orders.update_many({"customer._id": customer_id, "customer.phone": {"$ne": phone}},
                          {"$set": {"customer.phone": phone}})


def order_whole_profile(db, order_id, customer_id, items):
    db.orders.insert_one({"_id": order_id, "customer": db.customers.find_one({"_id": customer_id}), "items": items})


def order_with_email(db, order_id, customer_id, items):
    customer = db.customers.find_one({"_id": customer_id}, {"name": 1, "phone": 1, "email": 1})
    db.orders.insert_one({"_id": order_id, "customer": customer, "items": items})


def order_id_only(db, order_id, customer_id, items):
    db.orders.insert_one({"_id": order_id, "customer": {"_id": customer_id}, "items": items})


def order_top_level_id(db, order_id, customer_id, items):
    customer = db.customers.find_one({"_id": customer_id})
    db.orders.insert_one({"_id": order_id, "customerId": customer_id, "items": items,
                          "customer": {"name": customer["name"], "phone": customer["phone"]}})


def order_lines_renamed(db, order_id, customer_id, items):
    customer = db.customers.find_one({"_id": customer_id}, {"name": 1, "phone": 1})
    db.orders.insert_one({"_id": order_id, "customer": customer, "lines": items})


def phone_profile_only(db, customer_id, phone):
    db.customers.update_one({"_id": customer_id}, {"$set": {"phone": phone}})


def phone_first_order(db, customer_id, phone):
    db.customers.update_one({"_id": customer_id}, {"$set": {"phone": phone}})
    db.orders.update_one({"customer._id": customer_id}, {"$set": {"customer.phone": phone}})


def phone_by_old_number(db, customer_id, phone):
    old = db.customers.find_one({"_id": customer_id})["phone"]
    db.customers.update_one({"_id": customer_id}, {"$set": {"phone": phone}})
    db.orders.update_many({"customer.phone": old}, {"$set": {"customer.phone": phone}})


def phone_history(db, customer_id, phone):
    db.customers.update_one({"_id": customer_id}, {"$set": {"phone": phone}, "$push": {"previousPhones": phone}})
    db.orders.update_many({"customer._id": customer_id}, {"$set": {"customer.phone": phone}})


def phone_counts_changes(db, customer_id, phone):
    db.customers.update_one({"_id": customer_id}, {"$set": {"phone": phone}})
    db.orders.update_many({"customer._id": customer_id},
                          {"$set": {"customer.phone": phone}, "$inc": {"customer.phoneVersion": 1}})


def index_none(db):
    pass


def index_wrong_field(db):
    db.orders.create_index("customerId")


def index_customer_second(db):
    db.orders.create_index([("status", 1), ("customer._id", 1)])


# 04.3 computed ------------------------------------------------------------------------------------
def _truth(db):
    return {row["_id"]: {"orderCount": row["n"], "totalSpent": row["s"]} for row in db.orders.aggregate(
        [{"$group": {"_id": "$customerId", "n": {"$sum": 1}, "s": {"$sum": "$total"}}}])}


def record_bulk(db, order):
    total = 0
    for line in order["items"]:
        total += line["qty"] * line["unitPrice"]
    db.orders.insert_one(order | {"total": total})
    db.customers.bulk_write([UpdateOne({"_id": order["customerId"]},
                                       {"$inc": {"stats.orderCount": 1, "stats.totalSpent": total}})])


def record_find_one_and_update(db, order):
    stored = dict(order, total=sum(line["qty"] * line["unitPrice"] for line in order["items"]))
    db.orders.insert_one(stored)
    db.customers.find_one_and_update({"_id": order["customerId"]},
                                     {"$inc": {"stats.totalSpent": stored["total"], "stats.orderCount": 1}})


ZERO = {"orderCount": 0, "totalSpent": 0}


def _count_one(db, customer_id):
    rows = list(db.orders.aggregate([{"$match": {"customerId": customer_id}},
                                     {"$group": {"_id": None, "n": {"$sum": 1}, "s": {"$sum": "$total"}}}]))
    return {"orderCount": rows[0]["n"], "totalSpent": rows[0]["s"]} if rows else dict(ZERO)


def reconcile_find_one_and_update(db):
    """Every customer's stats read first, one $group, then find_one_and_update guarded by the whole stats."""
    seen = {c["_id"]: c.get("stats") for c in db.customers.find({}, {"stats": 1}).sort("_id", 1)}
    truth = _truth(db)
    drifted = []
    for customer_id, stats in seen.items():
        right = truth.get(customer_id, dict(ZERO))
        while stats != right:
            if db.customers.find_one_and_update({"_id": customer_id, "stats": stats}, {"$set": {"stats": right}}):
                drifted.append(customer_id)
                break
            stats = db.customers.find_one({"_id": customer_id})["stats"]
            right = _count_one(db, customer_id)
    return drifted


def reconcile_python(db):
    """Counts in Python; fixes with $inc of the difference, guarded by the values read; retries."""
    stats_of = {c["_id"]: c.get("stats", {}) for c in db.customers.find()}
    counts, spent = {}, {}
    for order in db.orders.find({}, {"customerId": 1, "total": 1}):
        counts[order["customerId"]] = counts.get(order["customerId"], 0) + 1
        spent[order["customerId"]] = spent.get(order["customerId"], 0) + order["total"]
    drifted = set()
    for customer_id, stats in stats_of.items():
        n, s = counts.get(customer_id, 0), spent.get(customer_id, 0)
        while (stats.get("orderCount"), stats.get("totalSpent")) != (n, s):
            old_n, old_s = stats.get("orderCount", 0), stats.get("totalSpent", 0)
            result = db.customers.update_one(
                {"_id": customer_id, "stats.orderCount": stats.get("orderCount"),
                 "stats.totalSpent": stats.get("totalSpent")},
                {"$inc": {"stats.orderCount": n - old_n, "stats.totalSpent": s - old_s}})
            if result.modified_count == 1:
                drifted.add(customer_id)
                break
            stats = db.customers.find_one({"_id": customer_id}).get("stats", {})
            again = _count_one(db, customer_id)
            n, s = again["orderCount"], again["totalSpent"]
    return sorted(drifted)


def reconcile_per_customer(db):
    """One customer at a time: its stats, then its orders, then a guarded update_one, in a retry loop."""
    drifted = []
    for customer_id in db.customers.distinct("_id"):
        while True:
            stats = db.customers.find_one({"_id": customer_id}, {"stats": 1}).get("stats")
            right = _count_one(db, customer_id)
            if stats == right:
                break
            if db.customers.update_one({"_id": customer_id, "stats": stats},
                                       {"$set": {"stats": right}}).matched_count:
                drifted.append(customer_id)
                break
    return sorted(drifted)


def record_no_total(db, order):
    db.orders.insert_one(dict(order))
    total = sum(i["qty"] * i["unitPrice"] for i in order["items"])
    db.customers.update_one({"_id": order["customerId"]}, {"$inc": {"stats.orderCount": 1, "stats.totalSpent": total}})


def record_float_total(db, order):
    total = sum(i["qty"] * i["unitPrice"] for i in order["items"]) * 1.0
    db.orders.insert_one({**order, "total": total})
    db.customers.update_one({"_id": order["customerId"]}, {"$inc": {"stats.orderCount": 1, "stats.totalSpent": total}})


def record_ignores_qty(db, order):
    total = sum(i["unitPrice"] for i in order["items"])
    db.orders.insert_one({**order, "total": total})
    db.customers.update_one({"_id": order["customerId"]}, {"$inc": {"stats.orderCount": 1, "stats.totalSpent": total}})


def record_count_only(db, order):
    total = sum(i["qty"] * i["unitPrice"] for i in order["items"])
    db.orders.insert_one({**order, "total": total})
    db.customers.update_one({"_id": order["customerId"]}, {"$inc": {"stats.orderCount": 1}})


def record_read_modify_write(db, order):
    total = sum(i["qty"] * i["unitPrice"] for i in order["items"])
    db.orders.insert_one({**order, "total": total})
    stats = db.customers.find_one({"_id": order["customerId"]})["stats"]
    db.customers.update_one({"_id": order["customerId"]},
                            {"$set": {"stats": {"orderCount": stats["orderCount"] + 1,
                                                "totalSpent": stats["totalSpent"] + total}}})


def reconcile_reports_only(db):
    truth = _truth(db)
    return sorted(c["_id"] for c in db.customers.find()
                  if c["stats"] != truth.get(c["_id"], {"orderCount": 0, "totalSpent": 0}))


def _guarded_fix(db, customer_id, fields):
    """Set ``fields`` of the customer's stats to its orders' count, guarded by the stats read first; retried."""
    while True:
        stats = db.customers.find_one({"_id": customer_id}).get("stats")
        right = _count_one(db, customer_id)
        if stats == right:
            return False
        if db.customers.update_one({"_id": customer_id, "stats": stats},
                                   {"$set": {f"stats.{f}": right[f] for f in fields}}).matched_count:
            return True


def reconcile_counts_only(db):
    return sorted(c for c in db.customers.distinct("_id") if _guarded_fix(db, c, ["orderCount"]))


def reconcile_skips_customers_without_orders(db):
    return sorted(c for c in db.orders.distinct("customerId") if _guarded_fix(db, c, ["orderCount", "totalSpent"]))


def reconcile_returns_set(db):
    return set(reconcile_python(db))


def reconcile_newest_first(db):
    return sorted(reconcile_python(db), reverse=True)


def reconcile_none_when_clean(db):
    return reconcile_python(db) or None


def reconcile_counted_then_set(db):
    """The lesson's first reconcile: one $group, then the stats, then a plain $set of what was counted."""
    truth = _truth(db)
    drifted = []
    for customer in db.customers.find({}, {"stats": 1}):
        right = truth.get(customer["_id"], dict(ZERO))
        if customer.get("stats") != right:
            db.customers.update_one({"_id": customer["_id"]}, {"$set": {"stats": right}})
            drifted.append(customer["_id"])
    return sorted(drifted)


def _fix_what_was_read(db, guarded):
    seen = {c["_id"]: c.get("stats") for c in db.customers.find({}, {"stats": 1})}
    truth = _truth(db)
    drifted = []
    for customer_id, stats in seen.items():
        right = truth.get(customer_id, dict(ZERO))
        if stats != right:
            db.customers.update_one({"_id": customer_id, **({"stats": stats} if guarded else {})},
                                    {"$set": {"stats": right}})
            drifted.append(customer_id)
    return sorted(drifted)


def reconcile_read_then_counted_then_set(db):
    """Reads the stats before counting (right), but writes a plain $set (no guard)."""
    return _fix_what_was_read(db, guarded=False)


def reconcile_inc_difference(db):
    """Counts first, then $inc of the difference from the stats read afterwards, unguarded."""
    truth = _truth(db)
    drifted = []
    for customer in db.customers.find({}, {"stats": 1}):
        right, stats = truth.get(customer["_id"], dict(ZERO)), customer.get("stats") or {}
        if stats != right:
            db.customers.update_one({"_id": customer["_id"]}, {"$inc": {
                "stats.orderCount": right["orderCount"] - stats.get("orderCount", 0),
                "stats.totalSpent": right["totalSpent"] - stats.get("totalSpent", 0)}})
            drifted.append(customer["_id"])
    return sorted(drifted)


def reconcile_guarded_no_retry(db):
    """Reads, counts, writes guarded by the stats read: but gives up when the guard matches nothing."""
    return _fix_what_was_read(db, guarded=True)


# 04.4 bucket ----------------------------------------------------------------------------------------
def _sums(event):
    incoming = event["qty"] if event["type"] == "IN" else 0
    return {"count": 1, "sumIn": incoming, "sumOut": event["qty"] - incoming}


def _open_bucket(tenant_id, product_id, day, cap=BUCKET_CAP):
    return {"tenantId": tenant_id, "productId": product_id, "day": day, "count": {"$lt": cap}}


def stock_find_one_and_update(db, tenant_id, product_id, day, event):
    db.stock_events.find_one_and_update(_open_bucket(tenant_id, product_id, day),
                                        {"$push": {"events": event}, "$inc": _sums(event)}, upsert=True)


def stock_bulk(db, tenant_id, product_id, day, event):
    db.stock_events.bulk_write([UpdateOne(_open_bucket(tenant_id, product_id, day),
                                          {"$push": {"events": event}, "$inc": _sums(event)}, upsert=True)])


def stock_update_one(db, tenant_id, product_id, day, event):
    sums = {"sumIn": event["qty"], "sumOut": 0} if event["type"] == "IN" else {"sumIn": 0, "sumOut": event["qty"]}
    db.stock_events.update_one({"count": {"$lt": BUCKET_CAP}, "day": day, "productId": product_id,
                                "tenantId": tenant_id},
                               {"$inc": {"count": 1, **sums}, "$push": {"events": event}}, upsert=True)


def bucket_index_dict(db):
    db.stock_events.create_index({"tenantId": 1, "productId": 1, "day": 1})


def bucket_index_model(db):
    db.stock_events.create_indexes([IndexModel([("tenantId", 1), ("productId", 1), ("day", 1), ("count", 1)],
                                               name="open_bucket")])


def bucket_index_other_order(db):
    db.stock_events.create_index([("productId", 1), ("day", -1), ("tenantId", 1)], name="bucket_lookup")


def stock_uncapped(db, tenant_id, product_id, day, event):
    db.stock_events.update_one({"tenantId": tenant_id, "productId": product_id, "day": day},
                               {"$push": {"events": event}, "$inc": _sums(event)}, upsert=True)


def stock_fifty_one(db, tenant_id, product_id, day, event):
    db.stock_events.update_one(_open_bucket(tenant_id, product_id, day, cap=BUCKET_CAP + 1),
                               {"$push": {"events": event}, "$inc": _sums(event)}, upsert=True)


def stock_no_sums(db, tenant_id, product_id, day, event):
    db.stock_events.update_one(_open_bucket(tenant_id, product_id, day),
                               {"$push": {"events": event}, "$inc": {"count": 1}}, upsert=True)


def stock_everything_in(db, tenant_id, product_id, day, event):
    db.stock_events.update_one(_open_bucket(tenant_id, product_id, day),
                               {"$push": {"events": event}, "$inc": {"count": 1, "sumIn": event["qty"], "sumOut": 0}},
                               upsert=True)


def stock_one_per_event(db, tenant_id, product_id, day, event):
    db.stock_events.insert_one({"tenantId": tenant_id, "productId": product_id, "day": day, "events": [event],
                                **_sums(event)})


def stock_ignores_tenant(db, tenant_id, product_id, day, event):
    db.stock_events.update_one({"productId": product_id, "day": day, "count": {"$lt": BUCKET_CAP}},
                               {"$push": {"events": event}, "$inc": _sums(event),
                                "$setOnInsert": {"tenantId": tenant_id}}, upsert=True)


def stock_read_then_push(db, tenant_id, product_id, day, event):
    bucket = db.stock_events.find_one(_open_bucket(tenant_id, product_id, day))
    if bucket is None:
        db.stock_events.insert_one({"tenantId": tenant_id, "productId": product_id, "day": day, "events": [event],
                                    **_sums(event)})
    else:
        db.stock_events.update_one({"_id": bucket["_id"]}, {"$push": {"events": event}, "$inc": _sums(event)})


def bucket_index_day(db):
    db.stock_events.create_index("day")


def bucket_index_without_day(db):
    db.stock_events.create_index([("tenantId", 1), ("productId", 1)])


# 04.5 outlier ---------------------------------------------------------------------------------------
def _overflow(db, product_id, user_id, page=EXTRA_PAGE):
    db.products.update_one({"_id": product_id}, {"$set": {"hasExtras": True}})
    db.product_followers_extra.update_one({"productId": product_id, "count": {"$lt": page}},
                                          {"$push": {"followers": user_id}, "$inc": {"count": 1}}, upsert=True)


def follow_find_one_and_update(db, product_id, user_id):
    before = db.products.find_one_and_update(
        {"_id": product_id, f"followers.{FOLLOWER_THRESHOLD - 1}": {"$exists": False}},
        {"$push": {"followers": user_id}})
    if before is None:
        db.products.find_one_and_update({"_id": product_id}, {"$set": {"hasExtras": True}})
        db.product_followers_extra.bulk_write([UpdateOne(
            {"productId": product_id, "count": {"$lt": EXTRA_PAGE}},
            {"$push": {"followers": user_id}, "$inc": {"count": 1}}, upsert=True)])


def follow_matched(db, product_id, user_id):
    result = db.products.update_one({"_id": product_id, "followers.49": {"$exists": False}},
                                    {"$addToSet": {"followers": user_id}})
    if not result.matched_count:
        _overflow(db, product_id, user_id)


def count_aggregate(db, product_id):
    product = db.products.find_one({"_id": product_id}, {"followers": 1, "hasExtras": 1})
    total = len(product.get("followers") or [])
    if product.get("hasExtras", False):
        rows = list(db.product_followers_extra.aggregate([{"$match": {"productId": product_id}},
                                                          {"$group": {"_id": None, "n": {"$sum": "$count"}}}]))
        total += rows[0]["n"] if rows else 0
    return total


def count_lengths(db, product_id):
    product = db.products.find_one({"_id": product_id})
    if not product.get("hasExtras"):
        return len(product.get("followers", []))
    pages = db.product_followers_extra.find({"productId": product_id})
    return len(product["followers"]) + sum(len(page["followers"]) for page in pages)


def follow_embeds_all(db, product_id, user_id):
    db.products.update_one({"_id": product_id}, {"$push": {"followers": user_id}})


def follow_newest_first(db, product_id, user_id):
    if db.products.update_one({"_id": product_id, "followers.49": {"$exists": False}},
                              {"$push": {"followers": {"$each": [user_id], "$position": 0}}}).modified_count == 0:
        _overflow(db, product_id, user_id)


def follow_forty_nine(db, product_id, user_id):
    if db.products.update_one({"_id": product_id, "followers.48": {"$exists": False}},
                              {"$push": {"followers": user_id}}).modified_count == 0:
        _overflow(db, product_id, user_id)


def follow_fifty_one(db, product_id, user_id):
    if db.products.update_one({"_id": product_id, "followers.50": {"$exists": False}},
                              {"$push": {"followers": user_id}}).modified_count == 0:
        _overflow(db, product_id, user_id)


def follow_no_flag(db, product_id, user_id):
    if db.products.update_one({"_id": product_id, "followers.49": {"$exists": False}},
                              {"$push": {"followers": user_id}}).modified_count == 0:
        db.product_followers_extra.update_one({"productId": product_id, "count": {"$lt": EXTRA_PAGE}},
                                              {"$push": {"followers": user_id}, "$inc": {"count": 1}}, upsert=True)


def follow_flags_when_full(db, product_id, user_id):
    if db.products.update_one({"_id": product_id, "followers.49": {"$exists": False}},
                              {"$push": {"followers": user_id}}).modified_count:
        if len(db.products.find_one({"_id": product_id})["followers"]) >= FOLLOWER_THRESHOLD:
            db.products.update_one({"_id": product_id}, {"$set": {"hasExtras": True}})  # "full": flag it now
        return
    _overflow(db, product_id, user_id)


def follow_unpaged(db, product_id, user_id):
    if db.products.update_one({"_id": product_id, "followers.49": {"$exists": False}},
                              {"$push": {"followers": user_id}}).modified_count == 0:
        db.products.update_one({"_id": product_id}, {"$set": {"hasExtras": True}})
        db.product_followers_extra.update_one({"productId": product_id},
                                              {"$push": {"followers": user_id}, "$inc": {"count": 1}}, upsert=True)


def follow_pages_of_101(db, product_id, user_id):
    if db.products.update_one({"_id": product_id, "followers.49": {"$exists": False}},
                              {"$push": {"followers": user_id}}).modified_count == 0:
        _overflow(db, product_id, user_id, page=EXTRA_PAGE + 1)


def follow_pages_without_count(db, product_id, user_id):
    if db.products.update_one({"_id": product_id, "followers.49": {"$exists": False}},
                              {"$push": {"followers": user_id}}).modified_count == 0:
        db.products.update_one({"_id": product_id}, {"$set": {"hasExtras": True}})
        db.product_followers_extra.update_one({"productId": product_id, "followers.99": {"$exists": False}},
                                              {"$push": {"followers": user_id}}, upsert=True)


def follow_read_then_push(db, product_id, user_id):
    product = db.products.find_one({"_id": product_id})
    if len(product.get("followers", [])) < FOLLOWER_THRESHOLD:
        db.products.update_one({"_id": product_id}, {"$push": {"followers": user_id}})
    else:
        _overflow(db, product_id, user_id)


def follow_any_products_page(db, product_id, user_id):
    """Review47 04.5 W5: the page upsert's filter lacks productId, so another product's page is reused."""
    if db.products.update_one({"_id": product_id, "followers.49": {"$exists": False}},
                              {"$push": {"followers": user_id}}).matched_count:
        return
    db.products.update_one({"_id": product_id}, {"$set": {"hasExtras": True}})
    db.product_followers_extra.update_one({"count": {"$lt": EXTRA_PAGE}},
                                          {"$push": {"followers": user_id}, "$inc": {"count": 1},
                                           "$setOnInsert": {"productId": product_id}}, upsert=True)


def follow_compare_and_set_once(db, product_id, user_id):
    """Review47 04.5 W6: a compare-and-set on the whole list that overflows when another follower lands first."""
    old = db.products.find_one({"_id": product_id}, {"followers": 1}).get("followers", [])
    if len(old) < FOLLOWER_THRESHOLD and db.products.update_one(
            {"_id": product_id, "followers": old}, {"$push": {"followers": user_id}}).matched_count:
        return
    _overflow(db, product_id, user_id)


def follow_compare_and_set_retried(db, product_id, user_id):
    """A compare-and-set on the whole list, read again and retried while there is room."""
    while True:
        old = db.products.find_one({"_id": product_id}, {"followers": 1}).get("followers", [])
        if len(old) >= FOLLOWER_THRESHOLD:
            _overflow(db, product_id, user_id)
            return
        if db.products.update_one({"_id": product_id, "followers": old},
                                  {"$push": {"followers": user_id}}).matched_count:
            return


def count_embedded_only(db, product_id):
    return len(db.products.find_one({"_id": product_id}).get("followers", []))


def count_pages(db, product_id):
    product = db.products.find_one({"_id": product_id})
    extra = db.product_followers_extra.count_documents({"productId": product_id}) if product.get("hasExtras") else 0
    return len(product.get("followers", [])) + extra


def count_always_both(db, product_id):
    product = db.products.find_one({"_id": product_id})
    pages = db.product_followers_extra.find({"productId": product_id})
    return len(product.get("followers", [])) + sum(p["count"] for p in pages)


# 04.6 polymorphic -----------------------------------------------------------------------------------
def catalog_models(items):
    items.create_indexes([
        IndexModel([("tenantId", 1), ("name", 1)], name="search"),
        IndexModel([("specs.isbn", 1)], name="isbn_books", partialFilterExpression={"kind": {"$eq": "book"}}),
    ])


def catalog_dict_keys(items):
    items.create_index({"tenantId": 1, "name": 1})
    items.create_indexes([IndexModel({"specs.isbn": 1}, partialFilterExpression={"kind": "book"})])


def catalog_create_index_camel_case(items):
    items.create_index([("tenantId", 1), ("name", 1)], name="search")
    items.create_index("specs.isbn", partialFilterExpression={"kind": "book"}, name="isbn_of_books")


def catalog_descending_isbn(items):
    items.create_indexes([IndexModel([("tenantId", 1), ("name", 1), ("price", 1)]),
                          IndexModel([("specs.isbn", -1)], partialFilterExpression={"kind": "book"})])


def _branch(kind, required, properties):
    return {"properties": {"kind": {"enum": [kind]},
                           "specs": {"bsonType": "object", "required": required, "properties": properties}}}


BY_HAND = {"$jsonSchema": {
    "bsonType": "object",
    "required": ["tenantId", "kind", "name", "price", "specs"],
    "oneOf": [
        {"properties": {"kind": {"enum": ["phone"]},
                        "specs": {"bsonType": "object", "required": ["ramGb", "storageGb"],
                                  "properties": {"ramGb": {"bsonType": ["int", "long"]},
                                                 "storageGb": {"bsonType": ["int", "long"]}}}}},
        {"properties": {"kind": {"enum": ["shirt"]},
                        "specs": {"bsonType": "object", "required": ["sizes"],
                                  "properties": {"sizes": {"bsonType": "array"}}}}},
        {"properties": {"kind": {"enum": ["book"]},
                        "specs": {"bsonType": "object", "required": ["isbn"],
                                  "properties": {"isbn": {"bsonType": "string"}}}}},
    ],
}}
REQUIRED_PER_BRANCH = {"$jsonSchema": {
    "bsonType": "object",
    "required": ["tenantId", "kind", "name", "price", "specs"],
    "anyOf": [
        {"required": ["kind", "specs"], **_branch("phone", ["storageGb", "ramGb"],
                                                  {"ramGb": {"bsonType": "int"}, "storageGb": {"bsonType": "int"}})},
        {"required": ["kind", "specs"], **_branch("shirt", ["sizes"], {"sizes": {"bsonType": "array"}})},
        {"required": ["kind", "specs"], **_branch("book", ["isbn"], {"isbn": {"bsonType": "string"}})},
    ],
}}


def schema_with(required=("tenantId", "kind", "name", "price", "specs"), phone=("ramGb", "storageGb"),
               phone_type="int", sizes_type="array", isbn_required=True, fallback=False, typed=("ramGb", "storageGb"),
               other_kinds=()):
    branches = [
        _branch("phone", list(phone), {field: {"bsonType": phone_type} for field in typed}),
        _branch("shirt", ["sizes"], {"sizes": {"bsonType": sizes_type}}),
        _branch("book", ["isbn"] if isbn_required else [], {"isbn": {"bsonType": "string"}}),
        *(_branch(kind, [], {}) for kind in other_kinds),
    ]
    if fallback:
        branches.append({"properties": {"kind": {"not": {"enum": ["phone", "shirt", "book"]}}}})
    return {"$jsonSchema": {"bsonType": "object", "required": list(required), "oneOf": branches}}


UNPINNED = {"$jsonSchema": {  # branches tell the kinds apart by their specs only, never by kind
    "bsonType": "object",
    "required": ["tenantId", "kind", "name", "price", "specs"],
    "oneOf": [
        {"properties": {"specs": {"bsonType": "object", "required": ["ramGb", "storageGb"],
                                  "properties": {"ramGb": {"bsonType": "int"}, "storageGb": {"bsonType": "int"}}}}},
        {"properties": {"specs": {"bsonType": "object", "required": ["sizes"],
                                  "properties": {"sizes": {"bsonType": "array"}}}}},
        {"properties": {"specs": {"bsonType": "object", "required": ["isbn"],
                                  "properties": {"isbn": {"bsonType": "string"}}}}},
    ],
}}


def catalog_full_isbn(items):
    items.create_index([("tenantId", 1), ("name", 1)])
    items.create_index("specs.isbn")


def catalog_isbn_exists_partial(items):
    """Review47 04.6 W4: the partial filter keeps items that have an ISBN, not the books."""
    items.create_index([("tenantId", 1), ("name", 1)])
    items.create_index([("specs.isbn", 1)], partialFilterExpression={"specs.isbn": {"$exists": True}})


def catalog_phone_partial(items):
    items.create_index([("tenantId", 1), ("name", 1)])
    items.create_indexes([IndexModel([("specs.isbn", 1)], partialFilterExpression={"kind": "phone"})])


def catalog_no_search(items):
    items.create_indexes([IndexModel([("specs.isbn", 1)], partialFilterExpression={"kind": "book"})])


def catalog_reversed_search(items):
    items.create_index([("name", 1), ("tenantId", 1)])
    items.create_indexes([IndexModel([("specs.isbn", 1)], partialFilterExpression={"kind": "book"})])


# 04.7 schema versioning ------------------------------------------------------------------------------
def phones_match(order):
    match order.get("schema_version", 1):
        case 1:
            return [order["customer"]["phone"]] if "phone" in order["customer"] else []
        case 2:
            return list(order["customer"]["phones"])
        case version:
            raise ValueError(f"unknown schema_version {version}")


READERS = {1: lambda c: [c["phone"]] if c.get("phone") else [], 2: lambda c: list(c.get("phones", []))}


def phones_table(order):
    reader = READERS.get(order.get("schema_version", 1))
    if reader is None:
        raise ValueError("this reader is out of date")
    return reader(order["customer"])


def phones_explicit(order):
    version = order.get("schema_version")
    if version in (None, 1):
        return [p for p in [order["customer"].get("phone")] if p]
    if version == 2:
        return [*order["customer"]["phones"]]
    raise ValueError(version)


def by_phone_aggregate(orders, phone):
    return list(orders.aggregate([{"$match": {"$or": [{"customer.phones": phone}, {"customer.phone": phone}]}},
                                  {"$sort": {"_id": 1}}]))


def by_phone_cursor(orders, phone):
    return orders.find({"$or": [{"customer.phone": {"$eq": phone}},
                                {"customer.phones": {"$elemMatch": {"$eq": phone}}}]}).sort([("_id", 1)])


def by_phone_two_queries(orders, phone):
    found = list(orders.find({"customer.phone": phone})) + list(orders.find({"customer.phones": phone}))
    return sorted(found, key=lambda order: order["_id"])


def phones_v1_crash(order):
    if order.get("schema_version", 1) == 1:
        return [order["customer"]["phone"]]
    if order["schema_version"] == 2:
        return order["customer"]["phones"]
    raise ValueError("unknown version")


def phones_v1_string(order):
    version = order.get("schema_version", 1)
    if version == 1:
        return order["customer"].get("phone", [])
    if version == 2:
        return order["customer"]["phones"]
    raise ValueError("unknown version")


def phones_v2_first(order):
    version = order.get("schema_version", 1)
    if version == 1:
        return [order["customer"]["phone"]] if "phone" in order["customer"] else []
    if version == 2:
        return order["customer"]["phones"][:1]
    raise ValueError("unknown version")


def phones_guesses(order):
    if "phones" in order["customer"]:
        return order["customer"]["phones"]
    phone = order["customer"].get("phone")
    return [phone] if phone else []


def phones_key_error(order):
    version = order.get("schema_version", 1)
    readers = {1: lambda c: [c["phone"]] if "phone" in c else [], 2: lambda c: c["phones"]}
    return readers[version](order["customer"])


def phones_missing_means_v1_only(order):
    if "schema_version" not in order:
        return [order["customer"]["phone"]] if "phone" in order["customer"] else []
    if order["schema_version"] == 2:
        return order["customer"]["phones"]
    raise ValueError("unknown version")


def by_phone_v2_only(orders, phone):
    return list(orders.find({"customer.phones": phone}).sort("_id", 1))


def by_phone_v1_only(orders, phone):
    return list(orders.find({"customer.phone": phone}).sort("_id", 1))


def by_phone_descending(orders, phone):
    return list(orders.find({"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}).sort("_id", -1))


def by_phone_ids(orders, phone):
    return [d["_id"] for d in orders.find({"$or": [{"customer.phone": phone}, {"customer.phones": phone}]},
                                          {"_id": 1}).sort("_id", 1)]


# 04.8 self-check ---------------------------------------------------------------------------------------
SELF_CHECK = {
    "projection_shrinks_working_set": "no",
    "inc_on_10mb_document_rewrites": "the whole document",
    "outliers_at_40_percent": "subset or reference",
    "lazy_migration_phone_search": "misses unmigrated orders",
}


def self_check_with(**changed):
    return {"self_check": {**SELF_CHECK, **changed}}


# More idioms: $expr guards, get_collection, db[...], a generator, IndexModel with dict keys ---------------

def follow_expr(db, product_id, user_id):
    r = db.products.update_one({"_id": product_id, "$expr": {"$lt": [{"$size": {"$ifNull": ["$followers", []]}}, 50]}},
                               {"$push": {"followers": user_id}})
    if r.matched_count == 0:
        db.products.update_one({"_id": product_id}, {"$set": {"hasExtras": True}})
        db["product_followers_extra"].update_one({"productId": product_id, "count": {"$lt": 100}},
                                                 {"$push": {"followers": user_id}, "$inc": {"count": 1}}, upsert=True)


def copy_index_model_dict(db):
    db.orders.create_indexes([IndexModel({"customer._id": 1})])


def by_phone_generator(orders, phone):
    return (d for d in orders.find({"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}).sort("_id", 1))


def stock_get_collection(db, tenant_id, product_id, day, event):
    inc = {"count": 1, "sumIn": event["qty"] if event["type"] == "IN" else 0,
           "sumOut": event["qty"] if event["type"] == "OUT" else 0}
    db.get_collection("stock_events").update_one({"tenantId": tenant_id, "productId": product_id, "day": day,
                                                  "count": {"$lt": 50}},
                                                 {"$push": {"events": event}, "$inc": inc}, upsert=True)


def reconcile_lookup(db):
    """Written from the statement: one $lookup read of stats and orders together, then a compare-and-set per
    customer, recounting with count_documents and a $group when the stats moved meanwhile."""
    fixed = []
    rows = db.customers.aggregate([
        {"$lookup": {"from": "orders", "localField": "_id", "foreignField": "customerId", "as": "placed"}},
        {"$project": {"stats": 1, "n": {"$size": "$placed"}, "s": {"$sum": "$placed.total"}}},
    ])
    for row in list(rows):
        stats, n, s = row.get("stats") or {}, row["n"], row["s"]
        while (stats.get("orderCount"), stats.get("totalSpent")) != (n, s):
            done = db.customers.update_one(
                {"_id": row["_id"], "stats.orderCount": stats.get("orderCount"),
                 "stats.totalSpent": stats.get("totalSpent")},
                {"$set": {"stats.orderCount": n, "stats.totalSpent": s}})
            if done.matched_count:
                fixed.append(row["_id"])
                break
            stats = db.customers.find_one({"_id": row["_id"]}).get("stats") or {}
            n = db.orders.count_documents({"customerId": row["_id"]})
            s = next(iter(db.orders.aggregate([{"$match": {"customerId": row["_id"]}},
                                                {"$group": {"_id": 0, "s": {"$sum": "$total"}}}])), {"s": 0})["s"]
    return sorted(fixed)


def by_phone_unsorted(orders, phone):
    """Review47 04.7 W3: the right query, never sorted."""
    return list(orders.find({"$or": [{"customer.phones": phone}, {"customer.phone": phone}]}))


def by_phone_first_v2_phone(orders, phone):
    """Review47 04.7 W6: v2 matched on the first phone of the list only."""
    return list(orders.find({"$or": [{"customer.phone": phone}, {"customer.phones.0": phone}]}).sort("_id", 1))


# Review29b: wrong answers an independent reviewer wrote, which the checkers once scored correct ----------
def stock_only_its_sum(db, tenant_id, product_id, day, event):
    """Review29b 04.4 W08: $inc only the sum of the event's type, so an OUT-only bucket has no sumIn."""
    field = "sumIn" if event["type"] == "IN" else "sumOut"
    db.stock_events.update_one(_open_bucket(tenant_id, product_id, day),
                               {"$push": {"events": event}, "$inc": {"count": 1, field: event["qty"]}}, upsert=True)


def _follow_by_a_page_found(db, product_id, user_id, *, guarded: bool):
    """Embed while there is room, else find an overflow page with room and push into it by its _id (only while
    its count is the one read, when ``guarded``)."""
    if db.products.update_one({"_id": product_id, "followers.49": {"$exists": False}},
                              {"$push": {"followers": user_id}}).matched_count:
        return
    db.products.update_one({"_id": product_id}, {"$set": {"hasExtras": True}})
    page = db.product_followers_extra.find_one({"productId": product_id, "count": {"$lt": EXTRA_PAGE}})
    if page is None:
        db.product_followers_extra.insert_one({"productId": product_id, "count": 1, "followers": [user_id]})
    else:
        query = {"_id": page["_id"], **({"count": page["count"]} if guarded else {})}
        db.product_followers_extra.update_one(query, {"$push": {"followers": user_id}, "$inc": {"count": 1}})


def follow_page_found_then_pushed(db, product_id, user_id):
    """Review29b 04.5 W05: find a page with room, then push by its _id (another follower may fill it between)."""
    _follow_by_a_page_found(db, product_id, user_id, guarded=False)


def follow_page_compare_and_set_once(db, product_id, user_id):
    """A page found with room, then written only if its count is unchanged; given up when another follower came."""
    _follow_by_a_page_found(db, product_id, user_id, guarded=True)


def count_flag_by_size(db, product_id):
    """Review29b 04.5 W11: reads the overflow when 50 followers are embedded, whatever hasExtras says."""
    product = db.products.find_one({"_id": product_id}) or {}
    total = len(product.get("followers", []))
    if total >= FOLLOWER_THRESHOLD:
        total += sum(page["count"] for page in db.product_followers_extra.find({"productId": product_id}))
    return total


def by_phone_regex(orders, phone):
    """Review29b 04.7 W11: the phone matched as a substring ($regex), so longer phones that contain it match."""
    pattern = {"$regex": re.escape(phone)}
    return list(orders.find({"$or": [{"customer.phone": pattern}, {"customer.phones": pattern}]}).sort("_id", 1))
