"""Lab 01, exercise 01.6: a bounded part embedded, an unbounded part referenced.

Each requirement is checked on its own data: ``recent_orders`` and the index
are judged on orders the check inserts itself (so a wrong ``place_order`` costs
only its own points), and the address bound is tried twice: added one after
another, and with a competing add injected between a read and a write of the
learner's code (a guarded single update never reads, so it never meets it), on
a customer with room for both adds and on one the other add fills.
"""

from __future__ import annotations

import functools

from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson01.reads import is_a_list, returned_type
from course.toolkit.matching import index_specs
from course.toolkit.plans import plan_for, plan_problem
from course.engine.recording import RecordingDatabase

MAX_ADDRESSES = 3
ORDER_SCHEMA_VERSION = 1
UNKNOWN_CUSTOMER = 999
RECENT_QUERY = ({"customer_id": 1}, [("placed_at", -1)])


def _address(label: str, number: int = 1) -> dict:
    return {"label": label, "postcode": f"N{number} {number}AB"}


@functools.cache
def _customers() -> tuple[dict, ...]:
    """Customers with 1, 2 (one short of full) and 3 (full) addresses, none at all, and an empty list."""
    labels = ("home", "work", "parents")
    people = [{"_id": cid, "schema_version": 1, "name": f"Customer {cid}",
               "addresses": [_address(label, cid) for label in labels[:count]]}
              for cid, count in ((1, 1), (2, 2), (3, 3))]
    people.append({"_id": 4, "schema_version": 1, "name": "Customer 4"})
    people.append({"_id": 5, "schema_version": 1, "name": "Customer 5", "addresses": []})
    return tuple(people)


def _customer(customer_id: int) -> dict:
    return next(dict(c) for c in _customers() if c["_id"] == customer_id)


def _orders(days_by_customer: dict[int, tuple[int, ...]]) -> list[dict]:
    """Order documents as a correct place_order stores them, for checks that must not depend on it."""
    orders, order_id = [], 1
    for customer_id, days in days_by_customer.items():
        for day in days:
            orders.append({"_id": order_id, "customer_id": customer_id, "schema_version": ORDER_SCHEMA_VERSION,
                           "placed_at": day, "total_pence": 100 * day + 5})
            order_id += 1
    return orders


class CustomerDesign(Exercise):
    id = "01.6"
    title = "Practice: a bounded part embedded, an unbounded part referenced"
    answers = ("add_address", "place_order", "recent_orders", "create_order_indexes")
    requirements = {
        "bounded": f"add_address embeds at most MAX_ADDRESSES ({MAX_ADDRESSES}) addresses: True while there is "
                   "room, False once the list is full",
        "atomic": "the bound is enforced in the update that adds the address, so a concurrent add between a read "
                  "and a write cannot overshoot it, be lost, or make yours fail while there is room",
        "unknown": "add_address returns False for an unknown customer and never creates one",
        "own_document": "place_order stores each order as its own document in db.orders, with its fields and "
                        "customer_id",
        "no_embed": "placing orders leaves the customer document unchanged: no list of orders (or order ids) in it",
        "version": f"each stored order carries schema_version {ORDER_SCHEMA_VERSION}",
        "recent": "recent_orders returns a list (not a cursor) of the customer's orders, largest placed_at first, "
                  "at most limit (default 10)",
        "index": "create_order_indexes creates an index that serves recent_orders: no collection scan, no "
                 "in-memory sort",
        "no_extra_index": "create_order_indexes creates no other index, on orders or on customers",
    }
    hints = (
        f"Addresses are few (at most {MAX_ADDRESSES}): embed them, and refuse the push when the list is full, "
        "in the same update (filter on the array's size or on a missing element).",
        "Orders grow without bound: each is its own document in db.orders with a customer_id reference. "
        "Never push orders into the customer.",
        "recent_orders filters on customer_id and sorts on placed_at descending: index exactly that.",
    )
    solution_code = f"""
MAX_ADDRESSES = {MAX_ADDRESSES}

def add_address(db, customer_id, address):
    \"\"\"Embed an address unless the customer already has MAX_ADDRESSES; True if added.\"\"\"
    result = db.customers.update_one(
        {{"_id": customer_id, f"addresses.{{MAX_ADDRESSES - 1}}": {{"$exists": False}}}},
        {{"$push": {{"addresses": address}}}},
    )
    return result.modified_count == 1

def place_order(db, customer_id, order):
    \"\"\"Store an order as its own document that references its customer.\"\"\"
    doc = {{**order, "customer_id": customer_id, "schema_version": {ORDER_SCHEMA_VERSION}}}
    db.orders.insert_one(doc)
    return doc["_id"]

def recent_orders(db, customer_id, limit=10):
    \"\"\"The customer's newest orders first.\"\"\"
    cursor = db.orders.find({{"customer_id": customer_id}}).sort("placed_at", -1).limit(limit)
    return list(cursor)

def create_order_indexes(db):
    \"\"\"The one index recent_orders needs.\"\"\"
    db.orders.create_index([("customer_id", 1), ("placed_at", -1)])
"""

    def _database(self, orders: list[dict] | None = None):
        """A fresh scratch database with the check customers (and ``orders`` if given)."""
        db = self.lab.scratch()
        db.customers.insert_many([dict(c) for c in _customers()])
        if orders:
            db.orders.insert_many(orders)
        return db

    # -- the address bound ---------------------------------------------------------
    def _fills(self, answer, customer_id: int, tries: int) -> None:
        db = self._database()
        start = list(_customer(customer_id).get("addresses", []))
        room = MAX_ADDRESSES - len(start)
        new = [_address(f"new {i}", 7 + i) for i in range(tries)]
        results = [self.call("add_address", answer.add_address, RecordingDatabase(db), customer_id, a)
                   for a in new]
        stored = (db.customers.find_one({"_id": customer_id}) or {}).get("addresses", [])
        wanted = start + new[:max(room, 0)]
        call = f"add_address(db, {customer_id}, ...) called {tries} times on a customer with {len(start)} addresses"
        if len(stored) != len(wanted):
            raise Incorrect(f"{call} leaves {len(stored)} addresses: the list must stop at MAX_ADDRESSES "
                            f"({MAX_ADDRESSES})")
        if stored != wanted:
            raise Incorrect(f"{call}: the stored addresses are not the first ones plus the added ones in order")
        expected = [True] * max(room, 0) + [False] * (tries - max(room, 0))
        if results != expected:
            raise Incorrect(f"{call} returned {results}, not {expected}")

    @visible(points=2, checks="bounded")
    def addresses_are_bounded(self, answer):
        """A customer with one address takes two more, then refuses"""
        self._fills(answer, 1, MAX_ADDRESSES + 1)

    def _race(self, answer, customer_id: int) -> None:
        """add_address with a competing add injected between a read and a write of the learner's code."""
        db = self._database()
        start = len(_customer(customer_id).get("addresses", []))
        competing = _address("added meanwhile", 5)
        recorded = RecordingDatabase(db, race=lambda: db.customers.update_one(
            {"_id": customer_id}, {"$push": {"addresses": competing}}))
        mine = _address("mine", 6)
        returned = self.call("add_address", answer.add_address, recorded, customer_id, mine)
        stored = db.customers.find_one({"_id": customer_id}).get("addresses", [])
        held = f"{start} address" + ("" if start == 1 else "es")
        race = f"another add arrived between your read of customer {customer_id} ({held}) and your write"
        if len(stored) > MAX_ADDRESSES:
            raise Incorrect(f"{race}: the customer ended with {len(stored)} addresses, past MAX_ADDRESSES "
                            f"({MAX_ADDRESSES}): the length you read was out of date when you wrote")
        if recorded.raced and competing not in stored:
            raise Incorrect(f"{race}, and your write lost it: the stored list no longer holds the other add's "
                            "address")
        room = recorded.raced and start + 1 < MAX_ADDRESSES
        if room and mine not in stored:
            raise Incorrect(f"{race}, leaving room for one more, and add_address did not add its own address "
                            f"(it returned {returned!r}): a concurrent add must not make yours fail while there is "
                            "room")
        if returned is not (mine in stored):
            raise Incorrect(f"add_address returned {returned!r}, but the address was "
                            f"{'' if mine in stored else 'not '}added")

    @visible(points=3, checks="atomic")
    def bound_holds_under_a_race(self, answer):
        """A competing add between your read and your write: no overshoot, no add lost, yours still in if room"""
        self._race(answer, 1)  # room for both adds
        self._race(answer, 2)  # the other add takes the last place

    @visible(points=1, checks="unknown")
    def unknown_customer(self, answer):
        """An address for an unknown customer creates nothing and returns False"""
        db = self._database()
        returned = self.call("add_address", answer.add_address, RecordingDatabase(db), UNKNOWN_CUSTOMER,
                             _address("home"))
        if db.customers.count_documents({"_id": UNKNOWN_CUSTOMER}):
            raise Incorrect(f"add_address(db, {UNKNOWN_CUSTOMER}, ...) created customer {UNKNOWN_CUSTOMER}: "
                            "add_address never creates a customer")
        if returned is not False:
            raise Incorrect(f"add_address(db, {UNKNOWN_CUSTOMER}, ...) returned {returned!r}, not False")

    @hidden(points=1, checks="bounded")
    def one_short_full_and_empty(self, answer):
        """One short of full, already full, and no addresses at all"""
        self._fills(answer, 2, 2)
        self._fills(answer, 3, 1)
        self._fills(answer, 4, MAX_ADDRESSES + 1)
        self._fills(answer, 5, MAX_ADDRESSES + 1)

    # -- orders: referenced, not embedded ---------------------------------------------
    def _place(self, answer, customer_id: int, days) -> tuple:
        db = self._database()
        placed = [{"placed_at": day, "total_pence": 100 * day + 5} for day in days]
        for order in placed:
            self.call("place_order", answer.place_order, RecordingDatabase(db), customer_id, dict(order))
        return db, placed

    @visible(points=2, checks="own_document")
    def orders_are_documents(self, answer):
        """Three orders placed for customer 2 are three documents in db.orders"""
        db, placed = self._place(answer, 2, (10, 20, 30))
        stored = list(db.orders.find({"customer_id": 2}))
        if len(stored) != len(placed):
            raise Incorrect(f"3 orders placed for customer 2, but db.orders holds {len(stored)} documents with "
                            "customer_id 2")
        for order in placed:
            if not any(all(doc.get(k) == v for k, v in order.items()) for doc in stored):
                raise Incorrect(f"no document in db.orders keeps the order {order}: store its fields as they are")

    @visible(points=3, checks="no_embed")
    def customer_unchanged(self, answer):
        """Placing orders leaves the customer document as it was"""
        self._unchanged(answer, 2, (10, 20, 30))

    def _unchanged(self, answer, customer_id, days):
        db, _ = self._place(answer, customer_id, days)
        after = db.customers.find_one({"_id": customer_id}) or {}
        before = _customer(customer_id)
        changed = sorted(str(k) for k in set(before) | set(after) if before.get(k) != after.get(k))
        if changed:
            raise Incorrect(f"placing {len(days)} orders changed customer {customer_id}'s {', '.join(changed)}: "
                            "orders are unbounded: keep them out of the customer document")

    @visible(points=1, checks="version")
    def versioned_orders(self, answer):
        """Every stored order carries its schema_version"""
        db, _ = self._place(answer, 1, (7, 8))
        for doc in db.orders.find():
            version = doc.get("schema_version")
            if version != ORDER_SCHEMA_VERSION or isinstance(version, bool):
                raise Incorrect(f"a stored order has schema_version {version!r}, not {ORDER_SCHEMA_VERSION}: "
                                "a reader needs to know its shape")

    @hidden(points=1, checks="no_embed")
    def many_orders_no_growth(self, answer):
        """A dozen orders for a customer without addresses leave it unchanged"""
        self._unchanged(answer, 4, tuple(range(1, 13)))

    # -- recent orders and their index ------------------------------------------------
    def _recent(self, answer, customer_id, days_by_customer, *limit) -> None:
        db = self._database(_orders(days_by_customer))
        got = self.call("recent_orders", answer.recent_orders, RecordingDatabase(db), customer_id, *limit)
        call = f"recent_orders(db, {customer_id}{''.join(f', {n}' for n in limit)})"
        if not is_a_list(got):
            raise Incorrect(f"{call} returned a {returned_type(got)}: the statement asks for a list of order "
                            "documents")
        mine = sorted(days_by_customer.get(customer_id, ()), reverse=True)[:limit[0] if limit else 10]
        if not all(isinstance(o, dict) for o in got):
            raise Incorrect(f"{call} should return order documents (dicts)")
        others = [o for o in got if o.get("customer_id") != customer_id]
        if others:
            raise Incorrect(f"{call} returned an order of customer {others[0].get('customer_id')!r}: "
                            f"recent_orders lists customer {customer_id}'s orders only")
        days = [o.get("placed_at") for o in got]
        if len(days) != len(mine):
            raise Incorrect(f"{call} returned {len(days)} orders, not {len(mine)}")
        if days != mine:
            raise Incorrect(f"{call} returned the orders of days {days}: the newest (largest placed_at) first")

    @visible(points=2, checks="recent")
    def newest_first(self, answer):
        """The customer's three newest orders, newest first; ten by default"""
        self._recent(answer, 3, {3: (5, 50, 25, 40, 1), 4: (60,)}, 3)
        self._recent(answer, 1, {1: tuple(range(3, 40, 3)), 4: (60,)})

    @hidden(points=1, checks="recent")
    def default_limit_and_short_history(self, answer):
        """Fewer orders than the limit; no orders at all"""
        history = {1: tuple(range(3, 40, 3)), 2: (9, 4), 4: (60,)}
        self._recent(answer, 2, history, 5)
        self._recent(answer, 5, history, 5)

    def _indexed(self, answer):
        db = self._database(_orders({1: (3, 2, 1), 2: (5,)}))
        self.call("create_order_indexes", answer.create_order_indexes, RecordingDatabase(db))
        return db

    @visible(points=2, checks="index")
    def recent_orders_indexed(self, answer):
        """The recent-orders query is served by an index, sort included"""
        db = self._indexed(answer)
        problem = plan_problem(db.orders, self.lab.backend, *RECENT_QUERY, read="recent_orders")
        if problem:
            raise Incorrect(problem)

    @visible(points=1, checks="no_extra_index")
    def no_other_index(self, answer):
        """No index that recent_orders does not use"""
        db = self._indexed(answer)
        used = {"_id_", plan_for(db.orders, self.lab.backend, *RECENT_QUERY).index}
        for collection in ("orders", "customers"):
            for name in index_specs(db[collection]):
                if name not in used:
                    raise Incorrect(f"index {name} on {collection} serves no planned read: it costs every write")
