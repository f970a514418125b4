"""Exercise 02.3, an extended reference and its update path.

update_customer is run against a small seeded shop (two customers share a name, as people do; two orders
hold an out-of-date phone copy, so that leaving a copy that did not change and refreshing it can be told
apart; for the unknown customer, orders that carry a customer_id no customer has) and judged on what
changed where; create_copy_index on the indexes it leaves.
"""

from __future__ import annotations

from typing import Any

from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson02.checks import (changed_fields, field_difference, seed_shop, shown, snapshot,
                                            snapshot_difference)
from course.toolkit.matching import index_specs
from course.engine.recording import RecordingDatabase

COPIED_FIELDS = ("name", "phone")  #: customer fields copied into orders (customer_copy)
ORPHANS = 2  #: orders the unknown-customer check leaves behind for a customer that is not in db.customers
FIRST_ORPHAN_ID = 901  #: the first of their _ids (the seeded shop's orders are 1 to 18)


class CopyUpdatePath(Exercise):
    id = "02.3"
    title = "An extended reference and its update path"
    answers = ("update_customer", "create_copy_index")
    requirements = {
        "source": "update_customer sets every field of changes on the customer, keeping its other fields",
        "copies": "every order of that customer gets the new value of each copied field in changes "
                  "(customer_copy.name, customer_copy.phone); a copied field not in changes keeps the value the "
                  "order has, even an out-of-date one",
        "others": "other customers and their orders do not change",
        "only_copies": "in the customer's orders nothing but customer_copy.name and customer_copy.phone "
                       "changes: uncopied fields (email, addresses) are not copied, the snapshot "
                       "ship_to_at_order never follows the customer",
        "source_first": "the customer is written before its copies (a crash in between leaves stale copies, "
                        "which a rerun repairs)",
        "unknown": "for an unknown customer nothing is created or changed",
        "idempotent": "running the same update_customer twice leaves the same data as running it once",
        "index": "create_copy_index creates an index on db.orders whose first key is customer_id",
    }
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
        data = seed_shop()
        db.customers.insert_many(data["customers"])
        db.orders.insert_many(data["orders"])
        return db

    def _update(self, answer, db, customer_id, changes) -> Any:
        return self.call("update_customer", answer.update_customer, db, customer_id, dict(changes))

    def _call(self, customer_id, changes) -> str:
        return f"update_customer(db, {customer_id!r}, {shown(changes)})"

    def _expect_copies(self, answer, db, customer_id, changes) -> None:
        """Run the update; each order's copy of a changed field is the new value, its other copy as it was."""
        before = {o["_id"]: o.get("customer_copy") or {} for o in db.orders.find({"customer_id": customer_id})}
        self._update(answer, db, customer_id, changes)
        what = f"after {self._call(customer_id, changes)}"
        for stored in db.orders.find({"customer_id": customer_id}).sort("_id", 1):
            copy = stored.get("customer_copy")
            if not isinstance(copy, dict):
                raise Incorrect(f"{what}: order {stored['_id']} has customer_copy {shown(copy)}, not a document "
                                "with name and phone")
            old = before.get(stored["_id"], {})
            for field in COPIED_FIELDS:
                if field in changes and copy.get(field) != changes[field]:
                    raise Incorrect(f"{what}: order {stored['_id']} copies {field} {shown(copy.get(field))}, but "
                                    f"customer {customer_id}'s {field} is now {shown(changes[field])}")
                if field not in changes and copy.get(field) != old.get(field):
                    raise Incorrect(f"{what}: order {stored['_id']}'s customer_copy.{field} went from "
                                    f"{shown(old.get(field))} to {shown(copy.get(field))}, though changes holds no "
                                    f"{field}: the copies that change are those of the fields in changes")

    def _expect_source(self, answer, customer_id, changes) -> None:
        """Run the update; the customer holds every field of changes as given, and its other fields as they were."""
        db = self._database()
        before = db.customers.find_one({"_id": customer_id})
        self._update(answer, db, customer_id, changes)
        difference = field_difference({**before, **changes}, db.customers.find_one({"_id": customer_id}) or {})
        if difference:
            raise Incorrect(f"after {self._call(customer_id, changes)} the customer {difference}: each field of "
                            "changes is set to the value it holds, and the other fields stay")

    @visible(points=1, checks="source")
    def sets_the_customer(self, answer):
        """The changed fields reach the customer, a new list of addresses too; its other fields stay"""
        self._expect_source(answer, 3, {"name": "Zoe Brook", "email": "zoe@example.com"})
        self._expect_source(answer, 2, {"addresses": [{"label": "work", "postcode": "N1 9GU"}]})

    @hidden(points=1, checks="source")
    def sets_other_fields(self, answer):
        """A new phone and new addresses reach the customer"""
        self._expect_source(answer, 5, {"phone": "07000 222222",
                                        "addresses": [{"label": "home", "postcode": "E1 1AA"}]})

    @visible(points=3, checks="copies")
    def refreshes_every_copy(self, answer):
        """A new name, then a new phone, reach every copy; the other copied field keeps its value, stale or not"""
        db = self._database()
        for customer_id, changes in ((3, {"name": "Zoe Brook"}), (1, {"phone": "07000 111111"})):
            self._expect_copies(answer, db, customer_id, changes)

    @hidden(points=1, checks="copies")
    def refreshes_copies_again(self, answer):
        """A name beside an out-of-date phone copy, then both copied fields at once"""
        db = self._database()
        for changes in ({"name": "Kit Lowe", "email": "kit@example.com"},
                        {"name": "Kit Lowe-Hart", "phone": "07000 222222"}):
            self._expect_copies(answer, db, 5, changes)

    @visible(points=1, checks="others")
    def other_customers_untouched(self, answer):
        """Other customers and their orders do not change"""
        db = self._database()
        before = {c["_id"]: c for c in db.customers.find({"_id": {"$ne": 6}})}
        orders_before = {o["_id"]: o for o in db.orders.find({"customer_id": {"$ne": 6}})}
        changes = {"name": "Rae Quill", "phone": "07000 444444"}
        self._update(answer, db, 6, changes)
        for stored in db.orders.find({"_id": {"$in": list(orders_before)}}).sort("_id", 1):
            fields = changed_fields(orders_before[stored["_id"]], stored)
            if fields:
                raise Incorrect(f"{self._call(6, changes)} changed {', '.join(fields)} in order {stored['_id']} of "
                                f"customer {stored['customer_id']}: update only the orders with customer_id 6")
        for stored in db.customers.find({"_id": {"$ne": 6}}).sort("_id", 1):
            fields = changed_fields(before.get(stored["_id"], {}), stored)
            if fields:
                raise Incorrect(f"{self._call(6, changes)} changed {', '.join(fields)} of customer {stored['_id']}: "
                                "update only customer 6")

    @visible(points=2, checks="only_copies")
    def only_the_copies_change(self, answer):
        """A change of name, email and addresses changes only customer_copy.name in the orders"""
        db = self._database()
        before = {o["_id"]: o for o in db.orders.find({"customer_id": 2})}
        changes = {"name": "Noor Hale", "email": "noor@example.com",
                   "addresses": [{"label": "home", "postcode": "E2 7QT"}]}
        self._update(answer, db, 2, changes)
        for stored in db.orders.find({"customer_id": 2}).sort("_id", 1):
            old = before.get(stored["_id"], {})
            fields = [f for f in changed_fields(old, stored) if f != "customer_copy"]
            if fields:
                snapshot_note = (": ship_to_at_order is a snapshot of the address at the time of the order, it "
                                 "never follows the customer" if "ship_to_at_order" in fields else "")
                raise Incorrect(f"{self._call(2, changes)} changed {', '.join(fields)} in order {stored['_id']}"
                                f"{snapshot_note or ': only the copies in customer_copy follow the customer'}")
            copy, old_copy = stored.get("customer_copy") or {}, old.get("customer_copy") or {}
            gained = sorted(set(copy) - set(COPIED_FIELDS) - set(old_copy))
            if gained:
                raise Incorrect(f"{self._call(2, changes)} copied {', '.join(gained)} into order {stored['_id']}'s "
                                "customer_copy: only name and phone are copied, other fields stay on the customer")

    @visible(points=1, checks="source_first")
    def writes_the_customer_first(self, answer):
        """The customer is written before the copies in its orders"""
        db = self._database()
        watched = RecordingDatabase(db)
        changes = {"name": "Ivy Stone", "phone": "07000 666666"}
        self._update(answer, watched, 5, changes)
        writes = [op.collection for op in watched.ops() if op.kind == "write"]
        if "orders" in writes and ("customers" not in writes or writes.index("orders") < writes.index("customers")):
            raise Incorrect(f"{self._call(5, changes)} wrote the copies in orders before the customer: write the "
                            "source first, so that a crash in between leaves only stale copies, which running the "
                            "update path again repairs")

    @visible(points=1, checks="unknown")
    def unknown_customer_creates_nothing(self, answer):
        """An unknown customer, with no orders or with orders left behind: nothing is created or changed"""
        db = self._database()
        # customer 998 is gone (deleted, or never stored), its orders remain: they carry an id no customer has
        templates = db.orders.find({"customer_id": 1}).sort("_id", 1).limit(ORPHANS)
        db.orders.insert_many([{**placed, "_id": FIRST_ORPHAN_ID + k, "customer_id": 998,
                                "customer_copy": {"name": "Lee Gone", "phone": "07000 998998"}}
                               for k, placed in enumerate(templates)])
        before = snapshot(db, ("customers", "orders"))
        for customer_id, changes in ((999, {"name": "Nobody", "phone": "07000 000000"}),
                                     (998, {"name": "Lee Back", "phone": "07000 998000"})):
            self.call("update_customer", answer.update_customer, db, customer_id, dict(changes), expect_raise=True)
            difference = snapshot_difference(before, snapshot(db, ("customers", "orders")))
            if not difference:
                continue
            if " gained " in difference:
                raise Incorrect(f"{self._call(customer_id, changes)} for a customer that does not exist changed the "
                                f"data ({difference}): do not upsert, create nothing")
            raise Incorrect(f"{self._call(customer_id, changes)} changed the data ({difference}), though there is "
                            f"no customer {customer_id} in db.customers, only orders that still carry that "
                            "customer_id: for an unknown customer_id nothing changes, its orders included")

    def _expect_idempotent(self, answer, customer_id, changes, runs: int) -> None:
        db = self._database()
        self._update(answer, db, customer_id, changes)
        once = snapshot(db, ("customers", "orders"))
        for run in range(2, runs + 1):
            self._update(answer, db, customer_id, changes)
            difference = snapshot_difference(once, snapshot(db, ("customers", "orders")))
            if difference:
                raise Incorrect(f"running {self._call(customer_id, changes)} {'twice' if run == 2 else f'{run} times'}"
                                f" changed the data again ({difference}): a retry must leave the data as one run "
                                "left it")

    @visible(points=2, checks="idempotent")
    def safe_to_run_twice(self, answer):
        """Running the same update twice leaves the same data as once"""
        self._expect_idempotent(answer, 4, {"name": "Noor Hale", "phone": "07000 333333"}, 2)

    @hidden(points=1, checks="idempotent")
    def safe_to_run_three_times(self, answer):
        """Three runs of a change with an uncopied field"""
        self._expect_idempotent(answer, 1, {"email": "ada@example.com", "phone": "07000 555555"}, 3)

    @visible(points=2, checks="index")
    def update_path_is_indexed(self, answer):
        """create_copy_index creates an index on orders that starts with customer_id"""
        db = self._database()
        self.call("create_copy_index", answer.create_copy_index, db)
        specs = index_specs(db.orders)
        if not any(spec.fields[:1] == ("customer_id",) for name, spec in specs.items() if name != "_id_"):
            found = "; ".join(f"{name} on {', '.join(spec.fields)}" for name, spec in specs.items())
            raise Incorrect(f"the update path finds orders by customer_id, so db.orders needs an index whose first "
                            f"key is customer_id; it has: {found}")
