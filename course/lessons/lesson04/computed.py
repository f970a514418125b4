"""Lesson 04, exercise 04.3: computed, totals at write time and a reconciliation job.

The counters are checked under a race (another client records an order between the learner's read
and write); reconciliation runs on set-up data with known drift, inserted in one ``insert_many``, and,
since the application keeps recording orders while it runs, under two races too: orders recorded just
before its first write (after it read and counted), and orders recorded between its first two reads.
"""

from __future__ import annotations

import random
from typing import Any
from course.datasets.patterns import customers, new_orders
from course.engine.exercise import Incorrect, hidden, visible
from course.lessons.lesson04.common import SharedRuns, data, is_int, ordered, seeded
from course.engine.recording import Op, RecordingDatabase, _Log

def _total(order: dict) -> int:
    return sum(item["qty"] * item["unitPrice"] for item in order["items"])


def _amount(v: Any) -> str:
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else repr(v)


def _orders(n: Any) -> str:
    return "1 order" if n == 1 else f"{n!r} orders"


def _stats(orders: list[dict], customer_ids) -> dict:
    found = {c: {"orderCount": 0, "totalSpent": 0} for c in customer_ids}
    for order in orders:
        found[order["customerId"]]["orderCount"] += 1
        found[order["customerId"]]["totalSpent"] += _total(order)
    return found


def _consistent(n_customers: int, n_orders: int, seed: int) -> dict[str, list[dict]]:
    """Customers whose stats match their orders (which carry their totals), as collection -> documents."""
    orders = [{**o, "total": _total(o)} for o in new_orders(n_orders, list(range(1, min(n_customers, 10) + 1)),
                                                              seed=seed)]
    profiles = customers(n_customers)
    truth = _stats(orders, range(1, n_customers + 1))
    for profile in profiles:
        profile["stats"] = dict(truth[profile["_id"]])
    return {"customers": profiles, "orders": orders}


def _drifted(case: int) -> dict[str, list[dict]]:
    """Customers (in shuffled order) and orders with totals, some customers' stats drifted: case 1 or 2.

    Case 1 drifts customers 3 (an order without its $inc), 6 (a wrong $inc) and 11 (stats but no orders);
    case 2 drifts customers 2 (count only), 9 and 12.
    """
    found = _consistent(12, 30, 44 + case)
    profiles, orders = found["customers"], found["orders"]
    by_customer = {p["_id"]: p for p in profiles}
    if case == 1:
        by_customer[3]["stats"]["orderCount"] -= 1
        by_customer[3]["stats"]["totalSpent"] -= next(o["total"] for o in orders if o["customerId"] == 3)
        by_customer[6]["stats"]["totalSpent"] += 1
        by_customer[11]["stats"] = {"orderCount": 2, "totalSpent": 5}
    else:
        by_customer[2]["stats"]["orderCount"] += 1
        by_customer[9]["stats"] = {"orderCount": 0, "totalSpent": 0}
        by_customer[12]["stats"]["totalSpent"] = 90_000
    random.Random(case).shuffle(profiles)
    return {"customers": profiles, "orders": orders}


DRIFTED = {1: [3, 6, 11], 2: [2, 9, 12]}
#: customers that the application records an order for while reconcile runs: the drifted ones and one in step
LIVE = {1: [3, 5, 6, 11], 2: [2, 4, 9, 12]}
#: when those orders land: before reconcile's first write, or between its first two reads
LIVE_MOMENTS = {"write": "after reconcile had read and counted, just before its first write",
                "read": "between reconcile's first two reads (the stats and the orders, in whichever order)"}


class _RaceBetweenReads(_Log):
    """A race log that runs the race once, just before a read that follows another read with no write yet."""

    def record(self, op: Op) -> None:
        if op.kind == "read" and self.race is not None and not self.raced and self.ops \
                and all(o.kind == "read" for o in self.ops):
            self.raced = True
            self.race()
        self.ops.append(op)


def _watched(db: Any, race, moment: str) -> RecordingDatabase:
    """``db`` recorded, with ``race`` run at ``moment`` ("write": before the first write after a read; "read")."""
    watched = RecordingDatabase(db, race=race)
    if moment == "read":
        watched._log = _RaceBetweenReads(race)
    return watched


class Computed(SharedRuns):
    id = "04.3"
    title = "Computed: totals at write time, and a reconciliation job"
    answers = ("record_order", "reconcile")
    requirements = {
        "total": "each order is stored with total, the integer sum of qty * unitPrice over its items",
        "stats": "record_order adds 1 to the customer's stats.orderCount and the total to stats.totalSpent",
        "increment": "the stats are incremented by the update itself, so an order recorded by another client at "
                     "the same moment still counts (no read-then-write)",
        "fix": "reconcile sets every drifted customer's stats to what db.orders says (0 and 0 for a customer "
               "without orders)",
        "live": "reconcile runs while the application records orders: an order recorded while it runs (between "
                "its reads, or between its reads and its writes) still counts in the stats it leaves",
        "report": "reconcile returns the sorted list of the ids of the customers it fixed, [] when nothing "
                  "drifted",
    }
    hints = (
        "record_order: total = sum of qty * unitPrice, stored in the order; then $inc the customer's "
        "stats.orderCount by 1 and stats.totalSpent by the total.",
        "reconcile: one aggregation groups db.orders by customerId ($sum: 1 and $sum: '$total').",
        "Compare each customer's stats with the recomputed values (a customer without orders should have 0 and 0), "
        "$set the right values where they differ, and return the sorted list of the ids you fixed.",
        "While reconcile runs, orders keep arriving. Read a customer's stats before you count its orders, and write "
        "the fix only if the stats are still the ones you read (put them in the update's filter); when nothing "
        "matched, an order landed in between: read the stats again, count again, try again.",
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
    # Orders keep arriving meanwhile, so each fix is a compare-and-set: written only if the stats are still
    # the ones read before the orders were counted; read and counted again if not.
    def counted(customer_id):
        rows = list(db.orders.aggregate([
            {"$match": {"customerId": customer_id}},
            {"$group": {"_id": None, "orderCount": {"$sum": 1}, "totalSpent": {"$sum": "$total"}}},
        ]))
        if not rows:
            return {"orderCount": 0, "totalSpent": 0}
        return {"orderCount": rows[0]["orderCount"], "totalSpent": rows[0]["totalSpent"]}

    fixed = []
    for customer in db.customers.find({}, {"stats": 1}):
        seen = customer.get("stats") or {}  # read first, then count: an order landing between shows up below
        while True:
            right = counted(customer["_id"])
            if [seen.get("orderCount"), seen.get("totalSpent")] == [right["orderCount"], right["totalSpent"]]:
                break
            done = db.customers.update_one(
                {"_id": customer["_id"], "stats.orderCount": seen.get("orderCount"),
                 "stats.totalSpent": seen.get("totalSpent")},
                {"$set": {"stats": right}},
            )
            if done.matched_count:
                fixed.append(customer["_id"])
                break
            # the stats changed since they were read (an order was recorded): read them again, count again
            seen = (db.customers.find_one({"_id": customer["_id"]}, {"stats": 1}) or {}).get("stats") or {}
    return sorted(fixed)
"""

    def _recorded(self, answer, n: int, seed: int = 44):
        """``n`` orders recorded through record_order (once per evaluation; each assertion gets a copy)."""
        orders = data(new_orders, n, tuple(range(1, 9)), seed)

        def run():
            db = seeded(self.lab, customers=data(customers, 8))
            for order in orders:
                self.call("record_order", answer.record_order, db, dict(order))
            return db

        return self.replay((n, seed), ("customers", "orders"), run), orders

    def _check_totals(self, db, orders):
        for order in orders:
            stored = db.orders.find_one({"_id": order["_id"]})
            if stored is None:
                raise Incorrect(f"record_order should insert order {order['_id']} into db.orders")
            total = stored.get("total")
            if not is_int(total):
                raise Incorrect(f"order {order['_id']} should store total as an integer (prices are integers); it "
                                f"stores {total!r} ({type(total).__name__})")
            if total != _total(order):
                raise Incorrect(f"order {order['_id']} stores total {total}; its items add up to {_total(order)} "
                                "(the sum of qty * unitPrice)")

    @visible(points=2, checks="total")
    def totals_at_write_time(self, answer):
        """Six orders: each stores its total"""
        db, orders = self._recorded(answer, 6)
        self._check_totals(db, orders)

    @hidden(points=1, checks="total")
    def many_totals(self, answer):
        """Twelve other orders: each stores its total"""
        db, orders = self._recorded(answer, 12, seed=9)
        self._check_totals(db, orders)

    def _check_stats(self, db, orders):
        # the stats add the total the order was stored with (a wrong total is the total requirement's fault)
        stored = {o["_id"]: o.get("total") for o in db.orders.find({}, {"total": 1})}
        counted = [{**o, "items": [{"qty": 1, "unitPrice": stored[o["_id"]]}]}
                   if isinstance(stored.get(o["_id"]), (int, float)) else o for o in orders]
        for customer_id, want in sorted(_stats(counted, range(1, 9)).items()):
            stats = (db.customers.find_one({"_id": customer_id}) or {}).get("stats") or {}
            for field in ("orderCount", "totalSpent"):
                if stats.get(field) != want[field]:
                    raise Incorrect(f"customer {customer_id} placed {_orders(want['orderCount'])} worth "
                                    f"{want['totalSpent']}, but stats.{field} says {stats.get(field)!r}: each order "
                                    "adds one to orderCount and its total to totalSpent")

    @visible(points=2, checks="stats")
    def stats_count_each_order(self, answer):
        """Six orders: every customer's stats count them"""
        db, orders = self._recorded(answer, 6)
        self._check_stats(db, orders)

    @hidden(points=1, checks="stats")
    def stats_after_many_orders(self, answer):
        """Twelve other orders over eight customers: the stats match"""
        db, orders = self._recorded(answer, 12, seed=9)
        self._check_stats(db, orders)

    def _check_race(self, answer, customer_id: int, seed: int):
        db = seeded(self.lab, customers=data(customers, 8))
        order = next(o for o in data(new_orders, 40, tuple(range(1, 9)), seed) if o["customerId"] == customer_id)
        competing = 70_000

        def another_order():
            db.customers.update_one({"_id": customer_id},
                                    {"$inc": {"stats.orderCount": 1, "stats.totalSpent": competing}})

        watched = RecordingDatabase(db, race=another_order)
        self.call("record_order", answer.record_order, watched, dict(order))
        want = {"orderCount": 1 + watched.raced, "totalSpent": _total(order) + competing * watched.raced}
        stats = (db.customers.find_one({"_id": customer_id}) or {}).get("stats") or {}
        if watched.raced and (stats.get("orderCount"), stats.get("totalSpent")) != tuple(want.values()):
            raise Incorrect(f"another client recorded an order of customer {customer_id} ({competing}) at once, "
                            "between your read of the customer and your write; the stats say "
                            f"{_orders(stats.get('orderCount'))} worth {stats.get('totalSpent')}, not both orders "
                            f"({want['orderCount']} worth {want['totalSpent']}): the stats must count every order "
                            "while others are recorded, which reading them and writing them back cannot ensure")

    @visible(points=2, checks="increment")
    def concurrent_orders_both_count(self, answer):
        """An order recorded by another client at the same moment still counts"""
        self._check_race(answer, 3, 44)

    @hidden(points=1, checks="increment")
    def concurrent_orders_other_customer(self, answer):
        """The same race on another customer"""
        self._check_race(answer, 6, 9)

    def _drift_db(self, case: int):
        documents = data(_drifted, case)
        return seeded(self.lab, **documents), _stats(documents["orders"], range(1, 13))

    def _check_fix(self, answer, case: int):
        db, truth = self._drift_db(case)
        self.call("reconcile", answer.reconcile, db)
        for customer_id, want in sorted(truth.items()):
            stats = (db.customers.find_one({"_id": customer_id}) or {}).get("stats") or {}
            for field in ("orderCount", "totalSpent"):
                if stats.get(field) != want[field]:
                    without = " (a customer without orders has 0 and 0)" if not want["orderCount"] else ""
                    raise Incorrect(f"after reconcile customer {customer_id}'s stats.{field} is "
                                    f"{stats.get(field)!r}, but db.orders says {want[field]}{without}: reconcile "
                                    "leaves every customer's stats as db.orders gives them")

    @visible(points=2, checks="fix")
    def reconcile_fixes_the_drift(self, answer):
        """A skipped $inc, a wrong $inc and stats without orders: reconcile fixes them all"""
        self._check_fix(answer, 1)

    @hidden(points=1, checks="fix")
    def reconcile_fixes_other_drift(self, answer):
        """Other drifted customers (a count only, stats reset, a wrong total): all fixed"""
        self._check_fix(answer, 2)

    def _final_stats(self, db) -> dict[int, tuple]:
        return {c["_id"]: ((c.get("stats") or {}).get("orderCount"), (c.get("stats") or {}).get("totalSpent"))
                for c in db.customers.find({}, {"stats": 1})}

    def _check_live(self, answer, case: int, moment: str):
        # Judged against the same answer's run without the race, so that a fix it gets wrong (the fix
        # requirement's fault) is not blamed on the race: the orders recorded meanwhile must come on top.
        quiet, _ = self._drift_db(case)
        self.call("reconcile", answer.reconcile, quiet)
        alone = self._final_stats(quiet)
        db, _ = self._drift_db(case)
        arrived = [{"_id": 9000 + customer_id, "customerId": customer_id, "status": "PLACED", "total": 7_000,
                    "items": [{"sku": "SKU-001", "qty": 2, "unitPrice": 3_500}]} for customer_id in LIVE[case]]

        def the_application_records_orders():
            for order in arrived:
                db.orders.insert_one(dict(order))
                db.customers.update_one({"_id": order["customerId"]},
                                        {"$inc": {"stats.orderCount": 1, "stats.totalSpent": order["total"]}})

        watched = _watched(db, the_application_records_orders, moment)
        self.call("reconcile", answer.reconcile, watched)
        if not watched.raced:
            return  # no second read (or no write): nothing could land in that window
        for customer_id, got in sorted(self._final_stats(db).items()):
            count, spent = alone.get(customer_id, (None, None))
            extra = customer_id in LIVE[case]
            want = (count + 1, spent + 7_000) if extra and isinstance(count, int) and isinstance(spent, int) \
                else (count, spent)
            if got != want:
                raise Incorrect(f"the application recorded {len(arrived)} orders worth 7,000 each "
                                f"{LIVE_MOMENTS[moment]}, {'one' if extra else 'none'} of them for customer "
                                f"{customer_id}; afterwards "
                                f"its stats say {_orders(got[0])} worth {_amount(got[1])}, but with no order arriving "
                                f"reconcile left {_orders(count)} worth {_amount(spent)}, so the stats should say "
                                f"{_orders(want[0])} worth {_amount(want[1])}: a fix worked out before an order landed "
                                "must not be written over that order")

    @visible(points=2, checks="live")
    def reconcile_while_orders_arrive(self, answer):
        """Orders recorded while reconcile runs (before its writes, or between its reads) still count"""
        for moment in LIVE_MOMENTS:
            self._check_live(answer, 1, moment)

    @hidden(points=1, checks="live")
    def reconcile_while_other_orders_arrive(self, answer):
        """The same two moments on other drifted customers"""
        for moment in LIVE_MOMENTS:
            self._check_live(answer, 2, moment)

    def _check_report(self, answer, case: int):
        db, _ = self._drift_db(case)
        got = self.call("reconcile", answer.reconcile, db)
        if not isinstance(got, list):
            raise Incorrect(f"reconcile should return a list of customer ids; it returned a {type(got).__name__}: "
                            f"{got!r:.80}")
        want = DRIFTED[case]
        if ordered(got) != want:
            raise Incorrect(f"reconcile returned {got}; the customers that drifted (and that it should have fixed) "
                            f"are {want}")
        if got != want:
            raise Incorrect(f"reconcile returned {got}: return the ids sorted, {want}")

    @visible(points=1, checks="report")
    def reconcile_reports(self, answer):
        """reconcile returns the sorted ids it fixed, and [] when nothing drifted"""
        self._check_report(answer, 1)
        clean = self.call("reconcile", answer.reconcile, seeded(self.lab, **data(_consistent, 12, 20, 7)))
        if clean != []:
            raise Incorrect(f"on data where nothing drifted reconcile returned {clean!r:.80}: return []")

    @hidden(points=1, checks="report")
    def reconcile_reports_other_drift(self, answer):
        """Other drifted customers: the sorted list of their ids"""
        self._check_report(answer, 2)
