"""Lab 02, embed or reference: exercises and their checks.

Every behavioural check runs the learner's functions against a freshly seeded
scratch database, with small data (the checks also run through mongoeco's
wire server), and some through a recording wrapper that sees how many writes
the learner's code made.
"""

from __future__ import annotations

from typing import Any

import bson

from course.datasets_orders import (KIND_COLLECTIONS, MAX_LINES, RECENT_REVIEWS, UNCLASSIFIED, customers,
                                    mixed_records, products, reviews, shop)
from course.exercise import Exercise, Incorrect, hidden, visible
from course.plans import plan_for
from course.recording import RecordingDatabase

TITLE = "Embed or reference"
SLUG = "embed-vs-reference"

COPIED_FIELDS = ("name", "phone")  #: customer fields copied into orders (customer_copy)


def _line(product_id: int, qty: int = 1, price_pence: int = 250) -> dict:
    return {"product_id": product_id, "name": f"Product {product_id}", "qty": qty, "price_pence": price_pence}


def _total(lines: list[dict]) -> int:
    return sum(line["qty"] * line["price_pence"] for line in lines)


def _long_arrays(db, limit: int) -> list[str]:
    """Names of fields (collection.field) holding an array longer than ``limit``, anywhere in ``db``."""
    found = []
    for name in db.list_collection_names():
        for doc in db[name].find():
            for field, value in doc.items():
                if isinstance(value, list) and len(value) > limit:
                    found.append(f"{name}.{field}")
    return sorted(set(found))


# ---------------------------------------------------------------------------
class OrdersWithLines(Exercise):
    id = "02.1"
    title = "Orders embed their lines, customers do not embed their orders"
    answers = ("place_order", "add_line")
    hints = (
        "An order is read with its lines: embed them as a list in the order document, and store the order "
        "in db.orders with a customer_id. Never push anything into the customer.",
        f"Refuse (raise ValueError) an order with no line or more than MAX_LINES ({MAX_LINES}) lines, "
        "before writing anything.",
        "add_line is one update_one: the filter finds the order only while lines.<MAX_LINES - 1> does not "
        "exist, and the update both $push-es the line and $inc-s total_pence by qty * price_pence.",
    )
    solution_code = """
from course.sizes import insert_one_checked

MAX_LINES = 50

def place_order(db, customer_id, order_id, lines, placed_at):
    \"\"\"Store one order: its lines embedded (1 to MAX_LINES), its customer referenced.\"\"\"
    if not 1 <= len(lines) <= MAX_LINES:
        raise ValueError(f"an order holds 1 to {MAX_LINES} lines, not {len(lines)}")
    order = {
        "_id": order_id,
        "schema_version": 1,
        "customer_id": customer_id,
        "placed_at": placed_at,
        "lines": list(lines),
        "total_pence": sum(line["qty"] * line["price_pence"] for line in lines),
    }
    insert_one_checked(db.orders, order)
    return order_id

def add_line(db, order_id, line):
    \"\"\"Add a line and its amount to the total in one update; False if the order is full or missing.\"\"\"
    result = db.orders.update_one(
        {"_id": order_id, f"lines.{MAX_LINES - 1}": {"$exists": False}},
        {"$push": {"lines": line}, "$inc": {"total_pence": line["qty"] * line["price_pence"]}},
    )
    return result.modified_count == 1
"""

    def _database(self):
        db = self.lab.scratch()
        db.customers.insert_many(customers(5))
        return db

    def _place(self, answer, db, order_id, lines, customer_id=1, placed_at=10):
        return self.call("place_order", answer.place_order, db, customer_id, order_id, lines, placed_at)

    def _expect_refused(self, answer, db, lines, what):
        try:
            answer.place_order(db, 1, 777, lines, 5)
        except ValueError:
            pass
        except Exception as error:
            raise Incorrect(f"an order with {what} should raise ValueError, not {type(error).__name__}") from None
        else:
            raise Incorrect(f"place_order accepted an order with {what}: refuse it with ValueError")
        if db.orders.count_documents({"_id": 777}):
            raise Incorrect(f"the refused order with {what} was written anyway: check before writing")

    @visible(points=2)
    def one_order_document(self, answer):
        """The order is one document in orders: lines embedded, customer referenced, total computed"""
        db = self._database()
        lines = [_line(4, 2, 300), _line(9, 1, 1250), _line(2, 3, 99)]
        self._place(answer, db, 501, lines, customer_id=3, placed_at=42)
        order = db.orders.find_one({"_id": 501})
        if order is None:
            raise Incorrect("after place_order(db, 3, 501, ...), db.orders has no document with _id 501")
        if order.get("customer_id") != 3:
            raise Incorrect(f"the order should reference its customer with customer_id 3, found "
                            f"{order.get('customer_id')!r}")
        if order.get("lines") != lines:
            raise Incorrect("the order's lines should be embedded as given, in a 'lines' list")
        if order.get("total_pence") != _total(lines):
            raise Incorrect(f"total_pence should be the sum of qty * price_pence, {_total(lines)}, "
                            f"found {order.get('total_pence')!r}")
        if order.get("placed_at") != 42 or order.get("schema_version") != 1:
            raise Incorrect("the order should keep placed_at and carry schema_version 1")
        extra = sorted(set(db.list_collection_names()) - {"customers", "orders"})
        if extra:
            raise Incorrect(f"an order should be one document in orders, but it also wrote to {', '.join(extra)}")

    @visible(points=1)
    def bounded_lines(self, answer):
        """An order with no line, or more than MAX_LINES lines, is refused"""
        db = self._database()
        self._expect_refused(answer, db, [_line(k) for k in range(1, MAX_LINES + 2)], f"{MAX_LINES + 1} lines")
        self._expect_refused(answer, db, [], "no lines")

    @visible(points=1)
    def add_line_keeps_total(self, answer):
        """add_line adds the line and its amount to the total"""
        db = self._database()
        db.orders.insert_one({"_id": 8, "schema_version": 1, "customer_id": 2, "placed_at": 3,
                              "lines": [_line(1, 1, 500)], "total_pence": 500})
        returned = self.call("add_line", answer.add_line, db, 8, _line(6, 3, 120))
        order = db.orders.find_one({"_id": 8})
        if len(order.get("lines", [])) != 2 or order["lines"][-1]["product_id"] != 6:
            raise Incorrect("after add_line the order should hold its 2 lines, the new one last")
        if order.get("total_pence") != 860:
            raise Incorrect(f"after adding 3 x 120 to 500 the total should be 860, found {order.get('total_pence')!r}")
        if returned is not True:
            raise Incorrect(f"add_line should return True when the line was added, got {returned!r}")

    @hidden(points=2)
    def no_unbounded_array(self, answer):
        """Many orders later, the customer has not grown and no array anywhere passes MAX_LINES"""
        db = self._database()
        before = len(bson.encode(db.customers.find_one({"_id": 4})))
        for order_id in range(1, 121):
            self._place(answer, db, order_id, [_line(order_id % 7 + 1)], customer_id=4, placed_at=order_id)
        after = len(bson.encode(db.customers.find_one({"_id": 4})))
        if after != before:
            raise Incorrect(f"customer 4 went from {before} to {after} bytes while its orders were placed: "
                            "orders are unbounded, reference them instead of embedding")
        if db.orders.count_documents({"customer_id": 4}) != 120:
            raise Incorrect("120 orders placed for customer 4 should give 120 documents in orders")
        grown = _long_arrays(db, MAX_LINES)
        if grown:
            raise Incorrect(f"{', '.join(grown)} holds more than {MAX_LINES} items: no array may grow without bound")

    @hidden(points=2)
    def add_line_stops_at_the_bound(self, answer):
        """A full order refuses another line, and the total always matches the lines"""
        db = self._database()
        lines = [_line(k, 1, 100 + k) for k in range(1, MAX_LINES - 1)]
        db.orders.insert_one({"_id": 9, "schema_version": 1, "customer_id": 1, "placed_at": 1,
                              "lines": lines, "total_pence": _total(lines)})
        results = [self.call("add_line", answer.add_line, db, 9, _line(900 + k, 2, 10)) for k in range(5)]
        order = db.orders.find_one({"_id": 9})
        if len(order["lines"]) != MAX_LINES:
            raise Incorrect(f"after adding 5 lines to an order of {MAX_LINES - 2}, it holds {len(order['lines'])}: "
                            f"it must stop at {MAX_LINES}")
        if results != [True, True, False, False, False]:
            raise Incorrect(f"add_line should return True while there is room and False after, got {results}")
        if order["total_pence"] != _total(order["lines"]):
            raise Incorrect("total_pence no longer matches the lines: a refused line must not change the total")
        if self.call("add_line", answer.add_line, db, 12345, _line(1)) is not False \
                or db.orders.count_documents({"_id": 12345}):
            raise Incorrect("add_line on an unknown order should return False and create nothing")

    @hidden(points=1)
    def add_line_is_one_write(self, answer):
        """add_line changes the line and the total in a single update"""
        db = self._database()
        db.orders.insert_one({"_id": 5, "schema_version": 1, "customer_id": 1, "placed_at": 1,
                              "lines": [_line(1)], "total_pence": 250})
        recording = RecordingDatabase(db)
        self.call("add_line", answer.add_line, recording, 5, _line(2, 2, 50))
        writes = [(c, m) for c, m, _ in recording.writes()]
        if writes not in ([("orders", "update_one")], [("orders", "find_one_and_update")]):
            raise Incorrect(f"add_line made these writes: {writes}; the line and the total must change together "
                            "in one update_one, so no reader ever sees one without the other")


# ---------------------------------------------------------------------------
class RecentReviews(Exercise):
    id = "02.2"
    title = "Make the embed safe: a bounded copy of the newest reviews"
    answers = ("add_review",)
    hints = (
        "Reviews grow without bound: every review is its own document in db.reviews, with its product_id.",
        f"The product embeds only the {RECENT_REVIEWS} newest: one update_one with $push and the modifiers "
        "$each, $position 0 (newest first) and $slice.",
        "Never read the product, change the list in Python and write it back: two concurrent reviews would "
        "lose one of them.",
    )
    solution_code = """
RECENT_REVIEWS = 10

def add_review(db, product_id, review):
    \"\"\"Store the review; keep the product's RECENT_REVIEWS newest reviews embedded, newest first.\"\"\"
    review = {**review, "product_id": product_id}
    db.reviews.insert_one(review)
    db.products.update_one(
        {"_id": product_id},
        {"$push": {"recent_reviews": {"$each": [review], "$position": 0, "$slice": RECENT_REVIEWS}}},
    )
"""

    def _database(self):
        db = self.lab.scratch()
        db.products.insert_many(products(4))
        return db

    def _add(self, answer, db, product_id, count, first_id=1):
        added = reviews(product_id, count, first_id=first_id)
        for review in added:
            self.call("add_review", answer.add_review, db, product_id,
                      {k: v for k, v in review.items() if k != "product_id"})
        return added

    def _expect_recent(self, db, product_id, added, what):
        product = db.products.find_one({"_id": product_id})
        recent = product.get("recent_reviews")
        if not isinstance(recent, list):
            raise Incorrect(f"product {product_id} should embed a recent_reviews list")
        want = [r["_id"] for r in reversed(added)][:RECENT_REVIEWS]
        got = [r.get("_id") if isinstance(r, dict) else r for r in recent]
        if len(got) > RECENT_REVIEWS:
            raise Incorrect(f"{what}, product {product_id} embeds {len(got)} reviews: keep only the "
                            f"{RECENT_REVIEWS} newest, or the product grows with every review")
        if got != want:
            raise Incorrect(f"{what}, recent_reviews should hold review ids {want} (newest first), got {got}")
        stored = db.reviews.count_documents({"product_id": product_id})
        if stored != len(added):
            raise Incorrect(f"{what}, db.reviews should hold all {len(added)} reviews of product {product_id}, "
                            f"found {stored}")

    @visible(points=1)
    def keeps_every_review(self, answer):
        """Every review is stored, and the product embeds them newest first"""
        db = self._database()
        added = self._add(answer, db, 1, 3)
        self._expect_recent(db, 1, added, "after 3 reviews")

    @visible(points=1)
    def embeds_only_the_newest(self, answer):
        """Past the bound, the product embeds only the newest reviews"""
        db = self._database()
        added = self._add(answer, db, 1, RECENT_REVIEWS + 5)
        self._expect_recent(db, 1, added, f"after {RECENT_REVIEWS + 5} reviews")

    @hidden(points=2)
    def grows_far_past_the_bound(self, answer):
        """Ten times the bound: the product stays small, every review is kept"""
        db = self._database()
        before = len(bson.encode(db.products.find_one({"_id": 2})))
        added = self._add(answer, db, 2, 10 * RECENT_REVIEWS)
        self._expect_recent(db, 2, added, f"after {10 * RECENT_REVIEWS} reviews")
        size = len(bson.encode(db.products.find_one({"_id": 2})))
        ceiling = before + RECENT_REVIEWS * 200
        if size > ceiling:
            raise Incorrect(f"product 2 is {size} bytes after {10 * RECENT_REVIEWS} reviews: the embedded copies "
                            f"should be small and bounded (under {ceiling} bytes)")

    @hidden(points=1)
    def other_products_untouched(self, answer):
        """Reviews of one product change no other product"""
        db = self._database()
        others = {p["_id"]: p for p in db.products.find({"_id": {"$ne": 3}})}
        self._add(answer, db, 3, 4)
        for product_id, product in others.items():
            if db.products.find_one({"_id": product_id}) != product:
                raise Incorrect(f"reviewing product 3 changed product {product_id}")

    @hidden(points=1)
    def one_update_per_review(self, answer):
        """Each review is one insert and one targeted update, never a read-modify-write"""
        db = self._database()
        recording = RecordingDatabase(db)
        self.call("add_review", answer.add_review, recording, 1, {"_id": 50, "stars": 4, "text": "ok", "at": 1})
        writes = sorted((c, m) for c, m, _ in recording.writes())
        if any(m in ("replace_one", "find_one_and_replace") for _, m in writes):
            raise Incorrect("replacing the product with a list changed in Python loses reviews added meanwhile: "
                            "let one update_one $push with $slice do it")
        if writes != [("products", "update_one"), ("reviews", "insert_one")]:
            raise Incorrect(f"expected one insert_one into reviews and one update_one of products, saw {writes}")


# ---------------------------------------------------------------------------
class CopyUpdatePath(Exercise):
    id = "02.3"
    title = "An extended reference and its update path"
    answers = ("update_customer", "create_copy_index")
    hints = (
        "First $set the changed fields on the customer, then update every copy: one update_many on orders "
        "keyed on customer_id.",
        "Only name and phone are copied (into customer_copy.name and customer_copy.phone); "
        "a change of email touches no order, and ship_to_at_order is a snapshot that never changes.",
        "update_many keyed on customer_id needs an index whose first field is customer_id.",
    )
    solution_code = """
COPIED_FIELDS = ("name", "phone")

def update_customer(db, customer_id, changes):
    \"\"\"Change a customer, then every copy of the changed fields in its orders.\"\"\"
    result = db.customers.update_one({"_id": customer_id}, {"$set": changes})
    if result.matched_count == 0:
        return False
    copies = {f"customer_copy.{field}": value for field, value in changes.items() if field in COPIED_FIELDS}
    if copies:
        db.orders.update_many({"customer_id": customer_id}, {"$set": copies})
    return True

def create_copy_index(db):
    \"\"\"The index the update path (and "orders of a customer") needs.\"\"\"
    db.orders.create_index("customer_id")
"""

    def _database(self):
        db = self.lab.scratch()
        data = shop(customers_n=8, orders_per_customer=4, products_n=20, seed=9)
        db.customers.insert_many(data["customers"])
        db.orders.insert_many(data["orders"])
        return db

    def _update(self, answer, db, customer_id, changes):
        return self.call("update_customer", answer.update_customer, db, customer_id, dict(changes))

    def _copies_match(self, db, customer_id, what):
        customer = db.customers.find_one({"_id": customer_id})
        for order in db.orders.find({"customer_id": customer_id}):
            copy = order.get("customer_copy", {})
            for field in COPIED_FIELDS:
                if copy.get(field) != customer.get(field):
                    raise Incorrect(f"{what}: order {order['_id']} still copies {field} {copy.get(field)!r}, but "
                                    f"customer {customer_id}'s {field} is {customer.get(field)!r}")

    @visible(points=2)
    def renames_every_copy(self, answer):
        """A new name reaches the customer and every copy in its orders"""
        db = self._database()
        self._update(answer, db, 3, {"name": "Zoe Brook"})
        if db.customers.find_one({"_id": 3}).get("name") != "Zoe Brook":
            raise Incorrect("after update_customer(db, 3, {'name': 'Zoe Brook'}) the customer's own name "
                            "should be 'Zoe Brook'")
        self._copies_match(db, 3, "after renaming customer 3")

    @visible(points=1)
    def update_path_is_indexed(self, answer):
        """The update path finds a customer's orders through an index"""
        db = self._database()
        self.call("create_copy_index", answer.create_copy_index, db)
        plan = plan_for(db.orders, self.lab.backend, {"customer_id": 3})
        if plan.stage != "IXSCAN":
            raise Incorrect(f"update_many keyed on customer_id scans every order ({plan}): index customer_id")

    @hidden(points=2)
    def every_field_every_time(self, answer):
        """Renames and new phone numbers of several customers all reach their copies"""
        db = self._database()
        self._update(answer, db, 1, {"phone": "07000 111111"})
        self._update(answer, db, 5, {"name": "Kit Lowe", "phone": "07000 222222"})
        self._update(answer, db, 1, {"name": "Ada Brook"})
        for customer_id in (1, 5):
            self._copies_match(db, customer_id, f"after changing customer {customer_id}")

    @hidden(points=2)
    def idempotent(self, answer):
        """Running the same update twice leaves the same data as running it once"""
        db = self._database()
        self._update(answer, db, 2, {"name": "Noor Hale", "phone": "07000 333333"})
        once = list(db.orders.find().sort("_id", 1)) + list(db.customers.find().sort("_id", 1))
        self._update(answer, db, 2, {"name": "Noor Hale", "phone": "07000 333333"})
        twice = list(db.orders.find().sort("_id", 1)) + list(db.customers.find().sort("_id", 1))
        if once != twice:
            raise Incorrect("running the same update_customer twice changed the data the second time: "
                            "set values, do not append or increment, so a retry is harmless")

    @hidden(points=2)
    def others_untouched(self, answer):
        """Other customers' orders, and each order's snapshot fields, do not change"""
        db = self._database()
        before = {o["_id"]: o for o in db.orders.find()}
        self._update(answer, db, 6, {"name": "Rae Quill", "email": "rae@example.com"})
        for order in db.orders.find():
            old = before[order["_id"]]
            if order["customer_id"] != 6:
                if order != old:
                    raise Incorrect(f"renaming customer 6 changed order {order['_id']} of customer "
                                    f"{order['customer_id']}: key the update on customer_id")
                continue
            changed = sorted(k for k in set(order) | set(old) if order.get(k) != old.get(k) and k != "customer_copy")
            if changed:
                raise Incorrect(f"renaming customer 6 changed {', '.join(changed)} in order {order['_id']}: "
                                "only the copies follow the customer (ship_to_at_order is a snapshot)")
            if set(order["customer_copy"]) != set(COPIED_FIELDS):
                raise Incorrect(f"order {order['_id']}'s customer_copy now holds {sorted(order['customer_copy'])}: "
                                "only name and phone are copied, the email stays on the customer")
        if db.customers.find_one({"_id": 6}).get("email") != "rae@example.com":
            raise Incorrect("the customer's own email should change too")

    @hidden(points=1)
    def unknown_customer(self, answer):
        """An unknown customer creates nothing"""
        db = self._database()
        customers_before, orders_before = db.customers.count_documents({}), list(db.orders.find().sort("_id", 1))
        self._update(answer, db, 999, {"name": "Nobody"})
        if db.customers.count_documents({}) != customers_before or list(db.orders.find().sort("_id", 1)) != orders_before:
            raise Incorrect("update_customer for an unknown customer should create and change nothing: do not upsert")


# ---------------------------------------------------------------------------
class SplitByKind(Exercise):
    id = "02.4"
    title = "One kind of entity per collection"
    answers = ("split_records",)
    hints = (
        f"Each document goes to the collection its kind names: {KIND_COLLECTIONS}; "
        f"a document without a known kind goes to {UNCLASSIFIED!r} unchanged, so nothing is lost.",
        "In customers, orders and products the collection says the kind: drop the kind field there.",
        "Make it safe to run again: replace_one({'_id': ...}, doc, upsert=True) writes each document once "
        "however often the split runs. Leave db.records as it is.",
    )
    solution_code = """
KIND_COLLECTIONS = {"customer": "customers", "order": "orders", "product": "products"}

def split_records(db):
    \"\"\"Copy each document of db.records into the collection of its kind; safe to run again.\"\"\"
    for doc in db.records.find():
        target = KIND_COLLECTIONS.get(doc.get("kind"))
        if target is None:
            db.unclassified.replace_one({"_id": doc["_id"]}, doc, upsert=True)
        else:
            doc.pop("kind")
            db[target].replace_one({"_id": doc["_id"]}, doc, upsert=True)
"""

    def _database(self, **sizes):
        db = self.lab.scratch()
        records = mixed_records(**sizes)
        db.records.insert_many([dict(r) for r in records])
        return db, records

    def _split(self, answer, db):
        self.call("split_records", answer.split_records, db)

    def _judge(self, db, records, what):
        where: dict[Any, list[str]] = {}
        for name in list(KIND_COLLECTIONS.values()) + [UNCLASSIFIED]:
            for doc in db[name].find():
                where.setdefault(doc["_id"], []).append(name)
        for record in records:
            expected = KIND_COLLECTIONS.get(record.get("kind"), UNCLASSIFIED)
            found = where.pop(record["_id"], [])
            if found != [expected]:
                place = ", ".join(found) if found else "nowhere"
                raise Incorrect(f"{what}: {record.get('kind') or 'a document without kind'} {record['_id']} "
                                f"should be in {expected} exactly once, found in {place}")
            stored = db[expected].find_one({"_id": record["_id"]})
            want = record if expected == UNCLASSIFIED else {k: v for k, v in record.items() if k != "kind"}
            if stored != want:
                if "kind" in stored and expected != UNCLASSIFIED:
                    raise Incorrect(f"{what}: {record['_id']} in {expected} still has its kind field: "
                                    "the collection says the kind")
                raise Incorrect(f"{what}: {record['_id']} changed on its way to {expected}")
        if where:
            raise Incorrect(f"{what}: documents that were not in records appeared: {sorted(where, key=str)[:3]}")

    @visible(points=2)
    def each_kind_in_its_collection(self, answer):
        """Customers, orders and products each land in their own collection"""
        db, records = self._database(customers_n=4, orders_n=6, products_n=3, strays=0, seed=1)
        self._split(answer, db)
        self._judge(db, records, "after the split")

    @visible(points=1)
    def nothing_lost(self, answer):
        """A document with no kind is kept, in unclassified"""
        db, records = self._database(customers_n=2, orders_n=2, products_n=2, strays=2, seed=2)
        self._split(answer, db)
        self._judge(db, records, "after the split")

    @hidden(points=2)
    def exactly_once_on_other_data(self, answer):
        """Other data: every document lands in the right collection exactly once, nothing lost"""
        db, records = self._database(customers_n=15, orders_n=30, products_n=10, strays=4, seed=31)
        self._split(answer, db)
        self._judge(db, records, "after the split")
        if db.records.count_documents({}) != len(records):
            raise Incorrect("the split emptied or changed records: keep the source until the copy is verified")

    @hidden(points=2)
    def safe_to_run_again(self, answer):
        """Running the split twice gives the same collections as once"""
        db, records = self._database(customers_n=5, orders_n=8, products_n=4, strays=2, seed=47)
        self._split(answer, db)
        self._split(answer, db)
        self._judge(db, records, "after running the split twice")


EXERCISES = (OrdersWithLines, RecentReviews, CopyUpdatePath, SplitByKind)
