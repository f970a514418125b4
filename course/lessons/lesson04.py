"""Lab 04, the schema design patterns: exercises and their checks.

Each check seeds a scratch database, calls the learner's write functions many
times (a few hundred writes at most) and inspects what the collections hold.
"""

from __future__ import annotations

import datetime
from typing import Any

from course.capabilities import Capability
from course.datasets_patterns import (catalog_items, customers, new_orders, products, reviews_for,
                                      stock_events, versioned_orders)
from course.exercise import Exercise, Incorrect, hidden, visible
from course.recording import RecordingDatabase

TITLE = "Schema design patterns"
SLUG = "patterns"

RECENT_REVIEWS = 10  #: subset: reviews kept in the product
BUCKET_CAP = 50  #: bucket: events per bucket document
FOLLOWER_THRESHOLD = 50  #: outlier: followers embedded before overflowing
EXTRA_PAGE = 100  #: outlier: followers per overflow document
DAY = datetime.datetime(2026, 10, 8)


def _scratch(lab, **collections) -> Any:
    db = lab.scratch()
    for name, documents in collections.items():
        if documents:
            db[name].insert_many(documents)
    return db


def _strip(documents) -> list[dict]:
    return [dict(sorted(d.items())) for d in documents]


# ---------------------------------------------------------------------------
class Subset(Exercise):
    id = "04.1"
    title = "Subset: the 10 newest reviews in the product, all of them in reviews"
    answers = ("add_review",)
    hints = (
        "Two writes: store the whole review in db.reviews, then push its summary into the product.",
        "$push with $each: [summary], $position: 0 and $slice: 10 keeps the 10 newest, newest first.",
        "For a safe retry: upsert the review by its _id, and push only if the product does not hold it yet "
        "(filter on 'recentReviews.reviewId': {'$ne': review id}).",
    )
    solution_code = """
def add_review(db, review):
    \"\"\"Store a review in db.reviews and keep the product's 10 newest; safe to retry.\"\"\"
    db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
    summary = {"reviewId": review["_id"], "stars": review["stars"], "text": review["text"], "at": review["at"]}
    db.products.update_one(
        {"_id": review["productId"], "recentReviews.reviewId": {"$ne": review["_id"]}},
        {"$push": {"recentReviews": {"$each": [summary], "$position": 0, "$slice": RECENT_REVIEWS}}},
    )
"""

    def _reviewed(self, answer, product_id, n):
        db = _scratch(self.lab, products=products())
        reviews = reviews_for(product_id, n)
        for review in reviews:
            self.call("add_review", answer.add_review, db, dict(review))
        return db, reviews

    def _check_product(self, db, product_id, reviews):
        product = db.products.find_one({"_id": product_id})
        held = product.get("recentReviews")
        if not isinstance(held, list):
            raise Incorrect("the product should hold its recent reviews in a list field recentReviews")
        ids = [r.get("reviewId") for r in held if isinstance(r, dict)]
        newest = [r["_id"] for r in reversed(reviews)][:RECENT_REVIEWS]
        if len(held) > RECENT_REVIEWS:
            raise Incorrect(f"after {len(reviews)} reviews the product holds {len(held)}: "
                            f"cap the array at {RECENT_REVIEWS} with $slice")
        if sorted(ids) != sorted(newest):
            raise Incorrect(f"after {len(reviews)} reviews the product should hold the {min(len(reviews), 10)} "
                            f"newest (ids {sorted(newest)}), it holds {ids}")
        if ids != newest:
            raise Incorrect(f"recentReviews should be newest first ({newest}), got {ids}: push at $position 0")
        stored = db.reviews.count_documents({"productId": product_id})
        if stored != len(reviews):
            raise Incorrect(f"db.reviews should hold all {len(reviews)} reviews of product {product_id}, "
                            f"it holds {stored}")

    @visible(points=1)
    def three_reviews(self, answer):
        """Three reviews: all in the product (newest first) and all in reviews"""
        db, reviews = self._reviewed(answer, 3, 3)
        self._check_product(db, 3, reviews)
        summary = db.products.find_one({"_id": 3})["recentReviews"][0]
        if summary.get("stars") != reviews[-1]["stars"] or summary.get("at") != reviews[-1]["at"]:
            raise Incorrect("each summary in recentReviews needs reviewId, stars, text and at of the review")

    @hidden(points=2)
    def capped_at_ten(self, answer):
        """After 25 reviews the product holds exactly the 10 newest in order; reviews holds all 25"""
        db, reviews = self._reviewed(answer, 7, 25)
        self._check_product(db, 7, reviews)
        others = db.products.count_documents({"_id": {"$ne": 7}, "recentReviews.0": {"$exists": True}})
        if others:
            raise Incorrect("reviews of product 7 ended up in other products")

    @hidden(points=2)
    def retry_changes_nothing(self, answer):
        """Sending the newest review again (a retry) changes neither collection"""
        db, reviews = self._reviewed(answer, 5, 12)
        before = (_strip(db.products.find({"_id": 5})), _strip(db.reviews.find({}).sort("_id", 1)))
        self.call("add_review", answer.add_review, db, dict(reviews[-1]))
        after = (_strip(db.products.find({"_id": 5})), _strip(db.reviews.find({}).sort("_id", 1)))
        if after != before:
            raise Incorrect("retrying the newest review changed the data: a retried write must change nothing "
                            "(upsert the review by _id; push only if the product does not hold it)")


# ---------------------------------------------------------------------------
COPIED = ("_id", "name", "phone")


class ExtendedReference(Exercise):
    id = "04.2"
    title = "Extended reference: copy the customer's name and phone, and keep them in sync"
    answers = ("place_order", "change_phone")
    hints = (
        "place_order reads the customer once and embeds {_id, name, phone}: the fields an order screen shows "
        "and that rarely change.",
        "loyaltyPoints and lastSeenAt change all the time: copying them makes stale copies. Leave them out.",
        "change_phone updates the customer, then update_many on db.orders filtered by 'customer._id'; create an "
        "index on 'customer._id' there (create_index does nothing when it exists).",
    )
    solution_code = """
def place_order(db, order_id, customer_id, items):
    \"\"\"Insert an order that embeds the customer's _id, name and phone.\"\"\"
    customer = db.customers.find_one({"_id": customer_id}, {"name": 1, "phone": 1})
    if customer is None:
        raise ValueError(f"no customer {customer_id}")
    db.orders.insert_one({
        "_id": order_id,
        "customer": {"_id": customer_id, "name": customer["name"], "phone": customer["phone"]},
        "items": items,
        "status": "PLACED",
    })


def change_phone(db, customer_id, phone):
    \"\"\"Change a customer's phone and every copy of it in their orders; safe to repeat.\"\"\"
    db.orders.create_index("customer._id")
    db.customers.update_one({"_id": customer_id}, {"$set": {"phone": phone}})
    db.orders.update_many({"customer._id": customer_id}, {"$set": {"customer.phone": phone}})
"""

    def _placed(self, answer):
        db = _scratch(self.lab, customers=customers())
        for order_id, customer_id in enumerate((1, 2, 1, 3, 1), start=100):
            self.call("place_order", answer.place_order, db, order_id, customer_id, [{"sku": "SKU-001", "qty": 1}])
        return db

    @visible(points=2)
    def copies_the_right_fields(self, answer):
        """An order embeds exactly the customer's _id, name and phone"""
        db = self._placed(answer)
        order = db.orders.find_one({"_id": 101})
        if order is None:
            raise Incorrect("place_order(db, 101, 2, items) should insert order 101 into db.orders")
        copy = order.get("customer")
        if not isinstance(copy, dict):
            raise Incorrect("the order should embed the customer as a sub-document 'customer'")
        profile = db.customers.find_one({"_id": 2})
        volatile = sorted(set(copy) & {"loyaltyPoints", "lastSeenAt", "stats", "email"})
        if volatile:
            raise Incorrect(f"the order copies {', '.join(volatile)}: copy only what the order screen reads and "
                            "what rarely changes (name, phone); the rest goes stale")
        if copy != {k: profile[k] for k in COPIED}:
            raise Incorrect(f"order.customer should be {{_id, name, phone}} of customer 2, got {copy}")

    @visible(points=2)
    def sync_reaches_every_copy(self, answer):
        """A phone change reaches every order of that customer and no other"""
        db = self._placed(answer)
        other = _strip(db.orders.find({"customer._id": {"$ne": 1}}).sort("_id", 1))
        self.call("change_phone", answer.change_phone, db, 1, "0999000111")
        if db.customers.find_one({"_id": 1}).get("phone") != "0999000111":
            raise Incorrect("change_phone should change the customer's own phone too")
        stale = [o["_id"] for o in db.orders.find({"customer._id": 1}) if o["customer"].get("phone") != "0999000111"]
        if stale:
            raise Incorrect(f"orders {stale} of customer 1 still show the old phone: update every copy")
        if _strip(db.orders.find({"customer._id": {"$ne": 1}}).sort("_id", 1)) != other:
            raise Incorrect("changing customer 1's phone changed other customers' orders")

    @hidden(points=1)
    def sync_is_idempotent_and_indexed(self, answer):
        """Repeating the sync changes nothing, and it finds the orders through an index on customer._id"""
        db = self._placed(answer)
        self.call("change_phone", answer.change_phone, db, 1, "0999000222")
        once = (_strip(db.orders.find().sort("_id", 1)), _strip(db.customers.find().sort("_id", 1)))
        self.call("change_phone", answer.change_phone, db, 1, "0999000222")
        if (_strip(db.orders.find().sort("_id", 1)), _strip(db.customers.find().sort("_id", 1))) != once:
            raise Incorrect("running the same phone change twice should leave the data as after the first")
        keys = [list(i["key"])[0] if not isinstance(i["key"], list) else i["key"][0][0]
                for i in db.orders.index_information().values()]
        if "customer._id" not in keys:
            raise Incorrect("the sync scans every order: create an index on 'customer._id'")


# ---------------------------------------------------------------------------
def _totals(orders) -> dict:
    found: dict = {}
    for order in orders:
        count, spent = found.get(order["customerId"], (0, 0))
        found[order["customerId"]] = (count + 1, spent + sum(i["qty"] * i["unitPrice"] for i in order["items"]))
    return found


class Computed(Exercise):
    id = "04.3"
    title = "Computed: totals at write time, and a reconciliation job"
    answers = ("record_order", "reconcile")
    hints = (
        "record_order: total = sum of qty * unitPrice, stored in the order; then $inc the customer's "
        "stats.orderCount by 1 and stats.totalSpent by the total.",
        "reconcile: one aggregation groups db.orders by customerId ($sum: 1 and $sum: '$total').",
        "Compare each customer's stats with the recomputed values (a customer without orders should have 0 and 0), "
        "$set the right values where they differ, and return the sorted list of the ids you fixed.",
    )
    solution_code = """
def record_order(db, order):
    \"\"\"Insert an order with its total computed now, and count it in the customer's stats.\"\"\"
    total = sum(item["qty"] * item["unitPrice"] for item in order["items"])
    db.orders.insert_one({**order, "total": total})
    db.customers.update_one(
        {"_id": order["customerId"]},
        {"$inc": {"stats.orderCount": 1, "stats.totalSpent": total}},
    )


def reconcile(db):
    \"\"\"Recompute every customer's stats from the orders, fix the ones that drifted, return their ids.\"\"\"
    truth = {
        row["_id"]: {"orderCount": row["orderCount"], "totalSpent": row["totalSpent"]}
        for row in db.orders.aggregate([
            {"$group": {"_id": "$customerId", "orderCount": {"$sum": 1}, "totalSpent": {"$sum": "$total"}}}
        ])
    }
    drifted = []
    for customer in db.customers.find({}, {"stats": 1}):
        right = truth.get(customer["_id"], {"orderCount": 0, "totalSpent": 0})
        if customer.get("stats") != right:
            db.customers.update_one({"_id": customer["_id"]}, {"$set": {"stats": right}})
            drifted.append(customer["_id"])
    return sorted(drifted)
"""

    def _recorded(self, answer, n):
        db = _scratch(self.lab, customers=customers(8))
        orders = new_orders(n, list(range(1, 9)))
        for order in orders:
            self.call("record_order", answer.record_order, db, dict(order))
        return db, orders

    def _check_stats(self, db, orders):
        for customer_id, (count, spent) in sorted(_totals(orders).items()):
            stats = db.customers.find_one({"_id": customer_id}).get("stats", {})
            if stats.get("orderCount") != count or stats.get("totalSpent") != spent:
                raise Incorrect(f"customer {customer_id} placed {count} orders worth {spent}, but stats say "
                                f"{stats.get('orderCount')} orders worth {stats.get('totalSpent')}")

    @visible(points=1)
    def totals_at_write_time(self, answer):
        """Each order stores its total, and the customer's stats count it"""
        db, orders = self._recorded(answer, 6)
        for order in orders:
            stored = db.orders.find_one({"_id": order["_id"]})
            want = sum(i["qty"] * i["unitPrice"] for i in order["items"])
            if stored is None or stored.get("total") != want:
                raise Incorrect(f"order {order['_id']} should store total {want} (sum of qty * unitPrice), "
                                f"found {None if stored is None else stored.get('total')}")
        self._check_stats(db, orders)
        drifted = self.call("reconcile", answer.reconcile, db)
        if list(drifted) != []:
            raise Incorrect(f"every write kept the stats right, but reconcile reported {drifted}")

    @hidden(points=1)
    def many_orders(self, answer):
        """Sixty orders over eight customers: every customer's stats match the orders"""
        db, orders = self._recorded(answer, 60)
        self._check_stats(db, orders)

    @hidden(points=2)
    def reconcile_finds_the_skipped_inc(self, answer):
        """A write that skipped the $inc is found and fixed; a second run finds nothing"""
        db, orders = self._recorded(answer, 30)
        first = self.call("reconcile", answer.reconcile, db)
        if list(first) != []:
            raise Incorrect(f"nothing drifted yet, but reconcile reported {first}")
        skipped = {"_id": 999, "customerId": 3, "items": [{"sku": "SKU-001", "qty": 2, "unitPrice": 50_000}],
                   "status": "PLACED", "total": 100_000}
        db.orders.insert_one(skipped)  # a code path that forgot the $inc
        db.customers.update_one({"_id": 6}, {"$inc": {"stats.totalSpent": 1}})  # a bad $inc
        found = self.call("reconcile", answer.reconcile, db)
        if sorted(found) != [3, 6]:
            raise Incorrect(f"customers 3 (an order without its $inc) and 6 (a wrong $inc) drifted; "
                            f"reconcile reported {found}")
        self._check_stats(db, orders + [skipped])
        again = self.call("reconcile", answer.reconcile, db)
        if list(again) != []:
            raise Incorrect(f"after fixing, a second reconcile should report nothing, got {again}")


# ---------------------------------------------------------------------------
class Bucket(Exercise):
    id = "04.4"
    title = "Bucket: stock events in capped daily buckets with their sums"
    answers = ("record_stock_event", "create_bucket_index")
    hints = (
        "One update_one with upsert=True: filter on tenantId, productId, day and count < BUCKET_CAP.",
        "$push the event, and $inc count by 1 and sumIn or sumOut by the quantity (the other by 0).",
        "When the newest bucket is full the filter matches nothing, so the upsert creates the next bucket. "
        "The index: tenantId, productId, day.",
    )
    solution_code = """
def record_stock_event(db, tenant_id, product_id, day, event):
    \"\"\"Add one stock event to the product's open bucket for that day, opening a new one when full.\"\"\"
    incoming = event["qty"] if event["type"] == "IN" else 0
    outgoing = event["qty"] if event["type"] == "OUT" else 0
    db.stock_events.update_one(
        {"tenantId": tenant_id, "productId": product_id, "day": day, "count": {"$lt": BUCKET_CAP}},
        {"$push": {"events": event}, "$inc": {"count": 1, "sumIn": incoming, "sumOut": outgoing}},
        upsert=True,
    )


def create_bucket_index(db):
    \"\"\"The index the bucket upsert's filter needs.\"\"\"
    db.stock_events.create_index([("tenantId", 1), ("productId", 1), ("day", 1)])
"""

    def _feed(self, answer, db, product_id, events):
        for event in events:
            self.call("record_stock_event", answer.record_stock_event, db, "t1", product_id, DAY, dict(event))

    def _check_buckets(self, db, product_id, events, expected_counts=None):
        buckets = list(db.stock_events.find({"productId": product_id}))
        counts = sorted((b.get("count") for b in buckets), key=lambda c: -(c or 0))
        if any(not isinstance(b.get("events"), list) for b in buckets):
            raise Incorrect("each bucket should hold its events in a list field 'events'")
        stored = sum(len(b["events"]) for b in buckets)
        if stored != len(events):
            raise Incorrect(f"{len(events)} events recorded, but the buckets hold {stored}")
        if any(len(b["events"]) > BUCKET_CAP for b in buckets):
            raise Incorrect(f"a bucket holds {max(len(b['events']) for b in buckets)} events: "
                            f"never more than {BUCKET_CAP}")
        for bucket in buckets:
            if bucket.get("count") != len(bucket["events"]):
                raise Incorrect(f"a bucket's count says {bucket.get('count')} but it holds {len(bucket['events'])}")
            sum_in = sum(e["qty"] for e in bucket["events"] if e["type"] == "IN")
            sum_out = sum(e["qty"] for e in bucket["events"] if e["type"] == "OUT")
            if bucket.get("sumIn", 0) != sum_in or bucket.get("sumOut", 0) != sum_out:
                raise Incorrect(f"a bucket's sums say in {bucket.get('sumIn')} / out {bucket.get('sumOut')}, but its "
                                f"events add up to {sum_in} / {sum_out}: $inc them with each event")
            if bucket.get("tenantId") != "t1" or bucket.get("day") != DAY:
                raise Incorrect("each bucket should carry its tenantId, productId and day")
        if expected_counts is not None and counts != expected_counts:
            raise Incorrect(f"buckets should fill up in turn: expected counts {expected_counts}, got {counts}")

    @visible(points=1)
    def fills_one_bucket(self, answer):
        """Twelve events go into one bucket with its count and sums"""
        db = _scratch(self.lab)
        self.call("create_bucket_index", answer.create_bucket_index, db)
        events = stock_events(12)
        self._feed(answer, db, 1, events)
        self._check_buckets(db, 1, events, [12])

    @hidden(points=2)
    def opens_a_new_bucket_when_full(self, answer):
        """120 events make buckets of 50, 50 and 20, each with its own sums"""
        db = _scratch(self.lab)
        events = stock_events(120, seed=5)
        self._feed(answer, db, 2, events)
        self._check_buckets(db, 2, events, [50, 50, 20])

    @hidden(points=1)
    def racing_upserts_leave_partial_buckets(self, answer):
        """With two partly full buckets (two writers raced), no bucket ever exceeds the cap"""
        db = _scratch(self.lab)
        early = stock_events(58, seed=6)
        db.stock_events.insert_many([
            {"tenantId": "t1", "productId": 3, "day": DAY, "count": 48, "events": early[:48],
             "sumIn": sum(e["qty"] for e in early[:48] if e["type"] == "IN"),
             "sumOut": sum(e["qty"] for e in early[:48] if e["type"] == "OUT")},
            {"tenantId": "t1", "productId": 3, "day": DAY, "count": 10, "events": early[48:],
             "sumIn": sum(e["qty"] for e in early[48:] if e["type"] == "IN"),
             "sumOut": sum(e["qty"] for e in early[48:] if e["type"] == "OUT")},
        ])
        later = stock_events(60, seed=7)
        self._feed(answer, db, 3, later)
        self._check_buckets(db, 3, early + later)

    @hidden(points=1)
    def the_upsert_has_its_index(self, answer):
        """An index on tenantId, productId and day serves the upsert's filter"""
        db = _scratch(self.lab)
        self.call("create_bucket_index", answer.create_bucket_index, db)
        prefixes = []
        for info in db.stock_events.index_information().values():
            keys = [k for k, _ in (info["key"].items() if isinstance(info["key"], dict) else info["key"])]
            prefixes.append(set(keys[:3]))
        if {"tenantId", "productId", "day"} not in prefixes:
            raise Incorrect("create an index that starts with tenantId, productId and day: the upsert filters on "
                            "them every time")


# ---------------------------------------------------------------------------
class Outlier(Exercise):
    id = "04.5"
    title = "Outlier: embed 50 followers, overflow the rest behind a flag"
    answers = ("add_follower", "follower_count")
    hints = (
        "Try the embedded push first, with a filter that matches only while there is room: "
        f"'followers.{FOLLOWER_THRESHOLD - 1}': {{'$exists': False}}.",
        "If that matched nothing, set hasExtras: True on the product and upsert into "
        "db.product_followers_extra a page with count < EXTRA_PAGE ($push the follower, $inc count).",
        "follower_count reads the product; only when hasExtras is true does it add the pages' counts.",
    )
    solution_code = """
def add_follower(db, product_id, user_id):
    \"\"\"Embed the follower while there is room; past the threshold flag the product and overflow.\"\"\"
    embedded = db.products.update_one(
        {"_id": product_id, f"followers.{FOLLOWER_THRESHOLD - 1}": {"$exists": False}},
        {"$push": {"followers": user_id}},
    )
    if embedded.modified_count == 1:
        return
    db.products.update_one({"_id": product_id}, {"$set": {"hasExtras": True}})
    db.product_followers_extra.update_one(
        {"productId": product_id, "count": {"$lt": EXTRA_PAGE}},
        {"$push": {"followers": user_id}, "$inc": {"count": 1}},
        upsert=True,
    )


def follower_count(db, product_id):
    \"\"\"Followers in both places; the overflow is read only when the flag says so.\"\"\"
    product = db.products.find_one({"_id": product_id}, {"followers": 1, "hasExtras": 1})
    count = len(product.get("followers", []))
    if product.get("hasExtras"):
        pages = db.product_followers_extra.find({"productId": product_id}, {"count": 1})
        count += sum(page["count"] for page in pages)
    return count
"""

    def _follow(self, answer, db, product_id, users):
        for user in users:
            self.call("add_follower", answer.add_follower, db, product_id, user)

    def _count(self, answer, db, product_id):
        return self.call("follower_count", answer.follower_count, db, product_id)

    @visible(points=1)
    def small_products_embed(self, answer):
        """Five followers are embedded, no flag, and the count is 5"""
        db = _scratch(self.lab, products=products(5))
        self._follow(answer, db, 2, [f"u{k}" for k in range(5)])
        product = db.products.find_one({"_id": 2})
        if product.get("followers") != [f"u{k}" for k in range(5)]:
            raise Incorrect(f"product 2 should embed its 5 followers in order, got {product.get('followers')}")
        if product.get("hasExtras"):
            raise Incorrect("a product with 5 followers is not an outlier: do not set hasExtras")
        if db.product_followers_extra.count_documents({}):
            raise Incorrect("nothing should overflow below the threshold")
        if self._count(answer, db, 2) != 5:
            raise Incorrect("follower_count(db, 2) should be 5")

    @hidden(points=2)
    def flag_exactly_at_the_threshold(self, answer):
        """The flag appears with follower 51, not before; the embedded list stays at 50"""
        db = _scratch(self.lab, products=products(5))
        self._follow(answer, db, 1, [f"u{k}" for k in range(FOLLOWER_THRESHOLD)])
        product = db.products.find_one({"_id": 1})
        if product.get("hasExtras") or db.product_followers_extra.count_documents({}):
            raise Incorrect(f"with exactly {FOLLOWER_THRESHOLD} followers nothing overflows and hasExtras is unset")
        self._follow(answer, db, 1, ["u-next"])
        product = db.products.find_one({"_id": 1})
        if product.get("hasExtras") is not True:
            raise Incorrect(f"follower {FOLLOWER_THRESHOLD + 1} overflows: set hasExtras: true on the product")
        if len(product.get("followers", [])) != FOLLOWER_THRESHOLD:
            raise Incorrect(f"the product should keep exactly {FOLLOWER_THRESHOLD} embedded followers, "
                            f"it holds {len(product.get('followers', []))}")

    @hidden(points=2)
    def totals_count_both_places(self, answer):
        """260 followers: pages of at most 100, and the count merges both places"""
        db = _scratch(self.lab, products=products(5))
        self._follow(answer, db, 4, [f"u{k}" for k in range(260)])
        pages = list(db.product_followers_extra.find({"productId": 4}))
        if any(len(p.get("followers", [])) > EXTRA_PAGE for p in pages):
            raise Incorrect(f"an overflow document holds more than {EXTRA_PAGE} followers")
        overflowed = sum(len(p.get("followers", [])) for p in pages)
        if overflowed != 260 - FOLLOWER_THRESHOLD:
            raise Incorrect(f"{260 - FOLLOWER_THRESHOLD} followers should have overflowed, found {overflowed}")
        counted = self._count(answer, db, 4)
        if counted != 260:
            raise Incorrect(f"follower_count should add both places: 260, got {counted}")

    @hidden(points=1)
    def reads_honour_the_flag(self, answer):
        """Counting a product without the flag never reads the overflow collection"""
        db = _scratch(self.lab, products=products(5))
        self._follow(answer, db, 3, ["a", "b", "c"])
        watched = RecordingDatabase(db)
        if self._count(answer, watched, 3) != 3:
            raise Incorrect("follower_count(db, 3) should be 3")
        if watched.collection("product_followers_extra").reads():
            raise Incorrect("follower_count read product_followers_extra for a product without hasExtras: "
                            "check the flag first, so the 99% pay one query")


# ---------------------------------------------------------------------------
PHONE_SPECS = {"bsonType": "object", "required": ["ramGb", "storageGb"],
               "properties": {"ramGb": {"bsonType": "int"}, "storageGb": {"bsonType": "int"}}}


def _index_keys(collection) -> dict[str, list[str]]:
    found = {}
    for name, info in collection.index_information().items():
        key = info["key"]
        found[name] = [k for k, _ in (key.items() if isinstance(key, dict) else key)]
    return found


class Polymorphic(Exercise):
    id = "04.6"
    title = "Polymorphic: one catalog, shared indexes, a partial index and a validator per kind"
    answers = ("create_catalog_indexes", "catalog_validator")
    hints = (
        "The shared search reads by tenantId and sorts by name: one index [('tenantId', 1), ('name', 1)].",
        "Only books have specs.isbn: create_indexes([IndexModel([('specs.isbn', 1)], "
        "partialFilterExpression={'kind': 'book'})]).",
        "The validator: {'$jsonSchema': {'bsonType': 'object', 'required': [...], 'oneOf': [one schema per kind]}}, "
        "each kind's schema pins kind with enum and requires its own specs fields.",
    )
    solution_code = """
def create_catalog_indexes(items):
    \"\"\"The shared search index and a partial index for the one kind that has an ISBN.\"\"\"
    items.create_index([("tenantId", 1), ("name", 1)])
    items.create_indexes([IndexModel([("specs.isbn", 1)], partialFilterExpression={"kind": "book"})])


def kind_schema(kind, required, properties):
    \"\"\"The $jsonSchema branch for one kind: its discriminator value and its own specs.\"\"\"
    return {
        "properties": {
            "kind": {"enum": [kind]},
            "specs": {"bsonType": "object", "required": required, "properties": properties},
        }
    }


catalog_validator = {"$jsonSchema": {
    "bsonType": "object",
    "required": ["tenantId", "kind", "name", "price", "specs"],
    "oneOf": [
        kind_schema("phone", ["ramGb", "storageGb"], {"ramGb": {"bsonType": "int"}, "storageGb": {"bsonType": "int"}}),
        kind_schema("shirt", ["sizes"], {"sizes": {"bsonType": "array"}}),
        kind_schema("book", ["isbn"], {"isbn": {"bsonType": "string"}}),
    ],
}}
"""

    def _indexed(self, answer):
        db = _scratch(self.lab, items=catalog_items())
        self.call("create_catalog_indexes", answer.create_catalog_indexes, db["items"])
        return db["items"]

    @visible(points=1)
    def shared_index(self, answer):
        """One index serves the shared search: tenantId, then name"""
        keys = _index_keys(self._indexed(answer))
        if not any(k[:2] == ["tenantId", "name"] for k in keys.values()):
            raise Incorrect("the search over every kind filters on tenantId and sorts by name: "
                            "index [('tenantId', 1), ('name', 1)]")

    @hidden(points=2, requires=(Capability.PARTIAL_INDEXES,))
    def partial_index_for_books(self, answer):
        """The ISBN index is partial: it holds the books only"""
        items = self._indexed(answer)
        isbn = [info for info in items.index_information().values()
                if [k for k, _ in (info["key"].items() if isinstance(info["key"], dict) else info["key"])][:1]
                == ["specs.isbn"]]
        if not isbn:
            raise Incorrect("index specs.isbn: the book lookup by ISBN needs it")
        if isbn[0].get("partialFilterExpression") != {"kind": "book"}:
            raise Incorrect("the specs.isbn index should be partial, {'kind': 'book'}: phones and shirts have no "
                            "ISBN and should not take space in it")
        items.insert_many([{"_id": 100, "tenantId": "t1", "kind": "phone", "name": "P", "price": 1,
                            "specs": {"ramGb": 8, "storageGb": 128}},
                           {"_id": 101, "tenantId": "t1", "kind": "phone", "name": "Q", "price": 1,
                            "specs": {"ramGb": 8, "storageGb": 128}}])

    def _validated(self, answer):
        validator = self.expect_type("catalog_validator", answer.catalog_validator, dict,
                                     "{'$jsonSchema': {...}}")
        db = self.lab.scratch()
        db.create_collection("items", validator=validator)
        return db["items"]

    def _accepts(self, items, document) -> bool:
        from pymongo.errors import WriteError

        try:
            items.insert_one(dict(document))
        except WriteError as error:
            if error.code == 121:
                return False
            raise
        return True

    @visible(points=1, requires=(Capability.VALIDATORS,))
    def validator_accepts_every_kind(self, answer):
        """The validator accepts the seeded phones, shirts and books"""
        items = self._validated(answer)
        for item in catalog_items()[:6]:
            if not self._accepts(items, item):
                raise Incorrect(f"the validator rejected a valid {item['kind']}: {item}")

    @hidden(points=2, requires=(Capability.VALIDATORS,))
    def validator_rules_per_kind(self, answer):
        """Each kind must carry its own specs, and an unknown kind is refused"""
        items = self._validated(answer)
        base = {"tenantId": "t1", "name": "X", "price": 100_000}
        wrong = [
            ({**base, "_id": 201, "kind": "phone", "specs": {"isbn": "978-1"}}, "a phone without ramGb/storageGb"),
            ({**base, "_id": 202, "kind": "book", "specs": {"ramGb": 8, "storageGb": 128}}, "a book without isbn"),
            ({**base, "_id": 203, "kind": "toaster", "specs": {}}, "an unknown kind"),
            ({**base, "_id": 204, "kind": "shirt", "specs": {"material": "linen"}}, "a shirt without sizes"),
            ({"_id": 205, "kind": "book", "specs": {"isbn": "978-2"}}, "an item without tenantId, name and price"),
        ]
        for document, what in wrong:
            if self._accepts(items, document):
                raise Incorrect(f"the validator accepted {what}: each kind's branch must require its own specs")


# ---------------------------------------------------------------------------
class Versioning(Exercise):
    id = "04.7"
    title = "Schema versioning: read every live version, query every place a field can be"
    answers = ("phones_of", "find_by_phone")
    hints = (
        "A document without schemaVersion is version 1: customer.phone (a string, maybe missing). "
        "Version 2 has customer.phones (a list).",
        "phones_of returns a list in both cases, and raises ValueError for a version it does not know.",
        "find_by_phone: {'$or': [{'customer.phone': phone}, {'customer.phones': phone}]}, sorted by _id.",
    )
    solution_code = """
def phones_of(order):
    \"\"\"The order's phones as a list, whichever live version the order is in.\"\"\"
    version = order.get("schemaVersion", 1)
    if version == 1:
        phone = order["customer"].get("phone")
        return [phone] if phone else []
    if version == 2:
        return list(order["customer"].get("phones", []))
    raise ValueError(f"order {order.get('_id')} has schemaVersion {version}, which this code cannot read")


def find_by_phone(orders, phone):
    \"\"\"Orders with this phone, in both places it can be, in _id order.\"\"\"
    query = {"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}
    return list(orders.find(query).sort("_id", 1))
"""

    @visible(points=1)
    def reads_both_versions(self, answer):
        """phones_of reads a v1 and a v2 order"""
        orders = versioned_orders()
        for order in (orders[0], orders[6], orders[7]):
            got = self.call("phones_of", answer.phones_of, dict(order))
            want = ([order["customer"]["phone"]] if "schemaVersion" not in order
                    else order["customer"]["phones"])
            if list(got) != want:
                raise Incorrect(f"phones_of(order {order['_id']}, version {order.get('schemaVersion', 1)}) should be "
                                f"{want}, got {got}")

    @hidden(points=1)
    def odd_documents(self, answer):
        """A v1 order without a phone gives []; an unknown version fails loudly"""
        orders = versioned_orders()
        got = self.call("phones_of", answer.phones_of, dict(orders[4]))
        if list(got) != []:
            raise Incorrect(f"a v1 order without customer.phone has no phones: [] expected, got {got}")
        future = {"_id": 99, "schemaVersion": 3, "customer": {"contacts": [{"phone": "0900000000"}]}}
        try:
            answer.phones_of(future)
        except ValueError:
            return
        except Exception as error:
            raise Incorrect(f"for an unknown schemaVersion raise ValueError, not {type(error).__name__}") from None
        raise Incorrect("phones_of should raise ValueError for schemaVersion 3: guessing hides a reader that is "
                        "out of date")

    @visible(points=1)
    def query_finds_both_versions(self, answer):
        """find_by_phone finds the phone in a v1 and in a v2 order"""
        db = _scratch(self.lab, orders=versioned_orders())
        found = self.call("find_by_phone", answer.find_by_phone, db.orders, "0901234567")
        ids = [o.get("_id") for o in found]
        if ids != [2, 9]:
            missing = {2: "the v1 order 2 (customer.phone)", 9: "the v2 order 9 (customer.phones)"}
            lost = [missing[i] for i in (2, 9) if i not in ids]
            raise Incorrect(f"find_by_phone('0901234567') should give orders [2, 9], got {ids}"
                            + (f": it misses {' and '.join(lost)}" if lost else ""))

    @hidden(points=1)
    def every_phone_findable(self, answer):
        """Every phone of every order is found, and only its orders"""
        orders = versioned_orders()
        db = _scratch(self.lab, orders=orders)
        for order in orders:
            phones = ([order["customer"]["phone"]] if "phone" in order["customer"]
                      else order["customer"].get("phones", []))
            for phone in phones:
                want = sorted(o["_id"] for o in orders
                              if phone in ([o["customer"].get("phone")] + o["customer"].get("phones", [])))
                got = [o.get("_id") for o in self.call("find_by_phone", answer.find_by_phone, db.orders, phone)]
                if got != want:
                    raise Incorrect(f"find_by_phone({phone!r}) should give {want}, got {got}")


# ---------------------------------------------------------------------------
SELF_CHECK_CHOICES = {
    "projection_shrinks_working_set": ("yes", "no"),
    "inc_on_10mb_document_rewrites": ("4 bytes", "the field's page", "the whole document"),
    "outliers_at_40_percent": ("outlier", "subset or reference", "bucket"),
    "lazy_migration_phone_search": ("finds everything", "misses unmigrated orders", "raises an error"),
}
SELF_CHECK_ANSWERS = {
    "projection_shrinks_working_set": "no",
    "inc_on_10mb_document_rewrites": "the whole document",
    "outliers_at_40_percent": "subset or reference",
    "lazy_migration_phone_search": "misses unmigrated orders",
}


class SelfCheck(Exercise):
    id = "04.8"
    title = "Self-check: four short answers"
    answers = ("self_check",)
    hints = (
        "Re-read the measurement lab: what does a projection cut, and what must the cache still hold?",
        "An outlier design is for a few exceptions; a lazy migration only changes documents it touches.",
    )
    solution_code = """
self_check = {
    "projection_shrinks_working_set": "no",
    "inc_on_10mb_document_rewrites": "the whole document",
    "outliers_at_40_percent": "subset or reference",
    "lazy_migration_phone_search": "misses unmigrated orders",
}
"""

    def _answers(self, answer) -> dict:
        given = self.expect_type("self_check", answer.self_check, dict, '{"projection_shrinks_working_set": "no", ...}')
        for key, choices in SELF_CHECK_CHOICES.items():
            if key not in given:
                raise Incorrect(f"self_check needs the key {key!r}")
            if given[key] not in choices:
                raise Incorrect(f"self_check[{key!r}] should be one of {list(choices)}, got {given[key]!r}")
        return given

    def _expect(self, given, key, why):
        if given[key] != SELF_CHECK_ANSWERS[key]:
            raise Incorrect(f"{key}: not {given[key]!r}. {why}")

    @visible(points=1)
    def measurement_questions(self, answer):
        """The two questions about the measurement lab"""
        given = self._answers(answer)
        self._expect(given, "projection_shrinks_working_set",
                     "Think of what the cache holds when only two fields are returned.")
        self._expect(given, "inc_on_10mb_document_rewrites",
                     "Think of what becomes dirty and what the next checkpoint writes.")

    @hidden(points=1)
    def pattern_questions(self, answer):
        """The questions about outliers and lazy migration"""
        given = self._answers(answer)
        self._expect(given, "outliers_at_40_percent", "When is an exception no longer an exception?")
        self._expect(given, "lazy_migration_phone_search", "Which orders does a lazy migration leave untouched?")


EXERCISES = (Subset, ExtendedReference, Computed, Bucket, Outlier, Polymorphic, Versioning, SelfCheck)
