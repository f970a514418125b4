"""Learner answers to lab 07, written from the statements: right ones in other idioms, wrong ones that
make the mistakes the lesson warns about, each breaking one requirement.  Functions and data only: the
lists that pair them with requirements are in tests/lessons/test_lesson07.py.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from bson.decimal128 import Decimal128
from pymongo import ASCENDING, IndexModel, ReplaceOne, UpdateOne
from pymongo.errors import DuplicateKeyError

from course.datasets.more_patterns import FLUSH_EVERY, SESSION_TTL


# 07.1 attribute ---------------------------------------------------------------------------------------
def index_model(db):
    db.products.create_indexes([IndexModel([("attrs.k", ASCENDING), ("attrs.v", ASCENDING)], name="attributes")])


def index_dict(db):
    db.products.create_index({"attrs.k": 1, "attrs.v": 1})


def index_with_name(db):
    db.products.create_index([("attrs.k", 1), ("attrs.v", -1), ("name", 1)], name="attr_search")


def index_k_only(db):
    db.products.create_index("attrs.k")


def index_v_first(db):
    db.products.create_index([("attrs.v", 1), ("attrs.k", 1)])


def index_two_single(db):
    db.products.create_index("attrs.k")
    db.products.create_index("attrs.v")


def attr_aggregate(products, k, v):
    rows = products.aggregate([{"$match": {"attrs": {"$elemMatch": {"k": k, "v": v}}}}, {"$sort": {"_id": 1}},
                               {"$project": {"_id": 1}}])
    return [row["_id"] for row in rows]


def attr_python(products, k, v):
    found = [p["_id"] for p in products.find() if {"k": k, "v": v} in p["attrs"]]
    return sorted(found)


def attr_distinct(products, k, v):
    return sorted(products.distinct("_id", {"attrs": {"$elemMatch": {"k": {"$eq": k}, "v": {"$eq": v}}}}))


def attr_loose(products, k, v):
    return sorted(p["_id"] for p in products.find({"attrs.k": k, "attrs.v": v}))


def attr_value_only(products, k, v):
    return sorted(p["_id"] for p in products.find({"attrs.v": v}))


def attr_unsorted(products, k, v):
    return [p["_id"] for p in products.find({"attrs": {"$elemMatch": {"k": k, "v": v}}}).sort("_id", -1)]


def attr_documents(products, k, v):
    return list(products.find({"attrs": {"$elemMatch": {"k": k, "v": v}}}).sort("_id", 1))


def attr_set(products, k, v):
    return {p["_id"] for p in products.find({"attrs": {"$elemMatch": {"k": k, "v": v}}})}


# 07.2 approximation -------------------------------------------------------------------------------------
def view_bulk(db, page, seq):
    if seq % FLUSH_EVERY:
        return None
    db.pages.bulk_write([UpdateOne({"_id": page}, {"$inc": {"views": FLUSH_EVERY}}, upsert=True)])
    return None


def view_find_one_and_update(db, page, seq):
    if seq % 10 == 0:
        db.pages.find_one_and_update({"_id": page}, {"$inc": {"views": 10}}, upsert=True)


def view_modulo_check_after(db, page, seq):
    flush = not seq % FLUSH_EVERY
    if flush:
        db["pages"].update_one({"_id": page}, {"$inc": {"views": FLUSH_EVERY}}, upsert=True)


def view_every_time(db, page, seq):
    db.pages.update_one({"_id": page}, {"$inc": {"views": 1}}, upsert=True)


def view_zero_increment(db, page, seq):
    amount = FLUSH_EVERY if seq % FLUSH_EVERY == 0 else 0
    db.pages.update_one({"_id": page}, {"$inc": {"views": amount}}, upsert=True)


def view_adds_one(db, page, seq):
    if seq % FLUSH_EVERY == 0:
        db.pages.update_one({"_id": page}, {"$inc": {"views": 1}}, upsert=True)


def view_off_by_one(db, page, seq):
    if seq % FLUSH_EVERY == 1:
        db.pages.update_one({"_id": page}, {"$inc": {"views": FLUSH_EVERY}}, upsert=True)


def view_one_counter(db, page, seq):
    if seq % FLUSH_EVERY == 0:
        db.pages.update_one({"_id": "all"}, {"$inc": {"views": FLUSH_EVERY}}, upsert=True)


def view_sets_seq(db, page, seq):
    if seq % FLUSH_EVERY == 0:
        db.pages.update_one({"_id": page}, {"$set": {"views": seq}}, upsert=True)
    else:
        db.pages.update_one({"_id": page}, {"$set": {"lastSeq": seq}})


def view_sets_views_to_seq(db, page, seq):
    """Wrong (flush): on every tenth view, sets views to seq (right only for one process on a fresh page)."""
    if seq % FLUSH_EVERY == 0:
        db.pages.update_one({"_id": page}, {"$set": {"views": seq}}, upsert=True)


def view_read_add_replace(db, page, seq):
    """Wrong (flush): reads views, adds 10 and writes the sum back: another process's flush in between is lost."""
    if seq % FLUSH_EVERY == 0:
        doc = db.pages.find_one({"_id": page})
        views = (doc or {}).get("views", 0) + FLUSH_EVERY
        db.pages.replace_one({"_id": page}, {"_id": page, "views": views}, upsert=True)


def view_checks_then_increments(db, page, seq):
    """Right: reads the page first (to log it), then adds 10 with an upserted $inc."""
    if seq % FLUSH_EVERY == 0:
        db.pages.find_one({"_id": page})
        db.pages.update_one({"_id": page}, {"$inc": {"views": FLUSH_EVERY}}, upsert=True)


def view_replace_with_read_total(db, page, seq):
    """Right: reads nothing, replaces nothing: an upserted $inc written through update_many on the one _id."""
    if seq % FLUSH_EVERY == 0:
        db.pages.update_many({"_id": page}, {"$inc": {"views": FLUSH_EVERY}}, upsert=True)


# 07.3 archive -------------------------------------------------------------------------------------------
def archive_bulk(db, cutoff):
    cold = list(db.orders.find({"placedAt": {"$lt": cutoff}}))
    if not cold:
        return 0
    db.orders_archive.bulk_write([ReplaceOne({"_id": o["_id"]}, o, upsert=True) for o in cold])
    return db.orders.delete_many({"_id": {"$in": [o["_id"] for o in cold]}}).deleted_count


def archive_one_by_one(db, cutoff):
    moved = 0
    for order in db.orders.find({"placedAt": {"$lt": cutoff}}):
        try:
            db.orders_archive.insert_one(order)
        except DuplicateKeyError:
            pass  # copied by a run that failed before deleting
        moved += db.orders.delete_one({"_id": order["_id"]}).deleted_count
    return moved


def archive_upsert_set(db, cutoff):
    count = 0
    for order in list(db.orders.find({"placedAt": {"$lt": cutoff}})):
        fields = {k: v for k, v in order.items() if k != "_id"}
        db.orders_archive.update_one({"_id": order["_id"]}, {"$set": fields}, upsert=True)
        db.orders.delete_one({"_id": order["_id"]})
        count += 1
    return count


def ttl_index_model(db):
    db.sessions.create_indexes([IndexModel([("lastSeenAt", 1)], expireAfterSeconds=30 * 24 * 60 * 60)])


def ttl_camel(db):
    db["sessions"].create_index([("lastSeenAt", ASCENDING)], expireAfterSeconds=SESSION_TTL, name="expire")


def archive_copy_only(db, cutoff):
    cold = list(db.orders.find({"placedAt": {"$lt": cutoff}}))
    for order in cold:
        db.orders_archive.replace_one({"_id": order["_id"]}, order, upsert=True)
    return len(cold)


def archive_without_total(db, cutoff):
    cold = list(db.orders.find({"placedAt": {"$lt": cutoff}}, {"total": 0}))
    for order in cold:
        db.orders_archive.replace_one({"_id": order["_id"]}, order, upsert=True)
    return db.orders.delete_many({"_id": {"$in": [o["_id"] for o in cold]}}).deleted_count


def archive_lte(db, cutoff):
    cold = list(db.orders.find({"placedAt": {"$lte": cutoff}}))
    for order in cold:
        db.orders_archive.replace_one({"_id": order["_id"]}, order, upsert=True)
    return db.orders.delete_many({"_id": {"$in": [o["_id"] for o in cold]}}).deleted_count


def archive_insert_many(db, cutoff):
    cold = list(db.orders.find({"placedAt": {"$lt": cutoff}}))
    if cold:
        db.orders_archive.insert_many(cold)
    return db.orders.delete_many({"placedAt": {"$lt": cutoff}}).deleted_count


def archive_returns_nothing(db, cutoff):
    cold = list(db.orders.find({"placedAt": {"$lt": cutoff}}))
    for order in cold:
        db.orders_archive.replace_one({"_id": order["_id"]}, order, upsert=True)
    db.orders.delete_many({"_id": {"$in": [o["_id"] for o in cold]}})


def archive_returns_ids(db, cutoff):
    cold = list(db.orders.find({"placedAt": {"$lt": cutoff}}))
    for order in cold:
        db.orders_archive.replace_one({"_id": order["_id"]}, order, upsert=True)
    ids = [order["_id"] for order in cold]
    db.orders.delete_many({"_id": {"$in": ids}})
    return ids


def archive_returns_archive_size(db, cutoff):
    """Wrong (count): returns the size of the archive, which holds earlier runs' orders too."""
    for order in list(db.orders.find({"placedAt": {"$lt": cutoff}})):
        db.orders_archive.replace_one({"_id": order["_id"]}, order, upsert=True)
    db.orders.delete_many({"placedAt": {"$lt": cutoff}})
    return db.orders_archive.count_documents({})


def archive_counts_before_and_after(db, cutoff):
    """Right: the number of orders db.orders held before, less the number it holds after."""
    before = db.orders.count_documents({})
    cold = list(db.orders.find({"placedAt": {"$lt": cutoff}}))
    for order in cold:
        db.orders_archive.replace_one({"_id": order["_id"]}, order, upsert=True)
    db.orders.delete_many({"_id": {"$in": [order["_id"] for order in cold]}})
    return before - db.orders.count_documents({})


def ttl_days(db):
    db.sessions.create_index("lastSeenAt", expireAfterSeconds=30)


def ttl_plain(db):
    db.sessions.create_index("lastSeenAt")


def ttl_compound(db):
    """Wrong (ttl): a compound index with expireAfterSeconds, which expires nothing (review 29)."""
    db.sessions.create_index([("lastSeenAt", 1), ("userId", 1)], expireAfterSeconds=SESSION_TTL)


def ttl_wrong_field(db):
    db.sessions.create_index("createdAt", expireAfterSeconds=SESSION_TTL)


# 07.4 document versioning ---------------------------------------------------------------------------------
def update_replace(db, policy_id, changes):
    current = db.policies.find_one({"_id": policy_id})
    copy = dict(current)
    copy["policyId"] = copy.pop("_id")
    db.policies_history.insert_one(copy)
    new = {**current, **changes, "revision": current["revision"] + 1}
    db.policies.replace_one({"_id": policy_id, "revision": current["revision"]}, new)


def update_find_one_and_update(db, policy_id, changes):
    before = db.policies.find_one_and_update({"_id": policy_id}, {"$set": changes, "$inc": {"revision": 1}})
    before["policyId"] = before.pop("_id")
    db.policies_history.insert_one(before)


def update_pipeline_free(db, policy_id, changes):
    current = db["policies"].find_one({"_id": policy_id})
    history = {"policyId": policy_id}
    history.update({k: v for k, v in current.items() if k != "_id"})
    db["policies_history"].insert_one(history)
    db["policies"].update_one({"_id": policy_id, "revision": current["revision"]},
                              {"$set": {**changes, "revision": current["revision"] + 1}})


def update_guarded_by_whole_document(db, policy_id, changes):
    """Right: the update's filter is the whole version read, so any change in between makes it match nothing."""
    current = db.policies.find_one({"_id": policy_id})
    db.policies_history.insert_one({"policyId": current["_id"], **{k: v for k, v in current.items() if k != "_id"}})
    result = db.policies.update_one(current, {"$set": changes, "$inc": {"revision": 1}})
    return result.modified_count == 1


def update_raises_on_conflict(db, policy_id, changes):
    """Right: the guarded update, raising when another client changed the policy in between."""
    current = db.policies.find_one({"_id": policy_id})
    db.policies_history.insert_one({"policyId": policy_id, **{k: v for k, v in current.items() if k != "_id"}})
    result = db.policies.update_one({"_id": policy_id, "revision": current["revision"]},
                                    {"$set": changes, "$inc": {"revision": 1}})
    if result.matched_count == 0:
        raise RuntimeError(f"policy {policy_id} changed since revision {current['revision']} was read")


def update_unguarded(db, policy_id, changes):
    """Wrong (guarded): the update's filter is the _id alone: a revision written in between is overwritten."""
    current = db["policies"].find_one({"_id": policy_id})
    db["policies_history"].insert_one({"policyId": policy_id, **{k: v for k, v in current.items() if k != "_id"}})
    db["policies"].update_one({"_id": policy_id}, {"$set": {**changes, "revision": current["revision"] + 1}})


def at_aggregate(db, policy_id, revision):
    rows = list(db.policies.aggregate([{"$match": {"_id": policy_id, "revision": revision}},
                                       {"$project": {"_id": 0}}]))
    if rows:
        return rows[0]
    rows = list(db.policies_history.aggregate([{"$match": {"policyId": policy_id, "revision": revision}},
                                               {"$unset": ["_id", "policyId"]}]))
    return rows[0] if rows else None


def at_python(db, policy_id, revision):
    current = db.policies.find_one({"_id": policy_id})
    if current and current["revision"] == revision:
        current.pop("_id")
        return current
    for old in db.policies_history.find({"policyId": policy_id}):
        if old["revision"] == revision:
            return {k: v for k, v in old.items() if k not in ("_id", "policyId")}
    return None


def at_history_first(db, policy_id, revision):
    old = db.policies_history.find_one({"policyId": policy_id, "revision": revision}, {"_id": 0, "policyId": 0})
    return old or db.policies.find_one({"_id": policy_id, "revision": revision}, {"_id": 0})


def update_no_history(db, policy_id, changes):
    db.policies.update_one({"_id": policy_id}, {"$set": changes, "$inc": {"revision": 1}})


def update_history_reuses_id(db, policy_id, changes):
    current = db.policies.find_one({"_id": policy_id})
    try:
        db.policies_history.insert_one({**current, "policyId": policy_id})
    except DuplicateKeyError:
        db.policies_history.replace_one({"_id": policy_id}, {**current, "policyId": policy_id})
    db.policies.update_one({"_id": policy_id, "revision": current["revision"]},
                           {"$set": changes, "$inc": {"revision": 1}})


def update_history_changes_only(db, policy_id, changes):
    current = db.policies.find_one({"_id": policy_id})
    db.policies_history.insert_one({"policyId": policy_id, "revision": current["revision"],
                                    **{k: current[k] for k in changes}})
    db.policies.update_one({"_id": policy_id, "revision": current["revision"]},
                           {"$set": changes, "$inc": {"revision": 1}})


def update_history_new_version(db, policy_id, changes):
    db.policies.update_one({"_id": policy_id}, {"$set": changes, "$inc": {"revision": 1}})
    new = db.policies.find_one({"_id": policy_id})
    fields = {k: v for k, v in new.items() if k != "_id"}
    db.policies_history.insert_one({"policyId": policy_id, **fields, "revision": new["revision"] - 1})


def update_no_revision(db, policy_id, changes):
    current = db.policies.find_one({"_id": policy_id})
    db.policies_history.insert_one({"policyId": policy_id, **{k: v for k, v in current.items() if k != "_id"}})
    db.policies.update_one({"_id": policy_id, "revision": current["revision"]}, {"$set": changes})


def update_replaces_with_changes(db, policy_id, changes):
    current = db.policies.find_one({"_id": policy_id})
    db.policies_history.insert_one({"policyId": policy_id, **{k: v for k, v in current.items() if k != "_id"}})
    db.policies.replace_one({"_id": policy_id, "revision": current["revision"]},
                            {**changes, "revision": current["revision"] + 1})


def at_history_only(db, policy_id, revision):
    return db.policies_history.find_one({"policyId": policy_id, "revision": revision}, {"_id": 0, "policyId": 0})


def at_keeps_ids(db, policy_id, revision):
    found = db.policies.find_one({"_id": policy_id, "revision": revision})
    return found or db.policies_history.find_one({"policyId": policy_id, "revision": revision}, {"_id": 0})


def at_latest_when_missing(db, policy_id, revision):
    found = db.policies.find_one({"_id": policy_id, "revision": revision}, {"_id": 0})
    found = found or db.policies_history.find_one({"policyId": policy_id, "revision": revision},
                                                  {"_id": 0, "policyId": 0})
    return found or db.policies.find_one({"_id": policy_id}, {"_id": 0})


# 07.5 trees ------------------------------------------------------------------------------------------------
def children_from_children(categories, name):
    return sorted(categories.find_one({"_id": name})["children"])


def children_aggregate(categories, name):
    return [c["_id"] for c in categories.aggregate([{"$match": {"parent": name}}, {"$sort": {"_id": 1}}])]


def children_by_path(categories, name):
    node = categories.find_one({"_id": name})
    prefix = node["path"] + name + ","
    return sorted(c["_id"] for c in categories.find({"path": prefix}))


def descendants_by_path(categories, name):
    node = categories.find_one({"_id": name})
    prefix = re.escape(node["path"] + name + ",")
    return sorted(c["_id"] for c in categories.find({"path": {"$regex": "^" + prefix}}))


def descendants_by_levels(categories, name):
    found, level = [], [name]
    while level:
        level = [c["_id"] for c in categories.find({"parent": {"$in": level}})]
        found += level
    return sorted(found)


def descendants_distinct(categories, name):
    return sorted(categories.distinct("_id", {"ancestors": {"$in": [name]}}))


def breadcrumb_by_parents(categories, name):
    trail = [name]
    node = categories.find_one({"_id": name})
    while node["parent"] is not None:
        trail.insert(0, node["parent"])
        node = categories.find_one({"_id": node["parent"]})
    return trail


def breadcrumb_by_path(categories, name):
    node = categories.find_one({"_id": name})
    return [part for part in node["path"].split(",") if part] + [name]


def breadcrumb_aggregate(categories, name):
    row = next(iter(categories.aggregate([{"$match": {"_id": name}},
                                          {"$project": {"trail": {"$concatArrays": ["$ancestors", ["$_id"]]}}}])))
    return row["trail"]


def children_every_level(categories, name):
    return sorted(c["_id"] for c in categories.find({"ancestors": name}))


def children_unsorted(categories, name):
    return [c["_id"] for c in categories.find({"parent": name}).sort("_id", -1)]


def descendants_children_only(categories, name):
    return sorted(c["_id"] for c in categories.find({"parent": name}))


def descendants_with_itself(categories, name):
    return sorted(c["_id"] for c in categories.find({"$or": [{"ancestors": name}, {"_id": name}]}))


def breadcrumb_ancestors_only(categories, name):
    return categories.find_one({"_id": name})["ancestors"]


def breadcrumb_leaf_first(categories, name):
    return [name] + list(reversed(categories.find_one({"_id": name})["ancestors"]))


# 07.6 many-to-many -----------------------------------------------------------------------------------------
def enroll_bulk(db, student_id, course_id):
    db.students.bulk_write([UpdateOne({"_id": student_id}, {"$addToSet": {"courseIds": course_id}})])
    db.courses.bulk_write([UpdateOne({"_id": course_id}, {"$addToSet": {"studentIds": student_id}})])


def enroll_guarded_push(db, student_id, course_id):
    db.students.update_one({"_id": student_id, "courseIds": {"$ne": course_id}}, {"$push": {"courseIds": course_id}})
    db.courses.update_one({"_id": course_id, "studentIds": {"$ne": student_id}}, {"$push": {"studentIds": student_id}})


def enroll_each(db, student_id, course_id):
    db["students"].update_one({"_id": student_id}, {"$addToSet": {"courseIds": {"$each": [course_id]}}})
    db["courses"].update_one({"_id": course_id}, {"$addToSet": {"studentIds": {"$each": [student_id]}}})


def unenroll_pull_all(db, student_id, course_id):
    db.students.update_one({"_id": student_id}, {"$pullAll": {"courseIds": [course_id]}})
    db.courses.update_one({"_id": course_id}, {"$pullAll": {"studentIds": [student_id]}})


def unenroll_python(db, student_id, course_id):
    student = db.students.find_one({"_id": student_id})
    db.students.update_one({"_id": student_id},
                           {"$set": {"courseIds": [c for c in student["courseIds"] if c != course_id]}})
    course = db.courses.find_one({"_id": course_id})
    db.courses.update_one({"_id": course_id},
                          {"$set": {"studentIds": [s for s in course["studentIds"] if s != student_id]}})


def unenroll_find_one_and_update(db, student_id, course_id):
    db.students.find_one_and_update({"_id": student_id}, {"$pull": {"courseIds": course_id}})
    db.courses.find_one_and_update({"_id": course_id}, {"$pull": {"studentIds": student_id}})


def enroll_student_side(db, student_id, course_id):
    db.students.update_one({"_id": student_id}, {"$addToSet": {"courseIds": course_id}})


def enroll_push(db, student_id, course_id):
    db.students.update_one({"_id": student_id}, {"$push": {"courseIds": course_id}})
    db.courses.update_one({"_id": course_id}, {"$push": {"studentIds": student_id}})


def unenroll_student_side(db, student_id, course_id):
    db.students.update_one({"_id": student_id}, {"$pull": {"courseIds": course_id}})


def unenroll_clears_course(db, student_id, course_id):
    db.students.update_one({"_id": student_id}, {"$pull": {"courseIds": course_id}})
    db.courses.update_one({"_id": course_id}, {"$set": {"studentIds": []}})


# 07.7 $lookup ----------------------------------------------------------------------------------------------
_JOIN = {"$lookup": {"from": "customers", "localField": "customerId", "foreignField": "_id", "as": "customer"}}


def rows_unwind(order_ids):
    return [{"$match": {"_id": {"$in": list(order_ids)}}}, {"$sort": {"_id": 1}}, _JOIN, {"$unwind": "$customer"},
            {"$project": {"_id": 1, "total": 1, "customerName": "$customer.name"}}]


def rows_array_elem_at(order_ids):
    return [{"$match": {"_id": {"$in": order_ids}}}, _JOIN,
            {"$set": {"customerName": {"$arrayElemAt": ["$customer.name", 0]}}},
            {"$unset": ["customer", "customerId", "status"]}, {"$sort": {"_id": 1}}]


def rows_replace_root(order_ids):
    return [{"$match": {"$expr": {"$in": ["$_id", order_ids]}}}, _JOIN, {"$sort": {"_id": 1}},
            {"$replaceRoot": {"newRoot": {"_id": "$_id", "total": "$total",
                                          "customerName": {"$first": "$customer.name"}}}}]


def rows_lookup_first(order_ids):
    return [_JOIN, {"$match": {"_id": {"$in": order_ids}}},
            {"$project": {"total": 1, "customerName": {"$first": "$customer.name"}}}, {"$sort": {"_id": 1}}]


def rows_keep_customer(order_ids):
    return [{"$match": {"_id": {"$in": order_ids}}}, _JOIN,
            {"$set": {"customerName": {"$first": "$customer.name"}}}, {"$sort": {"_id": 1}}]


def rows_name_array(order_ids):
    return [{"$match": {"_id": {"$in": order_ids}}}, _JOIN,
            {"$project": {"total": 1, "customerName": "$customer.name"}}, {"$sort": {"_id": 1}}]


def rows_no_sort(order_ids):
    """Wrong (sorted): no $sort stage: the rows come in the order the engine reads the orders."""
    return [{"$match": {"_id": {"$in": list(order_ids)}}},
            {"$lookup": {"from": "customers", "localField": "customerId", "foreignField": "_id", "as": "c"}},
            {"$project": {"total": 1, "customerName": {"$arrayElemAt": ["$c.name", 0]}}}]


def rows_unsorted(order_ids):
    return [{"$match": {"_id": {"$in": order_ids}}}, _JOIN,
            {"$project": {"total": 1, "customerName": {"$first": "$customer.name"}}}, {"$sort": {"_id": -1}}]


# 07.8 covered ----------------------------------------------------------------------------------------------
def covering_model(db):
    db.orders.create_indexes([IndexModel([("customerId", 1), ("total", -1), ("status", 1)], name="by_customer")])


def covering_dict(db):
    db.orders.create_index({"customerId": 1, "status": 1, "total": 1})


def covering_longer(db):
    db.orders.create_index([("customerId", 1), ("status", 1), ("total", 1), ("_id", 1)])


def statuses_aggregate(orders, customer_id):
    return list(orders.aggregate([{"$match": {"customerId": customer_id}},
                                  {"$project": {"_id": 0, "status": 1, "total": 1}}]))


def statuses_exclusion_list(orders, customer_id):
    return [doc for doc in orders.find({"customerId": {"$eq": customer_id}}, {"status": True, "total": True,
                                                                              "_id": False})]


def statuses_sorted(orders, customer_id):
    return list(orders.find({"customerId": customer_id}, {"_id": 0, "total": 1, "status": 1}).sort("total", -1))


def covering_customer_only(db):
    db.orders.create_index("customerId")


def covering_missing_total(db):
    db.orders.create_index([("customerId", 1), ("status", 1)])


def covering_customer_last(db):
    db.orders.create_index([("status", 1), ("total", 1), ("customerId", 1)])


def statuses_with_id(orders, customer_id):
    return list(orders.find({"customerId": customer_id}, {"status": 1, "total": 1}))


def statuses_whole(orders, customer_id):
    return list(orders.find({"customerId": customer_id}))


def statuses_first_only(orders, customer_id):
    found = orders.find_one({"customerId": customer_id}, {"_id": 0, "status": 1, "total": 1})
    return [found] if found else []


def statuses_all_customers(orders, customer_id):
    return list(orders.find({}, {"_id": 0, "status": 1, "total": 1}))


# 07.9 money ------------------------------------------------------------------------------------------------
def cents_split(amount):
    whole, _, fraction = amount.partition(".")
    if len(fraction) > 2 and fraction[2:].strip("0"):
        raise ValueError(f"{amount}: a fraction of a cent")
    return int(whole or "0") * 100 + int((fraction[:2] or "0").ljust(2, "0"))


def cents_quantize(amount):
    value = Decimal(amount)
    cents = value.quantize(Decimal("0.01"))
    if cents != value:
        raise ValueError("fraction of a cent")
    return int(cents * 100)


def cents_as_integer_ratio(amount):
    try:
        numerator, denominator = (Decimal(amount) * 100).as_integer_ratio()
    except InvalidOperation as error:
        raise ValueError(amount) from error
    if denominator != 1:
        raise ValueError(f"{amount} is not a whole number of cents")
    return numerator


def price_replace(db, sku, amount):
    db.prices.replace_one({"_id": sku}, {"_id": sku, "price": Decimal128(Decimal(amount))}, upsert=True)


def price_find_one_and_update(db, sku, amount):
    db["prices"].find_one_and_update({"_id": sku}, {"$set": {"price": Decimal128(amount)}}, upsert=True)


def price_delete_insert(db, sku, amount):
    db.prices.delete_one({"_id": sku})
    db.prices.insert_one({"_id": sku, "price": Decimal128(amount)})


def cents_float(amount):
    return int(float(amount) * 100)


def cents_float_result(amount):
    value = Decimal(amount) * 100
    if value != int(value):
        raise ValueError(amount)
    return float(value)


def cents_round(amount):
    return round(float(amount) * 100)


def cents_decimal_round(amount):
    return int((Decimal(amount) * 100).to_integral_value())


def cents_quantized(amount):
    """Wrong (sub_cent): rounds to whole cents with quantize instead of refusing a fraction of a cent."""
    return int((Decimal(amount) * 100).quantize(Decimal("1")))


def cents_as_decimal(amount):
    """Wrong (cents): the exact number of cents, but as a Decimal, not an int."""
    cents = Decimal(amount) * 100
    if cents != cents.to_integral_value():
        raise ValueError(amount)
    return cents.to_integral_value()


def price_insert_one(db, sku, amount):
    """Wrong (decimal): insert_one by the sku: pricing a sku again raises DuplicateKeyError."""
    db.prices.insert_one({"_id": sku, "price": Decimal128(amount)})


def price_float(db, sku, amount):
    db.prices.update_one({"_id": sku}, {"$set": {"price": float(amount)}}, upsert=True)


def price_string(db, sku, amount):
    db.prices.update_one({"_id": sku}, {"$set": {"price": amount}}, upsert=True)


def price_from_float(db, sku, amount):
    exact_float = Decimal(float(amount)).quantize(Decimal("1e-20"))  # what the float really holds
    db.prices.update_one({"_id": sku}, {"$set": {"price": Decimal128(exact_float)}}, upsert=True)


def price_insert_each_time(db, sku, amount):
    db.prices.insert_one({"sku": sku, "price": Decimal128(amount)})
    db.prices.update_one({"_id": sku}, {"$set": {"price": Decimal128(amount)}}, upsert=True)


# 07.10 self-check ------------------------------------------------------------------------------------------
SELF_CHECK = {
    "preallocation_since_wiredtiger": "saves little",
    "tree_move_subtree": "parent references",
    "tree_breadcrumb": "array of ancestors",
    "approximate_balance": "no",
    "name_on_every_order_view": "extended reference with a sync path",
}


def self_check_with(**changed):
    """The right answers with some replaced (a wrong answer)."""
    return {"self_check": {**SELF_CHECK, **changed}}


def archive_copies_everything(db, cutoff):
    """Copies every order (a full backup) but deletes only the cold ones."""
    for order in db.orders.find():
        db.orders_archive.replace_one({"_id": order["_id"]}, order, upsert=True)
    return db.orders.delete_many({"placedAt": {"$lt": cutoff}}).deleted_count


# more right answers, in idioms the statements invite ---------------------------------------------------
def archive_merge(db, cutoff):
    """$merge into the archive (replacing a copy a failed run left), then delete."""
    cold = {"placedAt": {"$lt": cutoff}}
    db.orders.aggregate([{"$match": cold}, {"$merge": {"into": "orders_archive", "on": "_id",
                                                       "whenMatched": "replace", "whenNotMatched": "insert"}}])
    return db.orders.delete_many(cold).deleted_count


def descendants_graph_lookup(categories, name):
    """$graphLookup down the parent references."""
    rows = list(categories.aggregate([
        {"$match": {"_id": name}},
        {"$graphLookup": {"from": "categories", "startWith": "$_id", "connectFromField": "_id",
                          "connectToField": "parent", "as": "below"}}]))
    return sorted(c["_id"] for c in rows[0]["below"]) if rows else []


def rows_lookup_pipeline(order_ids):
    """$lookup with let and a sub-pipeline."""
    return [{"$match": {"_id": {"$in": order_ids}}},
            {"$lookup": {"from": "customers", "let": {"id": "$customerId"},
                         "pipeline": [{"$match": {"$expr": {"$eq": ["$_id", "$$id"]}}}, {"$project": {"name": 1}}],
                         "as": "customer"}},
            {"$project": {"total": 1, "customerName": {"$first": "$customer.name"}}}, {"$sort": {"_id": 1}}]


def cents_exponent(amount):
    """Reads the digits: a fraction of a cent is a non-zero digit past the second decimal."""
    value = Decimal(amount).normalize()
    if value.as_tuple().exponent < -2:
        raise ValueError(f"{amount}: a fraction of a cent")
    return int(value.scaleb(2))


# answers written from the review of lab 07 ---------------------------------------------------------------
def attr_natural_order(products, k, v):
    """No sort at all: the collection's natural order."""
    return [p["_id"] for p in products.find({"attrs": {"$elemMatch": {"k": k, "v": v}}}, {"_id": 1})]


def archive_upserted_count(db, cutoff):
    """Returns how many orders it copied anew, not how many it deleted."""
    cold = list(db.orders.find({"placedAt": {"$lt": cutoff}}))
    if not cold:
        return 0
    result = db.orders_archive.bulk_write([ReplaceOne({"_id": o["_id"]}, o, upsert=True) for o in cold])
    db.orders.delete_many({"_id": {"$in": [o["_id"] for o in cold]}})
    return result.upserted_count


def descendants_substring(categories, name):
    """An unanchored regex: every path that contains the name's text."""
    return sorted(c["_id"] for c in categories.find({"path": {"$regex": re.escape(name)}}))


def rows_empty_match_first(order_ids):
    """A $match first that keeps every order; the real filter only after the join."""
    return [{"$match": {}},
            {"$lookup": {"from": "customers", "localField": "customerId", "foreignField": "_id", "as": "customer"}},
            {"$match": {"_id": {"$in": order_ids}}},
            {"$project": {"total": 1, "customerName": {"$first": "$customer.name"}}},
            {"$sort": {"_id": 1}}]


def statuses_hint(orders, customer_id):
    """The covering index named through hint()."""
    return [d for d in orders.find({"customerId": customer_id}, projection={"status": True, "total": True,
                                                                           "_id": False})
            .hint([("customerId", 1), ("status", 1), ("total", 1)])]


def statuses_cut_in_python(orders, customer_id):
    """Whole documents read, the two fields kept in Python: the server fetched every document."""
    return [{"status": d["status"], "total": d["total"]} for d in orders.find({"customerId": customer_id})]


def statuses_exclusion(orders, customer_id):
    """An exclusion projection: right fields on this data, but every document is read."""
    return list(orders.find({"customerId": customer_id}, {"_id": 0, "customerId": 0}))


def statuses_cursor(orders, customer_id):
    """The cursor itself, not a list."""
    return orders.find({"customerId": customer_id}, {"_id": 0, "status": 1, "total": 1})


def statuses_with_customer(orders, customer_id):
    """customerId returned too (in the index, but not asked for)."""
    return list(orders.find({"customerId": customer_id}, {"_id": 0, "customerId": 1, "status": 1, "total": 1}))


def statuses_unseen(orders, customer_id):
    """Reads the collection again through its database, a path the wrapper the check passed does not see."""
    return list(orders.database[orders.name].find({"customerId": customer_id}, {"_id": 0, "status": 1, "total": 1}))


def price_through_float(db, sku, amount):
    """Decimal128(Decimal(float)): the float's binary error makes Decimal128 raise decimal.Inexact."""
    db.prices.update_one({"_id": sku}, {"$set": {"price": Decimal128(Decimal(float(amount)))}}, upsert=True)


def price_rounded_to_cents(db, sku, amount):
    """The amount rounded to two decimals before it is stored."""
    rounded = Decimal(amount).quantize(Decimal("0.01"))
    db.prices.update_one({"_id": sku}, {"$set": {"price": Decimal128(rounded)}}, upsert=True)


def cents_two_decimals_at_most(amount):
    """Takes any third decimal for a fraction of a cent, even a zero."""
    if len(amount.partition(".")[2]) > 2:
        raise ValueError(f"{amount}: more than two decimals")
    return int(Decimal(amount) * 100)
