"""Lab 01's checkers: right answers in other idioms, wrong answers that each break one requirement
(the mistakes the lesson warns about), and not attempted, on every backend."""

import bson
import pytest
from pymongo import ASCENDING, DESCENDING, IndexModel, InsertOne, UpdateOne

from course import ____
from course.lessons.lesson01 import MAX_ADDRESSES
from tests.support.requirements import Right, Wrong, check_right, check_wrong
from tests.support.verdicts import assert_correct, assert_not_attempted, solution

# 01.1 ----------------------------------------------------------------------------------
KETTLE = {"_id": 91, "schema_version": 2, "name": "Kettle", "category": "kitchen",
          "price_pence": 2499, "tags": ["steel", "1.7l"]}


def _kettle(**changes):
    doc = {**KETTLE, **changes}
    return {"kettle": {k: v for k, v in doc.items() if v is not _DROP}}


_DROP = object()

# 01.2 ----------------------------------------------------------------------------------
LISTING = {"name": 1, "price_pence": 1}


def search_aggregate(products, category, page, page_size=20):
    return list(products.aggregate([{"$match": {"category": category}}, {"$sort": {"name": 1}},
                                    {"$skip": (page - 1) * page_size}, {"$limit": page_size},
                                    {"$project": {"_id": 1, "name": 1, "price_pence": 1}}]))


def search_exclusion_projection(products, category, page, page_size=20):
    cursor = products.find({"category": {"$eq": category}}, {"category": 0, "tags": 0, "schema_version": 0})
    return list(cursor.sort([("name", ASCENDING)]).skip(page_size * (page - 1)).limit(page_size))


def _offset(page, size):
    return (page - 1) * size


def search_keywords(products, category, page, page_size=20):
    return list(products.find(filter={"category": category}, projection=["name", "price_pence"],
                              sort=[("name", 1)], skip=_offset(page, page_size), limit=page_size))


def search_cursor(products, category, page, page_size=20):
    # the cursor iterates like a list, so it is returned as it is
    return products.find({"category": category}, LISTING).sort("name", 1).skip(_offset(page, page_size)).limit(
        page_size)


def search_paged_in_python(products, category, page, page_size=20):
    listing = sorted(products.find({"category": category}, {"name": 1, "price_pence": 1}), key=lambda d: d["name"])
    start = (page - 1) * page_size
    return listing[start:start + page_size]


def search_page_from_zero_keywords(products, category, page, page_size=20):
    # pages counted from 0, in the keyword form
    return list(products.find({"category": category}, LISTING, sort=[("name", 1)], skip=page * page_size,
                              limit=page_size))


def search_dict_sort_boolean_projection(products, category, page, page_size=20):
    cursor = products.find({"category": category}, {"_id": True, "name": True, "price_pence": True})
    return list(cursor.sort({"name": 1}).skip((page - 1) * page_size).limit(page_size))


def search_project_before_sort(products, category, page, page_size=20):
    return list(products.aggregate([{"$match": {"category": category}}, {"$project": {"name": 1, "price_pence": 1}},
                                    {"$sort": {"name": 1}}, {"$skip": (page - 1) * page_size},
                                    {"$limit": page_size}]))


def _search(sort=("name", 1), skip=lambda page, size: (page - 1) * size, limit=lambda size: size,
            projection=LISTING, filter_=lambda category: {"category": category}):
    def search_page(products, category, page, page_size=20):
        cursor = products.find(filter_(category), projection).sort(*sort)
        return list(cursor.skip(skip(page, page_size)).limit(limit(page_size)))
    return {"search_page": search_page}


def search_projected_in_python(products, category, page, page_size=20):
    cursor = products.find({"category": category}).sort("name", 1).skip((page - 1) * page_size).limit(page_size)
    return [{k: d[k] for k in ("_id", "name", "price_pence")} for d in cursor]


def search_sorted_after_slicing(products, category, page, page_size=20):
    docs = list(products.find({"category": category}, LISTING).skip((page - 1) * page_size).limit(page_size))
    return sorted(docs, key=lambda d: d["name"])


# 01.3 ----------------------------------------------------------------------------------
def indexes_dict_keys(products):
    products.create_index({"category": 1, "name": 1})


def indexes_model(products):
    products.create_indexes([IndexModel([("category", ASCENDING), ("name", ASCENDING)], name="category_search")])


def indexes_named_reverse_name(products):
    products.create_index([("category", 1), ("name", -1)], name="search")


def indexes_covering(products):
    products.create_index([("category", 1), ("name", 1), ("price_pence", 1)])


def indexes_category_only(products):
    products.create_index("category")


def indexes_name_first(products):
    products.create_index([("name", 1), ("category", 1)])


def indexes_none(products):
    return None


def indexes_plus_price(products):
    products.create_index([("category", 1), ("name", 1)])
    products.create_index("price_pence")


def indexes_plus_category(products):
    products.create_index([("category", 1), ("name", 1)])
    products.create_index("category")


# 01.4 ----------------------------------------------------------------------------------
def _valid(price):
    if isinstance(price, bool) or not isinstance(price, int):
        raise TypeError(f"price must be an int, got {price!r}")
    if price < 0:
        raise ValueError(f"price must not be negative, got {price}")


def price_find_one_and_update(products, product_id, price_pence):
    if type(price_pence) is not int:
        raise TypeError("price must be an int")
    if price_pence < 0:
        raise ValueError("negative")
    return products.find_one_and_update({"_id": product_id}, {"$set": {"price_pence": price_pence}}) is not None


def price_bulk_write(products, product_id, price_pence):
    if isinstance(price_pence, bool) or not isinstance(price_pence, int) or price_pence < 0:
        raise ValueError(f"bad price {price_pence!r}")
    result = products.bulk_write([UpdateOne({"_id": product_id}, {"$set": {"price_pence": price_pence}})])
    return result.matched_count == 1


def price_update_many_on_id(products, product_id, price_pence):
    _valid(price_pence)
    result = products.update_many({"_id": {"$eq": product_id}}, {"$set": {"price_pence": price_pence}}, upsert=False)
    return bool(result.matched_count)


def price_checked_first(products, product_id, price_pence):
    _valid(price_pence)
    if products.count_documents({"_id": product_id}) == 0:
        return False
    products.update_one({"_id": product_id}, {"$set": {"price_pence": price_pence}})
    return True


class PriceError(ValueError):
    """A learner's own exception, a ValueError."""


def price_own_exception(products, product_id, price_pence):
    if isinstance(price_pence, bool) or not isinstance(price_pence, int) or price_pence < 0:
        raise PriceError(f"not a price: {price_pence!r}")
    return bool(products.update_one({"_id": product_id}, {"$set": {"price_pence": price_pence}}).matched_count)


def price_pipeline_update(products, product_id, price_pence):
    _valid(price_pence)
    return products.update_one({"_id": product_id}, [{"$set": {"price_pence": price_pence}}]).matched_count == 1


def _index_accepts_bools(price):
    import operator

    if operator.index(price) < 0:  # operator.index(True) is 1: a bool gets through
        raise ValueError(price)


def _price_answer(validate=_valid, update=lambda p: {"$set": {"price_pence": p}}, upsert=False,
                  returns=lambda result: result.matched_count == 1):
    def update_price(products, product_id, price_pence):
        validate(price_pence)
        return returns(products.update_one({"_id": product_id}, update(price_pence), upsert=upsert))
    return {"update_price": update_price}


def _accepts_floats(price):
    if isinstance(price, bool) or not isinstance(price, (int, float)) or price < 0:
        raise TypeError(price)


def _accepts_whole_floats(price):
    # a price is a whole number of pence: 2499.0 is one
    if isinstance(price, bool) or not isinstance(price, (int, float)) or price != int(price) or price < 0:
        raise TypeError(price)


def _accepts_bools(price):
    if not isinstance(price, int) or price < 0:
        raise TypeError(price)


def _accepts_negatives(price):
    if isinstance(price, bool) or not isinstance(price, int):
        raise TypeError(price)


def _rejects_zero(price):
    _valid(price)
    if price == 0:
        raise ValueError("a price of 0 is a mistake")


def _asserts(price):
    assert isinstance(price, int) and not isinstance(price, bool) and price >= 0


def price_replaces_document(products, product_id, price_pence):
    _valid(price_pence)
    doc = products.find_one({"_id": product_id})
    if doc is None:
        return False
    doc["price_pence"] = price_pence
    products.replace_one({"_id": product_id}, doc)
    return True


def price_sets_every_field(products, product_id, price_pence):
    _valid(price_pence)
    doc = products.find_one({"_id": product_id})
    if doc is None:
        return False
    doc["price_pence"] = price_pence
    products.update_one({"_id": product_id}, {"$set": {k: v for k, v in doc.items() if k != "_id"}})
    return True


def price_replaces_blindly(products, product_id, price_pence):
    _valid(price_pence)
    return products.replace_one({"_id": product_id}, {"price_pence": price_pence}).matched_count == 1


def price_writes_then_checks(products, product_id, price_pence):
    result = products.update_one({"_id": product_id}, {"$set": {"price_pence": price_pence}})
    _valid(price_pence)
    return result.matched_count == 1


# 01.5 ----------------------------------------------------------------------------------
PLANS = {"A": ("category_1_name_1", False), "B": ("price_pence_1", True), "C": (None, False), "D": (None, False)}


def _plans(**changes):
    return {"plan_predictions": {**PLANS, **changes}}


# 01.6 ----------------------------------------------------------------------------------
def address_size_guard(db, customer_id, address):
    guard = {"$or": [{"addresses": {"$exists": False}}] + [{"addresses": {"$size": n}} for n in range(MAX_ADDRESSES)]}
    result = db.customers.update_one({"$and": [{"_id": customer_id}, guard]}, {"$push": {"addresses": address}})
    return result.matched_count == 1


def address_find_one_and_update(db, customer_id, address):
    found = db.customers.find_one_and_update({"_id": customer_id, f"addresses.{MAX_ADDRESSES - 1}": {"$exists": False}},
                                             {"$push": {"addresses": address}})
    return found is not None


def address_bulk_write(db, customer_id, address):
    result = db["customers"].bulk_write([UpdateOne({"_id": customer_id, "addresses.2": {"$exists": False}},
                                                   {"$push": {"addresses": address}})])
    return result.modified_count == 1


def address_expr_guard(db, customer_id, address):
    guard = {"$expr": {"$lt": [{"$size": {"$ifNull": ["$addresses", []]}}, MAX_ADDRESSES]}}
    return db.customers.update_one({"_id": customer_id, **guard}, {"$push": {"addresses": address}}).modified_count == 1


def address_not_size_guard(db, customer_id, address):
    result = db.customers.update_one({"_id": customer_id, "addresses": {"$not": {"$size": MAX_ADDRESSES}}},
                                     {"$push": {"addresses": address}})
    return result.modified_count == 1


def address_reads_then_guarded_update(db, customer_id, address):
    if db.customers.find_one({"_id": customer_id}, {"_id": 1}) is None:
        return False
    result = db.customers.update_one({"_id": customer_id, "addresses.2": {"$exists": False}},
                                     {"$push": {"addresses": address}})
    return result.modified_count == 1


def order_copied(db, customer_id, order):
    doc = order.copy()
    doc.update(customer_id=customer_id, schema_version=1)
    db.orders.insert_one(doc)
    return doc["_id"]


def recent_days_only(db, customer_id, limit=10):
    return [o["placed_at"] for o in db.orders.find({"customer_id": customer_id}).sort("placed_at", -1).limit(limit)]


def address_read_then_push(db, customer_id, address):
    customer = db.customers.find_one({"_id": customer_id})
    if customer is None or len(customer.get("addresses", [])) >= MAX_ADDRESSES:
        return False
    db.customers.update_one({"_id": customer_id}, {"$push": {"addresses": address}})
    return True


def address_read_then_set(db, customer_id, address):
    customer = db.customers.find_one({"_id": customer_id})
    if customer is None or len(customer.get("addresses", [])) >= MAX_ADDRESSES:
        return False
    db.customers.update_one({"_id": customer_id}, {"$set": {"addresses": customer.get("addresses", []) + [address]}})
    return True


def _address_try(db, customer_id, address):
    """One optimistic try: write the list back only if it is still the one read (None: no customer or no room)."""
    customer = db.customers.find_one({"_id": customer_id})
    if customer is None or len(customer.get("addresses", [])) >= MAX_ADDRESSES:
        return None
    read = customer.get("addresses")
    result = db.customers.update_one({"_id": customer_id, "addresses": read},
                                     {"$set": {"addresses": (read or []) + [address]}})
    return result.modified_count == 1


def address_compare_and_set(db, customer_id, address):
    # optimistic, and gives up when another write got in first
    return bool(_address_try(db, customer_id, address))


def address_compare_and_set_retried(db, customer_id, address):
    # optimistic, and tried again with what is there now when another write got in first
    while (done := _address_try(db, customer_id, address)) is False:
        pass
    return bool(done)


def address_unbounded(db, customer_id, address):
    return db.customers.update_one({"_id": customer_id}, {"$push": {"addresses": address}}).modified_count == 1


def address_allows_four(db, customer_id, address):
    result = db.customers.update_one({"_id": customer_id, f"addresses.{MAX_ADDRESSES}": {"$exists": False}},
                                     {"$push": {"addresses": address}})
    return result.modified_count == 1


def address_keeps_last_three(db, customer_id, address):
    result = db.customers.update_one({"_id": customer_id},
                                     {"$push": {"addresses": {"$each": [address], "$slice": -MAX_ADDRESSES}}})
    return result.matched_count == 1


def address_creates_customer(db, customer_id, address):
    if db.customers.count_documents({"_id": customer_id}) == 0:
        db.customers.insert_one({"_id": customer_id, "addresses": [address]})
        return True
    result = db.customers.update_one({"_id": customer_id, "addresses.2": {"$exists": False}},
                                     {"$push": {"addresses": address}})
    return result.modified_count == 1


def order_plain(db, customer_id, order):
    db.orders.insert_one({"customer_id": customer_id, "schema_version": 1, **order})


def order_bulk_insert(db, customer_id, order):
    db.orders.bulk_write([InsertOne(dict(order, customer_id=customer_id, schema_version=1))])


def order_returns_id(db, customer_id, order):
    return db["orders"].insert_one({**order, "customer_id": customer_id, "schema_version": 1}).inserted_id


def order_also_embedded(db, customer_id, order):
    db.customers.update_one({"_id": customer_id}, {"$push": {"orders": order}})
    db.orders.insert_one({**order, "customer_id": customer_id, "schema_version": 1})


def order_ids_in_customer(db, customer_id, order):
    order_id = db.orders.insert_one({**order, "customer_id": customer_id, "schema_version": 1}).inserted_id
    db.customers.update_one({"_id": customer_id}, {"$push": {"order_ids": order_id}})


def order_counter_in_customer(db, customer_id, order):
    db.orders.insert_one({**order, "customer_id": customer_id, "schema_version": 1})
    db.customers.update_one({"_id": customer_id}, {"$inc": {"order_count": 1}})


def order_no_reference(db, customer_id, order):
    db.orders.insert_one({**order, "customer": customer_id, "schema_version": 1})


def order_no_version(db, customer_id, order):
    db.orders.insert_one({**order, "customer_id": customer_id})


def order_drops_fields(db, customer_id, order):
    db.orders.insert_one({"customer_id": customer_id, "schema_version": 1, "placed_at": order["placed_at"]})


def recent_aggregate(db, customer_id, limit=10):
    return list(db.orders.aggregate([{"$match": {"customer_id": customer_id}}, {"$sort": {"placed_at": -1}},
                                     {"$limit": limit}]))


def recent_keywords(db, customer_id, limit=10):
    return list(db.orders.find({"customer_id": customer_id}, sort=[("placed_at", DESCENDING)], limit=limit))


def recent_cursor(db, customer_id, limit=10):
    return db.orders.find({"customer_id": customer_id}, sort=[("placed_at", DESCENDING)], limit=limit)


def recent_oldest_first(db, customer_id, limit=10):
    return list(db.orders.find({"customer_id": customer_id}).sort("placed_at", 1).limit(limit))


def recent_ignores_limit(db, customer_id, limit=10):
    return list(db.orders.find({"customer_id": customer_id}).sort("placed_at", -1))


def recent_limit_five_default(db, customer_id, limit=5):
    return list(db.orders.find({"customer_id": customer_id}).sort("placed_at", -1).limit(limit))


def recent_every_customer(db, customer_id, limit=10):
    return list(db.orders.find({}).sort("placed_at", -1).limit(limit))


def recent_by_id(db, customer_id, limit=10):
    return list(db.orders.find({"customer_id": customer_id}).sort("_id", -1).limit(limit))


def index_model(db):
    db.orders.create_indexes([IndexModel([("customer_id", 1), ("placed_at", -1)], name="recent")])


def index_ascending(db):
    db.orders.create_index([("customer_id", ASCENDING), ("placed_at", ASCENDING)])


def index_dict_keys(db):
    db["orders"].create_index({"customer_id": 1, "placed_at": -1}, name="orders_recent")


def index_without_sort(db):
    db.orders.create_index("customer_id")


def index_sort_first(db):
    db.orders.create_index([("placed_at", -1), ("customer_id", 1)])


def index_none(db):
    return None


def index_plus_placed_at(db):
    db.orders.create_index([("customer_id", 1), ("placed_at", -1)])
    db.orders.create_index("placed_at")


def index_plus_customers(db):
    db.orders.create_index([("customer_id", 1), ("placed_at", -1)])
    db.customers.create_index("addresses.postcode")


def _customer(lab, **changes):
    """The reference 01.6 answer with some of its functions replaced."""
    return {**solution(lab, 6), **changes}


WRONG = [
    # 01.1: each field's own mistake
    Wrong("01.1", "price", "price as a formatted string", _kettle(price_pence="24.99"), "int number of pence"),
    Wrong("01.1", "price", "price as a whole float", _kettle(price_pence=2499.0), "not the float"),
    Wrong("01.1", "price", "price in pounds", _kettle(price_pence=24.99), "int number of pence"),
    Wrong("01.1", "price", "price nested with its currency", _kettle(price_pence={"amount": 2499, "currency": "GBP"}),
          "not the dict"),
    Wrong("01.1", "price", "price off by a factor", _kettle(price_pence=249900), "is 249900"),
    Wrong("01.1", "tags", "tags as one string", _kettle(tags="steel,1.7l"), "list of strings"),
    Wrong("01.1", "tags", "tags as referenced documents", _kettle(tags=[{"tag": "steel"}, {"tag": "1.7l"}]),
          "list of strings"),
    Wrong("01.1", "tags", "a tag missing", _kettle(tags=["steel"]), "nothing else"),
    Wrong("01.1", "version", "schema_version 1", _kettle(schema_version=1), "not 1"),
    Wrong("01.1", "version", "schema_version as a string", _kettle(schema_version="2"), "the int 2"),
    Wrong("01.1", "version", "schema_version missing", _kettle(schema_version=_DROP), "has no schema_version"),
    Wrong("01.1", "version", "schemaVersion, the camelCase spelling", _kettle(schema_version=_DROP, schemaVersion=2),
          "it has 'schemaVersion'"),
    Wrong("01.1", "version", "schema_version as a float", _kettle(schema_version=2.0), "the int 2"),
    Wrong("01.1", "card", "the _id as a string", _kettle(_id="91"), "_id should be 91"),
    Wrong("01.1", "card", "the _id as a float", _kettle(_id=91.0), "not the float 91.0"),
    Wrong("01.1", "card", "name in lower case", _kettle(name="kettle"), "name should be 'Kettle'"),
    Wrong("01.1", "card", "the document in a list", {"kettle": [KETTLE]}, "should be a dict",
          also=("price", "tags", "version", "shape")),
    Wrong("01.1", "shape", "a second, formatted price", _kettle(price="£24.99"), "price is not a field"),
    Wrong("01.1", "shape", "an unbounded embedded list", _kettle(reviews=[{"stars": 5}] * 50), "reviews"),
    Wrong("01.1", "price", "price under another name", _kettle(price_pence=_DROP, price=2499), "no price_pence"),
    Wrong("01.1", "shape", "an extra field beside a missing one", _kettle(schema_version=_DROP, reviews=[]),
          "reviews is not a field", also=("version",)),
    # 01.2
    Wrong("01.2", "list", "the cursor returned", {"search_page": search_cursor}, "returned a Cursor"),
    Wrong("01.2", "projection", "whole documents", _search(projection=None), "hold category, schema_version, tags"),
    Wrong("01.2", "projection", "no price", _search(projection={"name": 1}), "have no price_pence"),
    Wrong("01.2", "projection", "no _id", _search(projection={"_id": 0, **LISTING}), "have no _id"),
    Wrong("01.2", "projection", "projection done in Python", {"search_page": search_projected_in_python},
          "not python after it"),
    Wrong("01.2", "order", "sorted by _id", _search(sort=("_id", 1)), "by name, ascending"),
    Wrong("01.2", "order", "names descending", _search(sort=("name", -1)), "ascending"),
    Wrong("01.2", "category", "no category filter", _search(filter_=lambda category: {}), "not a kitchen product"),
    Wrong("01.2", "category", "a filter that drops products",
          _search(filter_=lambda category: {"category": category, "price_pence": {"$gt": 999}}), "never returns"),
    Wrong("01.2", "page", "page counted from 0", _search(skip=lambda page, size: page * size),
          "returned numbers 21 to 40 of the kitchen products in name order; with 20 per page and page 1 first, "
          "page 1 holds numbers 1 to 20 of 58"),
    Wrong("01.2", "page", "page counted from 0, keyword form", {"search_page": search_page_from_zero_keywords},
          "page 1 holds numbers 1 to 20"),
    Wrong("01.2", "page", "page_size ignored", _search(skip=lambda page, size: (page - 1) * 20, limit=lambda size: 20),
          "page 2 holds numbers 8 to 14"),
    Wrong("01.2", "page", "one too many per page", _search(limit=lambda size: size + 1), "returned numbers 1 to 21"),
    Wrong("01.2", "page", "sorted after slicing", {"search_page": search_sorted_after_slicing}, "its product 1 is"),
    Wrong("01.2", "page", "page counted from 0, sorted by _id too (paging judged on its own listing)",
          _search(sort=("_id", 1), skip=lambda page, size: page * size), "page 1 holds numbers 1 to 20",
          also=("order",)),
    # 01.3
    Wrong("01.3", "search", "index on category alone", {"create_catalog_indexes": indexes_category_only},
          "sorts them in memory"),
    Wrong("01.3", "search", "the sort field first", {"create_catalog_indexes": indexes_name_first},
          "walks the whole index"),
    Wrong("01.3", "search", "no index", {"create_catalog_indexes": indexes_none}, "reads the whole collection"),
    Wrong("01.3", "no_extra", "an index on price as well", {"create_catalog_indexes": indexes_plus_price},
          "price_pence_1 serves none"),
    Wrong("01.3", "no_extra", "a redundant index on category", {"create_catalog_indexes": indexes_plus_category},
          "category_1 serves none"),
    # 01.4
    Wrong("01.4", "returns", "modified_count: False at an unchanged price",
          _price_answer(returns=lambda result: result.modified_count == 1), "already was that"),
    Wrong("01.4", "returns", "returns the count", _price_answer(returns=lambda result: result.matched_count),
          "returned 1"),
    Wrong("01.4", "returns", "always True", _price_answer(returns=lambda result: True), "returned True, not False"),
    Wrong("01.4", "validate", "accepts floats", _price_answer(validate=_accepts_floats), "24.99"),
    Wrong("01.4", "validate", "accepts a whole float", _price_answer(validate=_accepts_whole_floats), "2499.0"),
    Wrong("01.4", "validate", "accepts bools", _price_answer(validate=_accepts_bools), "True"),
    Wrong("01.4", "validate", "accepts negative prices", _price_answer(validate=_accepts_negatives), "-5"),
    Wrong("01.4", "validate", "operator.index lets a bool through",
          _price_answer(validate=_index_accepts_bools), "True"),
    Wrong("01.4", "validate", "no validation", _price_answer(validate=lambda price: None), "'2499'"),
    Wrong("01.4", "validate", "assert instead of raise", _price_answer(validate=_asserts), "raised AssertionError"),
    Wrong("01.4", "validate", "rejects 0", _price_answer(validate=_rejects_zero), "0 is a non-negative int"),
    Wrong("01.4", "validate", "writes, then validates", {"update_price": price_writes_then_checks},
          "refused before anything is written"),
    Wrong("01.4", "set", "read, change, replace_one", {"update_price": price_replaces_document}, "wrote the old name"),
    Wrong("01.4", "set", "read, then $set every field", {"update_price": price_sets_every_field}, "wrote the old name"),
    Wrong("01.4", "set", "stamps another field", _price_answer(update=lambda p: {"$set": {"price_pence": p,
                                                                                         "updated": True}}),
          "changed updated too"),
    Wrong("01.4", "set", "replacement without a read", {"update_price": price_replaces_blindly}, "changed"),
    Wrong("01.4", "no_create", "upserts", _price_answer(upsert=True), "never creates a product"),
    # 01.5: a wrong pair costs its own query; a malformed answer fails every query
    Wrong("01.5", "B", "B without the in-memory sort", _plans(B=("price_pence_1", False)), "query B"),
    Wrong("01.5", "B", "B on the compound index", _plans(B=("category_1_name_1", False)), "query B"),
    Wrong("01.5", "A", "A sorts in memory", _plans(A=("category_1_name_1", True)), "query A"),
    Wrong("01.5", "A", "A as an index name only", _plans(A="category_1_name_1"), "should be a pair"),
    Wrong("01.5", "C", "C as the string COLLSCAN", _plans(C=("COLLSCAN", False)), "query C"),
    Wrong("01.5", "D", "D on the compound index", _plans(D=("category_1_name_1", False)), "query D"),
    Wrong("01.5", "D", "D missing", {"plan_predictions": {k: v for k, v in PLANS.items() if k != "D"}},
          "no entry for query 'D'"),
    Wrong("01.5", "B", "B's sort as a string", _plans(B=("price_pence_1", "True")), "should be a pair"),
    Wrong("01.5", "A", "a list, not a dict", {"plan_predictions": [PLANS]}, "should be a dict", also=("B", "C", "D")),
    # 01.6
    Wrong("01.6", "atomic", "read, check len, push", lambda lab: _customer(lab, add_address=address_read_then_push),
          "past MAX_ADDRESSES (3)"),
    Wrong("01.6", "atomic", "read, then $set the list", lambda lab: _customer(lab, add_address=address_read_then_set),
          "lost it"),
    Wrong("01.6", "atomic", "compare-and-set that gives up when another add got in first",
          lambda lab: _customer(lab, add_address=address_compare_and_set), "must not make yours fail"),
    Wrong("01.6", "bounded", "no bound", lambda lab: _customer(lab, add_address=address_unbounded),
          "must stop at MAX_ADDRESSES"),
    Wrong("01.6", "bounded", "off by one: four allowed", lambda lab: _customer(lab, add_address=address_allows_four),
          "leaves 4 addresses"),
    Wrong("01.6", "bounded", "keeps the last three", lambda lab: _customer(lab, add_address=address_keeps_last_three),
          "not the first ones"),
    Wrong("01.6", "unknown", "creates a missing customer",
          lambda lab: _customer(lab, add_address=address_creates_customer), "never creates a customer"),
    Wrong("01.6", "no_embed", "orders also pushed into the customer",
          lambda lab: _customer(lab, place_order=order_also_embedded), "changed customer 2's orders"),
    Wrong("01.6", "no_embed", "order ids pushed into the customer",
          lambda lab: _customer(lab, place_order=order_ids_in_customer), "order_ids"),
    Wrong("01.6", "no_embed", "an order counter in the customer",
          lambda lab: _customer(lab, place_order=order_counter_in_customer), "order_count"),
    Wrong("01.6", "own_document", "no customer_id reference", lambda lab: _customer(lab, place_order=order_no_reference),
          "holds 0 documents with customer_id 2"),
    Wrong("01.6", "own_document", "drops the order's fields", lambda lab: _customer(lab, place_order=order_drops_fields),
          "keeps the order"),
    Wrong("01.6", "version", "no schema_version", lambda lab: _customer(lab, place_order=order_no_version),
          "schema_version None"),
    Wrong("01.6", "recent", "oldest first", lambda lab: _customer(lab, recent_orders=recent_oldest_first),
          "newest (largest placed_at) first"),
    Wrong("01.6", "recent", "limit ignored", lambda lab: _customer(lab, recent_orders=recent_ignores_limit),
          "not 3"),
    Wrong("01.6", "recent", "a default limit of 5", lambda lab: _customer(lab, recent_orders=recent_limit_five_default),
          "not 10"),
    Wrong("01.6", "recent", "every customer's orders", lambda lab: _customer(lab, recent_orders=recent_every_customer),
          "orders only"),
    Wrong("01.6", "recent", "days instead of documents", lambda lab: _customer(lab, recent_orders=recent_days_only),
          "order documents"),
    Wrong("01.6", "recent", "the cursor returned", lambda lab: _customer(lab, recent_orders=recent_cursor),
          "returned a Cursor"),
    Wrong("01.6", "recent", "newest by _id", lambda lab: _customer(lab, recent_orders=recent_by_id), "placed_at"),
    Wrong("01.6", "index", "index without the sort", lambda lab: _customer(lab, create_order_indexes=index_without_sort),
          "sorts them in memory"),
    Wrong("01.6", "index", "the sort field first", lambda lab: _customer(lab, create_order_indexes=index_sort_first),
          "walks the whole index"),
    Wrong("01.6", "index", "no index", lambda lab: _customer(lab, create_order_indexes=index_none),
          "reads the whole collection"),
    Wrong("01.6", "no_extra_index", "an index on placed_at too",
          lambda lab: _customer(lab, create_order_indexes=index_plus_placed_at), "placed_at_1 on orders"),
    Wrong("01.6", "no_extra_index", "an index on customers too",
          lambda lab: _customer(lab, create_order_indexes=index_plus_customers), "on customers"),
]

RIGHT = [
    Right("01.1", "keys in another order, tags reversed",
          {"kettle": {"tags": ["1.7l", "steel"], "price_pence": 2499, "category": "kitchen", "name": "Kettle",
                      "schema_version": 2, "_id": 91}}),
    Right("01.1", "built with dict()", {"kettle": dict(_id=91, schema_version=2, name="Kettle", category="kitchen",
                                                       price_pence=24 * 100 + 99, tags=list(("steel", "1.7l")))}),
    Right("01.1", "price as a BSON Int64", _kettle(price_pence=bson.Int64(2499))),
    Right("01.2", "aggregate pipeline", {"search_page": search_aggregate}),
    Right("01.2", "exclusion projection, $eq filter, list sort", {"search_page": search_exclusion_projection}),
    Right("01.2", "find keywords, projection as a list", {"search_page": search_keywords}),
    Right("01.2", "sorted and paged in Python after a projected find", {"search_page": search_paged_in_python}),
    Right("01.2", "dict sort, boolean projection", {"search_page": search_dict_sort_boolean_projection}),
    Right("01.2", "aggregate projecting before the sort", {"search_page": search_project_before_sort}),
    Right("01.3", "keys as a dict", {"create_catalog_indexes": indexes_dict_keys}),
    Right("01.3", "create_indexes with an IndexModel and a name", {"create_catalog_indexes": indexes_model}),
    Right("01.3", "name descending, custom name", {"create_catalog_indexes": indexes_named_reverse_name}),
    Right("01.3", "a covering index that also holds the price", {"create_catalog_indexes": indexes_covering}),
    Right("01.4", "find_one_and_update", {"update_price": price_find_one_and_update}),
    Right("01.4", "one-operation bulk_write", {"update_price": price_bulk_write}),
    Right("01.4", "update_many on the _id", {"update_price": price_update_many_on_id}),
    Right("01.4", "counts first, then $set", {"update_price": price_checked_first}),
    Right("01.4", "its own ValueError subclass", {"update_price": price_own_exception}),
    Right("01.4", "a pipeline update", {"update_price": price_pipeline_update}),
    Right("01.5", "pairs as lists", {"plan_predictions": {k: list(v) for k, v in PLANS.items()}}),
    Right("01.5", "built with dict()", {"plan_predictions": dict(A=("category_1_name_1", False),
                                                                 B=("price_pence_1", True), C=(None, False),
                                                                 D=(None, False))}),
    Right("01.5", "keys in another order", {"plan_predictions": dict(reversed(list(PLANS.items())))}),
    Right("01.6", "$size guard, find keywords, IndexModel",
          lambda lab: _customer(lab, add_address=address_size_guard, recent_orders=recent_keywords,
                                create_order_indexes=index_model)),
    Right("01.6", "find_one_and_update, bulk insert, aggregate, ascending index",
          lambda lab: _customer(lab, add_address=address_find_one_and_update, place_order=order_bulk_insert,
                                recent_orders=recent_aggregate, create_order_indexes=index_ascending)),
    Right("01.6", "bulk_write guard, plain insert, dict keys",
          lambda lab: _customer(lab, add_address=address_bulk_write, place_order=order_plain,
                                create_order_indexes=index_dict_keys)),
    Right("01.6", "insert returning the id", lambda lab: _customer(lab, place_order=order_returns_id)),
    Right("01.6", "$expr size guard, copied order", lambda lab: _customer(lab, add_address=address_expr_guard,
                                                                          place_order=order_copied)),
    Right("01.6", "$not $size guard", lambda lab: _customer(lab, add_address=address_not_size_guard)),
    Right("01.6", "compare-and-set, tried again on a conflict",
          lambda lab: _customer(lab, add_address=address_compare_and_set_retried)),
    Right("01.6", "a read first, then the guarded update (meets the race and keeps the bound)",
          lambda lab: _customer(lab, add_address=address_reads_then_guarded_update)),
]


@pytest.mark.parametrize("case", WRONG, ids=str)
def test_wrong(make_lab, case):
    check_wrong(make_lab, case)


@pytest.mark.parametrize("case", RIGHT, ids=str)
def test_right(make_lab, case):
    check_right(make_lab, case)


@pytest.fixture
def lab(make_lab):
    return make_lab("01")


def test_reference_solutions(lab):
    namespace = solution(lab, 1, 2, 3, 4, 5, 6)
    for number in range(1, 7):
        assert_correct(lab.exercise(number), namespace)


def test_not_attempted(lab):
    assert_not_attempted(lab.q1, {"kettle": ____})
    assert_not_attempted(lab.q2, {"search_page": ____})
    assert_not_attempted(lab.q2, {"search_page": lambda *args, **kwargs: ____})
    assert_not_attempted(lab.q3, {"create_catalog_indexes": ____})
    assert_not_attempted(lab.q3, {"create_catalog_indexes": lambda products: ____})
    assert_not_attempted(lab.q4, {"update_price": ____})
    assert_not_attempted(lab.q5, {"plan_predictions": ____})
    right = solution(lab, 6)
    assert_not_attempted(lab.q6, {**right, "place_order": ____})
    assert_not_attempted(lab.q6, {name: ____ for name in right})
