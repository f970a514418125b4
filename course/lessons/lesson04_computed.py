"""Lesson 04, exercise 04.3: computed, totals at write time and a reconciliation job.

The counters are checked under a race (another client records an order between the learner's read
and write); reconciliation runs on set-up data with known drift, inserted in one ``insert_many``.
"""

from __future__ import annotations

import random
from typing import Any
from course.datasets_patterns import customers, new_orders
from course.exercise import Incorrect, hidden, visible
from course.lessons.lesson04_common import SharedRuns, data, is_int, ordered, seeded
from course.recording import RecordingDatabase

def _total(order: dict) -> int:
    return sum(item["qty"] * item["unitPrice"] for item in order["items"])


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
        "report": "reconcile returns the sorted list of the ids of the customers it fixed, [] when nothing "
                  "drifted",
    }
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
