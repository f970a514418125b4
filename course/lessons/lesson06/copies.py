"""Lesson 06, exercise 06.5: the copies that drifted, refreshed from their source.

The checks seed the shop's customers (without their embedded order history,
another finding) and orders, where some customers were renamed and two changed
their phone after their orders copied them, call ``refresh_copies(db)`` and
rerun the audit's ``copy_drift``; the hidden check uses another, smaller shop.
"""

from __future__ import annotations

from typing import Any

from course.engine.exercise import Incorrect, hidden, visible
from course.lessons.lesson06.shop import Repair, Variant, by_id, first_change
from course.lessons.lesson06.text import clipped

LEGACY = Variant("legacy", (("customers", 100), ("orders", 200)), tweak="_phones_changed")
OTHER = Variant("other shop", (("seed", 23), ("customers", 60), ("orders", 120)), tweak="_phones_changed")
COPIED = ("name", "phone")
#: The new phone numbers of the two customers who changed theirs (the customers of orders 1 and 2).
NEW_PHONES = ("07999 100001", "07999 100002")


def phones_changed(shop) -> list[int]:
    """Give the customers of orders 1 and 2 a new phone (their copies keep the old one); return their ids."""
    orders = shop.collections["orders"]
    changed = []
    for order, phone in zip(orders[:2], NEW_PHONES):
        for customer in shop.collections["customers"]:
            if customer["_id"] == order["customer_id"] and customer["_id"] not in changed:
                customer["phone"] = phone
                changed.append(customer["_id"])
    return changed


class RefreshCopies(Repair):
    id = "06.5"
    title = "Copies that drifted: refresh them from the source"
    answers = ("refresh_copies",)
    function = "refresh_copies"
    kind = "copy_drift"
    collections = ("customers", "orders")
    requirements = {
        "fresh": "every order's customer_copy holds its customer's current name and phone (the customer whose _id "
                 "is the order's customer_id): the audit no longer reports copy_drift, and an order page read from "
                 "the copy shows what the customer's own document says",
        "only": "nothing else changes: customer_copy keeps exactly its two fields, name and phone, and every other "
                "field of every order, and every customer, stays as it was",
    }
    hints = (
        "The update path of lesson 02: for each customer, update_many the orders whose customer_id is its _id.",
        "Set the two copied fields, never the whole customer: {'$set': {'customer_copy.name': c['name'], "
        "'customer_copy.phone': c['phone']}}. Setting is safe to repeat; project the customers to name and phone.",
    )
    solution_code = """
def refresh_copies(db):
    \"\"\"Set every order's customer_copy to its customer's current name and phone.\"\"\"
    for customer in db.customers.find({}, {"name": 1, "phone": 1}):
        db.orders.update_many(
            {"customer_id": customer["_id"]},
            {"$set": {"customer_copy.name": customer["name"], "customer_copy.phone": customer["phone"]}},
        )
"""

    @staticmethod
    def _phones_changed(shop) -> None:
        """Customers without their order history (another finding), two of them with a new phone."""
        for customer in shop.collections["customers"]:
            customer.pop("orders", None)
        phones_changed(shop)

    def reads_before(self, db: Any) -> dict:
        """The first 40 orders' customer as the customer's own document gives it."""
        reads = {}
        for order in by_id(db.orders, {"_id": {"$lte": 40}}, {"customer_id": 1}):
            source = db.customers.find_one({"_id": order["customer_id"]}, {"_id": 0, "name": 1, "phone": 1})
            reads[f"order {order['_id']}"] = source
        return reads

    def reads_after(self, db: Any) -> dict:
        """The same orders' customer as the order page shows it: from the copy."""
        reads = {}
        for order in by_id(db.orders, {"_id": {"$lte": 40}}, {"customer_copy": 1}):
            copy = order.get("customer_copy") or {}
            reads[f"order {order['_id']}"] = {k: copy[k] for k in COPIED if k in copy}
        return reads

    def check_reads(self, run, advice: str = "") -> None:
        """The order page (the copy) shows what the customer's own document says, in those words."""
        if not isinstance(run.after, str):
            for name, source in run.before.items():
                shown = run.after.get(name) or {}
                for field in COPIED:
                    if first_change((source or {}).get(field), shown.get(field)):
                        raise Incorrect(f"after {self.function}(db) the order page of {name} shows {field} "
                                        f"{clipped(shown.get(field), 40)}; its customer's own document says "
                                        f"{(source or {}).get(field)!r:.40}{advice}")
        super().check_reads(run, advice)

    def _fresh(self, answer, variant):
        run = self.run(answer, variant)
        customers = {c["_id"]: c for c in by_id(run.db.customers)}
        for order in by_id(run.db.orders, None, {"customer_id": 1, "customer_copy": 1}):
            if "customer_id" not in order:
                raise Incorrect(f"order {order['_id']} no longer has its customer_id: the copies are refreshed from "
                                "the customer it names, and nothing else of the order changes")
            source = customers.get(order["customer_id"])
            if source is None:
                raise Incorrect(f"order {order['_id']}'s customer_id is {clipped(order['customer_id'], 40)}, and no customer "
                                "has that _id any more")
            copy = order.get("customer_copy")
            for name in COPIED:
                if not isinstance(copy, dict) or first_change(source.get(name), copy.get(name)) is not None:
                    held = copy.get(name) if isinstance(copy, dict) else copy
                    said = f"has {name} {clipped(source[name], 40)}" if name in source else f"has no {name}"
                    raise Incorrect(f"order {order['_id']}'s customer_copy.{name} is {clipped(held, 40)}, but the "
                                    f"customer its customer_id names (customer {clipped(order['customer_id'], 40)}) {said}: "
                                    "each copy holds its own customer's current name and phone")
        self.check_audit(run, ": refresh every copy")
        self.check_reads(run, ": the order page reads the copy")

    def _only(self, answer, variant):
        run = self.run(answer, variant)
        for name, wanted in (("customers", run.seeded.collections["customers"]),
                             ("orders", run.seeded.collections["orders"])):
            found = {d["_id"]: d for d in by_id(run.db[name])}
            for document in wanted:
                now = found.get(document["_id"])
                if now is None:
                    raise Incorrect(f"{name[:-1]} {document['_id']} is gone: refreshing copies removes nothing")
                if name == "orders":
                    copy = now.get("customer_copy")
                    if isinstance(copy, dict) and sorted(copy) != sorted(COPIED):
                        raise Incorrect(f"order {document['_id']}'s customer_copy holds {sorted(copy)}; it copies "
                                        "name and phone only")
                    document = {k: v for k, v in document.items() if k != "customer_copy"}
                    now = {k: v for k, v in now.items() if k != "customer_copy"}
                difference = first_change(document, now)
                if difference:
                    beyond = " beyond its customer_copy" if name == "orders" else ""
                    raise Incorrect(f"{name[:-1]} {document['_id']} changed{beyond} ({difference}): change the "
                                    "copies only")
            if len(found) != len(wanted):
                raise Incorrect(f"{name} held {len(wanted)} documents and now holds {len(found)}")

    @visible(points=2, checks="fresh")
    def every_copy_is_fresh(self, answer):
        """The legacy shop: every copy is its customer's name and phone; the audit and the order page agree"""
        self._fresh(answer, LEGACY)

    @visible(points=1, checks="only")
    def nothing_else_changes(self, answer):
        """The legacy shop: the copy keeps its two fields, and nothing else changes"""
        self._only(answer, LEGACY)

    @hidden(points=1, checks="fresh")
    def other_copies_fresh(self, answer):
        """Another shop: every copy is fresh"""
        self._fresh(answer, OTHER)

    @hidden(points=1, checks="only")
    def other_shop_only_copies(self, answer):
        """Another shop: nothing but the copies changes"""
        self._only(answer, OTHER)
