"""Lesson 06, exercise 06.6: the unbounded order history moved out of the customers, a subset kept.

The checks seed a smaller shop's customers (25 of them, a business customer
among them, so the history has its long tail, in about 800 entries: mongoeco's
wire server, which the grader uses, inserts slowly into a growing collection),
call ``repair_orders(db)`` and rerun the audit's ``unbounded_array``; in it
customer 4 has no order yet and customers 1, 10 and 15 have three; the hidden
check uses another shop with such customers.  The shop keeps taking orders while the repair runs: two checks
(on a smaller shop, seeded once for both, to keep grading quick) push an order
onto every customer that still has the array between the repair's first read
and its first write (the course's race injector), run it again; then push one
more order each, stop a run at its first write to customers after a history
write, as a crash would, and run it again.
"""

from __future__ import annotations

import datetime
from typing import Any

from course.datasets.legacy_shop import NOW, RECENT_ORDERS
from course.engine.exercise import Incorrect, LearnerRaised, hidden, visible
from course.lessons.lesson06.shop import Repair, Variant, by_id, first_change
from course.lessons.lesson06.text import clipped
from course.engine.recording import RecordingDatabase, _Log

LEGACY = Variant("legacy", (("seed", 31), ("customers", 25)), tweak="_one_without_orders")
OTHER = Variant("other shop", (("seed", 12), ("customers", 30)), tweak="_short_histories")
#: the smaller shops the live checks seed (each check seeds it twice)
LIVE = Variant("live shop", (("seed", 31), ("customers", 8)))
LIVE_OTHER = Variant("another live shop", (("seed", 12), ("customers", 5)), tweak="_short_histories")
ENTRY = ("order_no", "placed_at", "total_pence")
#: the order the application places for each customer while the repair runs (the newest of all)
LATE_NO, LATE_AT = 100_000, NOW + datetime.timedelta(days=1)
PAGE = 10
_READ_CUSTOMERS = (1, 11, 20)


def _newest_first(entries: list[dict]) -> list[dict]:
    return sorted(entries, key=lambda e: (e["placed_at"], e["order_no"]), reverse=True)


def _recent_wrong(customer: dict, entries: list[dict], after: str = "") -> str:
    """What is wrong with ``customer``'s recent_orders, given every entry it has had (``after``: the story so
    far, for the message), or ""."""
    held = customer.get("recent_orders")
    where = f"{after}customer {customer['_id']}'s recent_orders"
    if not isinstance(held, list):
        return f"{after}customer {customer['_id']} has no recent_orders list (it has {clipped(held, 40)})"
    if len(held) != min(RECENT_ORDERS, len(entries)):
        return (f"{where} holds {len(held)} orders; it has had {len(entries)}, so it should hold the "
                f"{min(RECENT_ORDERS, len(entries))} newest")
    by_no = {e["order_no"]: e for e in entries}
    for entry in held:
        original = by_no.get(entry.get("order_no")) if isinstance(entry, dict) else None
        difference = first_change(original, entry) if original is not None else "it is no order of theirs"
        if difference:
            return f"{where} holds {clipped(entry, 80)}, not an order as it was ({difference})"
    dates = [e["placed_at"] for e in held]
    if dates != sorted(dates, reverse=True):
        return f"{where} is not newest first: its placed_at dates run {', '.join(f'{d:%Y-%m-%d}' for d in dates)}"
    kept = {e["order_no"] for e in held}
    newer = [e for e in entries if e["order_no"] not in kept and dates and e["placed_at"] > dates[-1]]
    if newer:
        return (f"{where} leaves out order {newer[0]['order_no']} of {newer[0]['placed_at']:%Y-%m-%d}, newer than "
                f"one it keeps: keep the {RECENT_ORDERS} newest")
    return ""


class StoppedHere(Exception):
    """Raised into the repair by the check, at its first write to customers after a history write (a crash)."""


def _writes_history(op) -> bool:
    return op.kind == "write" and (op.collection == "order_history" or (
        op.method == "aggregate" and "order_history" in repr(op.argument("pipeline"))))


class _StopAtCustomers(_Log):
    """A recording log that stops the run at its first write to customers that follows a history write."""

    def record(self, op) -> None:
        if op.kind == "write" and op.collection == "customers" and not _writes_history(op) \
                and any(_writes_history(o) for o in self.ops):
            raise StoppedHere("the check stopped the repair here, as a crash would")
        super().record(op)


def _history(db: Any) -> list[str]:
    """db.order_history's documents without their _id, as sorted reprs (a sorted multiset)."""
    return sorted(repr(sorted((k, v) for k, v in d.items() if k != "_id")) for d in db.order_history.find({}))


class RepairOrders(Repair):
    id = "06.6"
    title = "The unbounded order history: its own collection, a subset kept"
    answers = ("repair_orders",)
    function = "repair_orders"
    kind = "unbounded_array"
    collections = ("customers",)
    requirements = {
        "moved": "every entry of every customer's orders is a document of db.order_history: {customer_id, "
                 "order_no, placed_at, total_pence} (and an _id of its own); none lost, none twice; a customer's "
                 "history page (the 10 newest) gives the answer it gave from the embedded array",
        "recent": f"each customer gets recent_orders: its {RECENT_ORDERS} newest entries, newest first, as they "
                  f"were (all of them when it has fewer than {RECENT_ORDERS}; orders of the same day in any order)",
        "removed": "customers no longer hold the orders array, and nothing else of theirs changes: the audit no "
                   "longer reports unbounded_array in customers",
        "twice": "running it a second time raises nothing and changes nothing",
        "live": "the shop keeps taking orders while it runs: an order pushed onto a customer's orders between the "
                "repair's read and its write is never lost (when the repair returns it is in db.order_history or "
                "still in the customer's orders), and the next run moves it",
        "crash": "a run stopped part-way (at its first write to customers after a history write) and then run "
                 "again leaves no entry twice in db.order_history",
    }
    hints = (
        "For each customer that still has orders: write one order_history document per entry, with the "
        "customer's _id as customer_id, then update the customer.",
        "Make the copy safe to run again after an interruption: key each history document by its customer and "
        "order number (an _id such as f\"{customer_id}-{order_no}\", replaced with upsert=True; or a unique "
        "index on (customer_id, order_no) and upserts by those two fields), so a retried copy replaces, never "
        "duplicates.",
        "An order placed after your read is in the array, not in what you read: remove only the entries you "
        "copied, {'$pullAll': {'orders': entries}} (or, as a customer's order numbers only grow, $pull those up "
        "to the highest you copied), and remove the array only once it is empty, in an update "
        "whose filter says so ({'_id': ..., 'orders': []}).",
        f"recent_orders is the entries sorted by placed_at, newest first, cut to {RECENT_ORDERS}; on a later run, "
        "sort the recent_orders already there together with the entries moved now.",
        "Select only the customers that still have the array, find({'orders': {'$exists': True}}): a second run "
        "then finds nothing to move, and cannot empty recent_orders.",
    )
    solution_code = """
def repair_orders(db):
    \"\"\"Move each customer's embedded orders to db.order_history; keep the five newest in the customer.\"\"\"
    from pymongo import ReplaceOne

    for customer in db.customers.find({"orders": {"$exists": True}}, {"orders": 1, "recent_orders": 1}):
        entries = customer["orders"]
        if entries:  # keyed by customer and order number: a copy run again replaces, never duplicates
            db.order_history.bulk_write([
                ReplaceOne({"_id": f"{customer['_id']}-{entry['order_no']}"},
                           {"customer_id": customer["_id"], **entry}, upsert=True)
                for entry in entries])
        recent = customer.get("recent_orders", []) + entries  # a later run adds the orders placed since
        newest = sorted(recent, key=lambda entry: entry["placed_at"], reverse=True)[:5]
        # remove only what was copied: an order pushed since the read has a higher number and stays for the
        # next run ({"$pullAll": {"orders": entries}} says the same without relying on the numbers)
        copied = max((entry["order_no"] for entry in entries), default=0)
        db.customers.update_one({"_id": customer["_id"]},
                                {"$set": {"recent_orders": newest},
                                 "$pull": {"orders": {"order_no": {"$lte": copied}}}})
        db.customers.update_one({"_id": customer["_id"], "orders": []}, {"$unset": {"orders": ""}})
"""

    @staticmethod
    def _one_without_orders(shop) -> None:
        """Customer 4 has no order yet (customers 1, 10 and 15 have three each already)."""
        shop.collections["customers"][3]["orders"] = []

    @staticmethod
    def _short_histories(shop) -> None:
        """Customer 2 has no order yet; customer 3 has three."""
        customers = shop.collections["customers"]
        customers[1]["orders"] = []
        customers[2]["orders"] = customers[2]["orders"][:3] or customers[0]["orders"][:3]

    def reads_before(self, db: Any) -> dict:
        """A few customers' history pages (the 10 newest), from the embedded array; and a customer by email."""
        reads = {"customer_by_email": db.customers.find_one({"email": "customer1@example.com"}, {"name": 1})}
        for customer_id in _READ_CUSTOMERS:
            customer = db.customers.find_one({"_id": customer_id}, {"orders": 1}) or {}
            page = _newest_first(customer.get("orders", []))[:PAGE]
            reads[f"history of customer {customer_id}"] = [{k: e[k] for k in ENTRY} for e in page]
        return reads

    def reads_after(self, db: Any) -> dict:
        """The same reads, the pages from db.order_history."""
        reads = {"customer_by_email": db.customers.find_one({"email": "customer1@example.com"}, {"name": 1})}
        for customer_id in _READ_CUSTOMERS:
            page = db.order_history.find({"customer_id": customer_id}, {"_id": 0, **{k: 1 for k in ENTRY}}) \
                .sort([("placed_at", -1), ("order_no", -1)]).limit(PAGE)
            reads[f"history of customer {customer_id}"] = [{k: e.get(k) for k in ENTRY} for e in page]
        return reads

    @staticmethod
    def _seeded_customers(run) -> dict:
        return {c["_id"]: c for c in run.seeded.collections["customers"]}

    def _moved(self, answer, variant):
        run = self.run(answer, variant)
        wanted = {(c["_id"], e["order_no"]): {"customer_id": c["_id"], **e}
                  for c in run.seeded.collections["customers"] for e in c["orders"]}
        seen = set()
        for document in by_id(run.db.order_history):
            entry = {k: v for k, v in document.items() if k != "_id"}
            key = (entry.get("customer_id"), entry.get("order_no"))
            if key in seen:
                raise Incorrect(f"order {key[1]} of customer {key[0]} is in db.order_history twice: move each "
                                "entry once")
            seen.add(key)
            if key not in wanted:
                raise Incorrect(f"db.order_history holds {clipped(entry, 120)}, which is no customer's order: each document "
                                "is {customer_id, order_no, placed_at, total_pence}")
            difference = first_change(wanted[key], entry)
            if difference:
                raise Incorrect(f"order {key[1]} of customer {key[0]} in db.order_history is not the entry plus its "
                                f"customer_id ({difference})")
        lost = sorted(set(wanted) - seen)
        if lost:
            raise Incorrect(f"{len(lost)} of {len(wanted)} orders are not in db.order_history (order {lost[0][1]} of "
                            f"customer {lost[0][0]} among them): move every entry of every customer")
        self.check_reads(run, ": the history page reads db.order_history")

    def _recent(self, answer, variant):
        run = self.run(answer, variant)
        seeded = self._seeded_customers(run)
        for customer in by_id(run.db.customers, None, {"recent_orders": 1}):
            wrong = _recent_wrong(customer, seeded[customer["_id"]]["orders"])
            if wrong:
                raise Incorrect(wrong)

    def _removed(self, answer, variant):
        run = self.run(answer, variant)
        seeded = self._seeded_customers(run)
        for customer in by_id(run.db.customers):
            if "orders" in customer:
                raise Incorrect(f"customer {customer['_id']} still holds orders ({len(customer['orders'])} entries): "
                                "remove the array once its entries are in db.order_history")
            before = {k: v for k, v in seeded[customer["_id"]].items() if k != "orders"}
            now = {k: v for k, v in customer.items() if k != "recent_orders"}
            difference = first_change(before, now)
            if difference:
                raise Incorrect(f"customer {customer['_id']} changed beyond its orders ({difference})")
        if len(seeded) != run.db.customers.count_documents({}):
            raise Incorrect(f"{len(seeded)} customers were seeded, {run.db.customers.count_documents({})} are left")
        self.check_audit(run, "")

    def _placed_meanwhile(self, answer, db) -> dict:
        """The repair run on ``db`` with an order pushed onto every customer that still has the array between
        its first read and its first write; returns {customer: the order pushed}."""
        late: dict = {}

        def order_placed():
            for customer in db.customers.find({"orders": {"$exists": True}}, {"_id": 1}):
                entry = {"order_no": LATE_NO, "placed_at": LATE_AT, "total_pence": 90_000 + customer["_id"]}
                db.customers.update_one({"_id": customer["_id"]}, {"$push": {"orders": entry}})
                late[customer["_id"]] = entry

        self.repair(answer, RecordingDatabase(db, race=order_placed))
        return late

    def _scenario(self, answer, variant) -> dict[str, str]:
        """The live shop's story, once per variant: an order placed while the repair runs, the next run; then
        one more order for each customer, a run stopped at its first write to customers after a history
        write (as a crash would stop it) and a whole run.  Returns what went wrong: {"live": ..., "crash": ...}."""
        cache = self._scenarios
        if cache is Repair._scenarios:  # outside evaluate (an assertion called alone): a cache of its own
            cache = self._scenarios = {}
        if variant not in cache:
            db, shop = self.seed(variant)
            live, recent = self._live_story(answer, db, shop)
            cache[variant] = {"live": live, "recent": recent, "crash": self._crash_story(answer, db)}
        return cache[variant]

    def _live_story(self, answer, db, shop) -> tuple[str, str]:
        """(what went wrong with the order placed meanwhile, what is wrong with recent_orders after the next
        run: the five newest of the seeded entries and the order placed since)."""
        late = self._placed_meanwhile(answer, db)
        race = "an order was placed for every customer (pushed onto its orders) after your first read and before "

        def copied(entry) -> bool:
            return db.order_history.count_documents({"order_no": entry["order_no"],
                                                     "total_pence": entry["total_pence"]}) > 0
        for customer_id, entry in sorted(late.items()):
            held = (db.customers.find_one({"_id": customer_id}, {"orders": 1}) or {}).get("orders") or []
            if not copied(entry) and not any(isinstance(e, dict) and e.get("order_no") == LATE_NO for e in held):
                return (f"{race}your first write: customer {customer_id}'s order {LATE_NO} is neither in "
                        "db.order_history nor in its orders any more: it was lost (the update removed entries it "
                        "had not copied)"), ""
        self.call(self.function, getattr(answer, self.function), db)
        for customer_id, entry in sorted(late.items()):
            if not copied(entry):
                return (f"{race}your first write; the next run left customer {customer_id}'s order {LATE_NO} out "
                        "of db.order_history: a later run moves what is still embedded"), ""
        seeded = {c["_id"]: c["orders"] for c in shop.collections["customers"]}
        story = "after a run during which an order was placed for every customer, and a next run that moved it, "
        for customer in by_id(db.customers, None, {"recent_orders": 1}):
            wrong = _recent_wrong(customer, seeded[customer["_id"]] + [late[customer["_id"]]]
                                  if customer["_id"] in late else seeded[customer["_id"]], story)
            if wrong:
                return "", wrong
        return "", ""

    def _crash_story(self, answer, db) -> str:
        """One more order for every customer, a run stopped part-way, a whole run: no history document twice
        (entries differ by customer and order number, so one run never writes two alike)."""
        for customer in db.customers.find({}, {"_id": 1}):
            entry = {"order_no": LATE_NO + 1, "placed_at": LATE_AT, "total_pence": 80_000 + customer["_id"]}
            db.customers.update_one({"_id": customer["_id"]}, {"$push": {"orders": entry}})
        recorded = RecordingDatabase(db)
        recorded._log = _StopAtCustomers(None)
        stopped = self.call(self.function, getattr(answer, self.function), recorded, expect_raise=True)
        if not isinstance(stopped, LearnerRaised):
            return ""  # it never wrote to customers after a history write: nothing to stop
        self.call(self.function, getattr(answer, self.function), db)
        history = _history(db)
        twice = next((d for d, e in zip(history, history[1:]) if d == e), None)
        if twice is None:
            return ""
        return ("the check stopped a run at its first write to customers, as a crash would, then ran it again: "
                f"db.order_history holds {twice[:120]} {history.count(twice)} times (the history copied before "
                "the stop was copied again)")

    def _live(self, answer, variant):
        wrong = self._scenario(answer, variant)["live"]
        if wrong:
            raise Incorrect(wrong)

    def _recent_later(self, answer, variant):
        wrong = self._scenario(answer, variant)["recent"]
        if wrong:
            raise Incorrect(wrong)

    def _crash(self, answer, variant):
        wrong = self._scenario(answer, variant)["crash"]
        if wrong:
            raise Incorrect(wrong)

    @visible(points=2, checks="moved")
    def every_order_moved(self, answer):
        """The shop's customers: every order is in db.order_history once; the history pages agree"""
        self._moved(answer, LEGACY)

    @visible(points=2, checks="recent")
    def five_newest_kept(self, answer):
        """Each customer keeps its five newest orders, newest first; all three of three, none of none"""
        self._recent(answer, LEGACY)

    @visible(points=1, checks="removed")
    def array_removed(self, answer):
        """The orders array is gone, nothing else changed, and the audit reports no unbounded array"""
        self._removed(answer, LEGACY)

    @visible(points=1, checks="twice")
    def second_run_changes_nothing(self, answer):
        """A second run raises nothing and changes nothing"""
        self.check_twice(answer, LEGACY, ": on a second run no customer holds orders any more; move only what "
                                         "is still embedded")

    @visible(points=2, checks="live")
    def order_placed_meanwhile_kept(self, answer):
        """A smaller shop: an order placed while the repair runs is not lost, and the next run moves it"""
        self._live(answer, LIVE)

    @visible(points=1, checks="crash")
    def rerun_after_a_stop(self, answer):
        """A smaller shop: a run stopped part-way and run again copies no entry twice"""
        self._crash(answer, LIVE)

    @hidden(points=1, checks="moved")
    def other_orders_moved(self, answer):
        """Another shop, a customer without orders and one with three: every order moved"""
        self._moved(answer, OTHER)

    @hidden(points=1, checks="recent")
    def short_histories_kept(self, answer):
        """Another shop: no order gives an empty recent_orders, three give all three"""
        self._recent(answer, OTHER)

    @hidden(points=1, checks="removed")
    def other_arrays_removed(self, answer):
        """Another shop: every orders array is gone"""
        self._removed(answer, OTHER)

    @hidden(points=1, checks="twice")
    def other_shop_twice(self, answer):
        """Another shop: a second run changes nothing"""
        self.check_twice(answer, OTHER, ": move only what is still embedded")

    @hidden(points=1, checks="live")
    def other_order_placed_meanwhile(self, answer):
        """Another smaller shop: an order placed while the repair runs is not lost"""
        self._live(answer, LIVE_OTHER)

    @visible(points=1, checks="recent")
    def recent_after_a_later_run(self, answer):
        """A smaller shop: after a later run moves an order placed since, recent_orders is still the five newest"""
        self._recent_later(answer, LIVE)

    @hidden(points=1, checks="crash")
    def other_rerun_after_a_stop(self, answer):
        """Another smaller shop: a run stopped part-way and run again copies no entry twice"""
        self._crash(answer, LIVE_OTHER)
