"""Lesson 04, exercise 04.2: extended reference, copy the customer's name and phone and keep them in sync.

The sync is checked on data with a twin (another customer with the same name and phone), so copies
found by anything but ``customer._id`` show; the index is read in one normalised form.
"""

from __future__ import annotations

from course.datasets.patterns import customers
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04.common import COMPARE, by_id, data, first_difference, keyed, seeded
from course.toolkit.matching import index_specs

COPIED = ("_id", "name", "phone")
ORDERS_PLACED = ((100, 1), (101, 2), (102, 1), (103, 3), (104, 1))


def _twin_customers() -> list[dict]:
    """The seeded customers, where customer 4 has customer 1's name and phone (and an address)."""
    found = customers()
    found[3].update(name=found[0]["name"], phone=found[0]["phone"], address="12 Hang Bac, Hanoi")
    return found


class ExtendedReference(Exercise):
    id = "04.2"
    title = "Extended reference: copy the customer's name and phone, and keep them in sync"
    answers = ("place_order", "create_copy_index", "change_phone")
    requirements = {
        "order": "place_order inserts the order into db.orders under _id order_id, with its items",
        "copy": "the order embeds under customer exactly the customer's {_id, name, phone}, nothing else",
        "index": "create_copy_index(db) creates an index on db.orders whose first key is customer._id",
        "sync": "change_phone sets the new phone in the customer and in every order of that customer, and in no "
                "other order",
        "repeat": "running the same change_phone twice leaves the data as after the first",
    }
    hints = (
        "place_order reads the customer once and embeds {_id, name, phone}: the fields an order screen shows "
        "and that rarely change.",
        "email, loyaltyPoints, lastSeenAt and stats change all the time or are not shown: copying them makes "
        "stale copies. Leave them out.",
        "create_copy_index: db.orders.create_index('customer._id'). change_phone updates the customer, then "
        "update_many on db.orders filtered by 'customer._id'.",
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


def create_copy_index(db):
    \"\"\"The index the sync path finds a customer's orders by.\"\"\"
    db.orders.create_index("customer._id")


def change_phone(db, customer_id, phone):
    \"\"\"Change a customer's phone and every copy of it in their orders; safe to repeat.\"\"\"
    db.customers.update_one({"_id": customer_id}, {"$set": {"phone": phone}})
    db.orders.update_many({"customer._id": customer_id}, {"$set": {"customer.phone": phone}})
"""

    @staticmethod
    def _items(order_id: int) -> list[dict]:
        return [{"sku": f"SKU-{order_id % 7:03d}", "qty": 1 + order_id % 3}]

    def _placed(self, answer, profiles=None, placed=ORDERS_PLACED):
        db = seeded(self.lab, customers=profiles if profiles is not None else data(customers))
        for order_id, customer_id in placed:
            self.call("place_order", answer.place_order, db, order_id, customer_id, self._items(order_id))
        return db

    @visible(points=1, checks="order")
    def order_stored(self, answer):
        """place_order(db, 101, 2, items) stores order 101 with its items"""
        db = self._placed(answer)
        order = db.orders.find_one({"_id": 101})
        if order is None:
            raise Incorrect("place_order(db, 101, 2, items) should insert a document with _id 101 into db.orders")
        if order.get("items") != self._items(101):
            raise Incorrect(f"order 101 should keep its items as given ({self._items(101)}); it has "
                            f"{order.get('items')!r:.80}")

    def _check_copies(self, db, placed):
        profiles = {c["_id"]: c for c in db.customers.find()}
        for order_id, customer_id in placed:
            order = db.orders.find_one({"_id": order_id}) or {}
            copy = order.get("customer")
            if not isinstance(copy, dict):
                raise Incorrect(f"order {order_id} should embed the customer as a sub-document customer; it has "
                                f"{copy!r:.60}")
            extra = sorted(set(copy) - set(COPIED))
            if extra:
                raise Incorrect(f"order {order_id} copies {', '.join(extra)} of the customer: copy only _id, name "
                                "and phone (the rest is not shown with the order, or goes stale)")
            missing = [f for f in COPIED if f not in copy]
            if missing:
                raise Incorrect(f"order {order_id}'s customer lacks {', '.join(missing)}: embed customer._id, "
                                "customer.name and customer.phone")
            difference = first_difference({f: profiles[customer_id][f] for f in COPIED}, copy, words=COMPARE)
            if difference:
                raise Incorrect(f"order {order_id}'s copy differs from customer {customer_id} ({difference})")

    @visible(points=3, checks="copy")
    def copies_the_right_fields(self, answer):
        """An order embeds exactly the customer's _id, name and phone"""
        self._check_copies(self._placed(answer), ORDERS_PLACED[1:2])

    @hidden(points=1, checks="copy")
    def copies_of_other_customers(self, answer):
        """Every order, for customers with more fields (an address), copies the same three"""
        placed = ORDERS_PLACED + ((105, 4), (106, 12))
        self._check_copies(self._placed(answer, data(_twin_customers), placed), placed)

    @visible(points=1, checks="index")
    def copy_index(self, answer):
        """create_copy_index creates an index led by customer._id"""
        db = self.lab.scratch()
        self.call("create_copy_index", answer.create_copy_index, db)
        specs = index_specs(db.orders)
        if not any(spec.fields[:1] == ("customer._id",) for spec in specs.values()):
            found = ", ".join(str(list(spec.fields)) for spec in specs.values()) or "none"
            raise Incorrect(f"db.orders needs an index whose first key is customer._id, so the sync finds a "
                            f"customer's orders without a scan; its indexes: {found}")

    def _check_sync(self, answer, profiles, placed, customer_id, phone):
        db = self._placed(answer, profiles, placed)
        others = by_id(db.orders, {"customer._id": {"$ne": customer_id}})
        self.call("change_phone", answer.change_phone, db, customer_id, phone)
        profile = db.customers.find_one({"_id": customer_id}) or {}
        if profile.get("phone") != phone:
            raise Incorrect(f"change_phone(db, {customer_id}, {phone!r}) should change the customer's own phone too; "
                            f"it is {profile.get('phone')!r}")
        mine = list(db.orders.find({"customer._id": customer_id}).sort("_id", 1))
        stale = [o["_id"] for o in mine if (o.get("customer") or {}).get("phone") != phone]
        if stale:
            raise Incorrect(f"after change_phone(db, {customer_id}, {phone!r}), orders {stale} of customer "
                            f"{customer_id} (of its {len(mine)}) still show the old phone: every copy of the phone "
                            "must change with the customer's own")
        for before in others:
            after = db.orders.find_one({"_id": before["_id"]})
            difference = first_difference(before, after)
            if difference:
                raise Incorrect(f"changing customer {customer_id}'s phone changed order {before['_id']} of another "
                                f"customer ({difference}): only the changed customer's copies change")

    @visible(points=3, checks="sync")
    def sync_reaches_every_copy(self, answer):
        """A phone change reaches the customer and every order of that customer, and no other (customer 4 has
        the same name and phone)"""
        self._check_sync(answer, data(_twin_customers), ORDERS_PLACED + ((105, 4), (106, 4)), 1, "0999000111")

    @hidden(points=1, checks="sync")
    def sync_of_another_customer(self, answer):
        """Customer 4's change reaches its orders, and customer 1 (same name, old phone) keeps its own"""
        self._check_sync(answer, data(_twin_customers), ORDERS_PLACED + ((105, 4), (106, 4)), 4, "0999000333")

    @visible(points=1, checks="repeat")
    def repeat_changes_nothing(self, answer):
        """Running the same phone change twice leaves the data as after the first"""
        db = self._placed(answer)
        self.call("change_phone", answer.change_phone, db, 1, "0999000222")
        once = {**keyed("customer", by_id(db.customers)), **keyed("order", by_id(db.orders))}
        self.call("change_phone", answer.change_phone, db, 1, "0999000222")
        twice = {**keyed("customer", by_id(db.customers)), **keyed("order", by_id(db.orders))}
        difference = first_difference(once, twice)
        if difference:
            raise Incorrect(f"the second change_phone(db, 1, '0999000222') changed the data again ({difference}): "
                            "a repeated change must leave it as after the first")
