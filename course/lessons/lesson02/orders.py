"""Exercise 02.1, orders with their lines: the bounded list embedded, the unbounded one referenced.

place_order and add_line are run against a seeded scratch database; add_line is also run through a
recording wrapper that injects a competing add_line between a read and a write, on an order with room for
both (a lost amount, or a compare-and-set that gives up, shows there) and on one the other add fills (an
overshoot shows there).  The size rule is tried with an order just over 16 MiB, which pymongo itself lets
through, so only a check before the write (insert_one_checked) refuses it, on every path.
"""

from __future__ import annotations

from typing import Any

from course.datasets.orders import MAX_LINES
from course.engine.exercise import Exercise, Incorrect, LearnerCodeError, hidden, visible
from course.lessons.lesson02.checks import (amount, changed_fields, field_difference, line, lines, order,
                                            oversized_line, raised_by, said, same, seed_customers, shown, snapshot,
                                            snapshot_difference, typed)
from course.engine.recording import RecordingDatabase
from course.toolkit.sizes import MAX_BSON_SIZE, bson_size


class OrdersWithLines(Exercise):
    id = "02.1"
    title = "Orders embed their lines, customers do not embed their orders"
    answers = ("place_order", "add_line")
    requirements = {
        "order": "place_order stores one document in db.orders: _id, schema_version 1 (an int), customer_id, "
                 "placed_at and the lines embedded as given",
        "total": "the order's total_pence is the int sum of qty * price_pence over its lines",
        "bound": f"place_order raises ValueError, writing nothing, for an order with no lines or more than "
                 f"MAX_LINES ({MAX_LINES}) lines; exactly MAX_LINES lines is allowed",
        "customer": "place_order never writes to the customer (the order references it by customer_id)",
        "size": "place_order writes with insert_one_checked: an order over 16 MiB raises DocumentTooLarge "
                "and is neither sent nor stored",
        "add": "add_line pushes the line onto the order's lines, adds qty * price_pence to total_pence, "
               "and returns True",
        "full": "add_line returns False, changing nothing, when the order already holds MAX_LINES lines "
                "(an order of MAX_LINES - 1 lines still takes one)",
        "missing": "add_line returns False and creates nothing for an order that does not exist",
        "atomic": "add_line changes the lines and the total in one update, so a competing add_line between "
                  "a read and your write can neither push the order past MAX_LINES, nor be lost (its line or its "
                  "amount), nor make yours fail while the order has room",
    }
    hints = (
        "An order is read with its lines: embed them as a list in the order document, and store the order "
        "in db.orders with a customer_id. Never push anything into the customer.",
        f"Refuse (raise ValueError) an order with no line or more than MAX_LINES ({MAX_LINES}) lines, "
        "before writing anything.",
        "add_line is one update_one: the filter finds the order only while lines.<MAX_LINES - 1> does not "
        "exist, and the update both $push-es the line and $inc-s total_pence by qty * price_pence. Return "
        "whether it modified the order.",
    )
    solution_code = """
from course.toolkit.sizes import insert_one_checked

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

    # ---- helpers ----------------------------------------------------------------
    def _database(self, *orders: dict):
        db = self.lab.scratch()
        db.customers.insert_many(seed_customers(5))
        if orders:
            db.orders.insert_many(list(orders))
        return db

    def _stored(self, answer, db, customer_id, order_id, order_lines, placed_at) -> dict:
        """Place an order that must be accepted; return the stored document."""
        call = f"place_order(db, {customer_id!r}, {order_id!r}, <{len(order_lines)} lines>, {placed_at!r})"
        raised = raised_by(self.call("place_order", answer.place_order, db, customer_id, order_id,
                                     [dict(item) for item in order_lines], placed_at, expect_raise=True))
        if raised is not None:
            raise LearnerCodeError(f"{call} raised {said(raised)}", raised)
        stored = db.orders.find_one({"_id": order_id})
        if stored is None:
            raise Incorrect(f"after {call}, db.orders holds no document with _id {order_id!r}")
        return stored

    def _expect_order(self, stored: dict, customer_id, order_id, order_lines, placed_at) -> None:
        expected = {"_id": order_id, "schema_version": 1, "customer_id": customer_id, "placed_at": placed_at,
                    "lines": order_lines}
        difference = field_difference(expected, stored)
        if difference:
            raise Incorrect(f"order {order_id!r} {difference}")

    def _expect_total(self, stored: dict, order_lines) -> None:
        want = amount(order_lines)
        got = stored.get("total_pence")
        if not same(want, got):
            shown_got = typed(got) if got == want else shown(got)
            raise Incorrect(f"order {stored['_id']!r} has total_pence {shown_got}: it should be the int sum of "
                            f"qty * price_pence over its {len(order_lines)} lines")

    def _expect_refused(self, answer, db, order_lines, what) -> None:
        watched = RecordingDatabase(db)
        before = db.orders.count_documents({})
        raised = raised_by(self.call("place_order", answer.place_order, watched, 1, 777,
                                     [dict(item) for item in order_lines], 5, expect_raise=True))
        if raised is None:
            raise Incorrect(f"place_order accepted an order with {what}: raise ValueError")
        if not raised.is_a("ValueError"):
            raise Incorrect(f"an order with {what} should raise ValueError, not {raised.type_name}")
        written = [f"{op.collection}.{op.method}" for op in watched.ops() if op.kind == "write"]
        if written or db.orders.count_documents({}) != before:
            raise Incorrect(f"place_order refused the order with {what}, but wrote first "
                            f"({', '.join(written) or 'db.orders'}): check the lines before writing anything")

    def _add(self, answer, db, order_id, new_line, situation: str) -> Any:
        """Call add_line; an upsert's DuplicateKeyError becomes 'do not upsert', other raises an error."""
        value = self.call("add_line", answer.add_line, db, order_id, dict(new_line), expect_raise=True)
        raised = raised_by(value)
        if raised is None:
            return value
        if raised.is_a("DuplicateKeyError"):
            raise Incorrect(f"add_line(db, {order_id!r}, line) on {situation} raised DuplicateKeyError: the update "
                            "upserted, so when its filter matched nothing it tried to insert a second order with "
                            "that _id. Do not upsert: add_line only changes an order that exists and has room")
        raise LearnerCodeError(f"add_line(db, {order_id!r}, line) on {situation} raised {said(raised)}", raised)

    def _expect_accepted(self, returned, stored_before, stored_after, new_line, situation) -> None:
        if returned is not True:
            raise Incorrect(f"add_line on {situation} should return True, got {typed(returned)}")
        want = stored_before["lines"] + [new_line]
        if stored_after.get("lines") != want:
            got = stored_after.get("lines")
            count = len(got) if isinstance(got, list) else shown(got)
            raise Incorrect(f"after add_line on {situation} the order should hold its {len(want)} lines, the new "
                            f"one last; it holds {count}")
        total = stored_before["total_pence"] + new_line["qty"] * new_line["price_pence"]
        got = stored_after.get("total_pence")
        if not same(total, got):
            raise Incorrect(f"after adding {new_line['qty']} x {new_line['price_pence']} to a total of "
                            f"{stored_before['total_pence']}, total_pence should be {total}; found "
                            f"{typed(got) if got == total else shown(got)}")

    def _expect_refused_line(self, returned, stored_before, stored_after, situation) -> None:
        if stored_after != stored_before:
            fields = changed_fields(stored_before, stored_after or {})
            count = len(stored_after.get("lines", [])) if stored_after else 0
            raise Incorrect(f"add_line on {situation} changed the order ({', '.join(fields)}; it now holds "
                            f"{count} lines): an order holds at most MAX_LINES ({MAX_LINES}) lines")
        if returned is not False:
            raise Incorrect(f"add_line on {situation} should return False, got {typed(returned)}")

    # ---- place_order ----------------------------------------------------------
    @visible(points=2, checks="order")
    def stores_one_order_document(self, answer):
        """place_order stores the order as one document in db.orders, its lines embedded"""
        order_lines = [line(4, 2, 300), line(9, 1, 1250), line(2, 3, 99)]
        stored = self._stored(answer, self._database(), 3, 501, order_lines, 42)
        self._expect_order(stored, 3, 501, order_lines, 42)

    @hidden(points=1, checks="order")
    def stores_other_orders(self, answer):
        """Other ids and days: a string order id, one line"""
        order_lines = [line(7, 1, 1999)]
        stored = self._stored(answer, self._database(), 5, "A-77", order_lines, 400)
        self._expect_order(stored, 5, "A-77", order_lines, 400)

    @visible(points=1, checks="total")
    def total_is_the_sum_of_lines(self, answer):
        """total_pence is the sum of qty * price_pence"""
        order_lines = [line(4, 2, 300), line(9, 1, 1250), line(2, 3, 99)]
        self._expect_total(self._stored(answer, self._database(), 3, 502, order_lines, 42), order_lines)

    @hidden(points=1, checks="total")
    def total_of_a_long_order(self, answer):
        """The total of an order of 30 lines of several quantities"""
        order_lines = [line(k, k % 4 + 1, 100 + 7 * k) for k in range(1, 31)]
        self._expect_total(self._stored(answer, self._database(), 2, 503, order_lines, 7), order_lines)

    @visible(points=2, checks="bound")
    def refuses_too_few_or_too_many_lines(self, answer):
        """No lines or MAX_LINES + 1 lines: ValueError, nothing written; exactly MAX_LINES: accepted"""
        db = self._database()
        self._expect_refused(answer, db, [], "no lines")
        self._expect_refused(answer, db, lines(MAX_LINES + 1), f"{MAX_LINES + 1} lines")
        raised = raised_by(self.call("place_order", answer.place_order, db, 1, 778, lines(MAX_LINES), 5,
                                     expect_raise=True))
        if raised is not None:
            raise Incorrect(f"an order of exactly MAX_LINES ({MAX_LINES}) lines is allowed, but place_order "
                            f"raised {raised.type_name}")

    @hidden(points=1, checks="bound")
    def bound_on_other_sizes(self, answer):
        """MAX_LINES + 7 lines are refused; a single line is accepted"""
        db = self._database()
        self._expect_refused(answer, db, lines(MAX_LINES + 7), f"{MAX_LINES + 7} lines")
        raised = raised_by(self.call("place_order", answer.place_order, db, 2, 779, lines(1), 5, expect_raise=True))
        if raised is not None:
            raise Incorrect(f"an order of 1 line is allowed, but place_order raised {raised.type_name}")

    def _expect_customer_untouched(self, answer, count: int) -> None:
        db = self._database()
        watched = RecordingDatabase(db)
        before = db.customers.find_one({"_id": 4})
        for k in range(count):
            raised = raised_by(self.call("place_order", answer.place_order, watched, 4, 600 + k, [line(k % 7 + 1)],
                                         10 + k, expect_raise=True))
            if raised is not None:
                raise LearnerCodeError(f"place_order(db, 4, {600 + k}, <1 line>, {10 + k}) raised {said(raised)}",
                                       raised)
        written = sorted({op.method for op in watched.ops() if op.kind == "write" and op.collection == "customers"})
        if written or db.customers.find_one({"_id": 4}) != before:
            raise Incorrect(f"placing {count} orders for customer 4 wrote to db.customers "
                            f"({', '.join(written) or 'the customer changed'}): a customer's orders grow without "
                            "bound, so the order references the customer (customer_id) and the customer is "
                            "never written")

    @visible(points=1, checks="customer")
    def never_writes_the_customer(self, answer):
        """Placing orders leaves the customer document alone"""
        self._expect_customer_untouched(answer, 3)

    @hidden(points=1, checks="customer")
    def many_orders_later(self, answer):
        """Forty orders later the customer is still untouched"""
        self._expect_customer_untouched(answer, 40)

    def _expect_too_large(self, answer, order_id, order_lines) -> None:
        """An order just over 16 MiB, below what pymongo itself refuses: only a check before the write stops it."""
        db = self._database()
        watched = RecordingDatabase(db)
        size = bson_size(order(order_id, order_lines))
        raised = raised_by(self.call("place_order", answer.place_order, watched, 1, order_id,
                                     [dict(item) for item in order_lines], 5, expect_raise=True))
        what = f"an order of about {size:,} bytes of BSON (over 16 MiB, {MAX_BSON_SIZE:,} bytes)"
        if db.orders.count_documents({"_id": order_id}):
            raise Incorrect(f"place_order stored {what}: a server refuses any document over 16 MiB, and the "
                            "statement has place_order refuse it with DocumentTooLarge before it is written")
        if raised is None:
            raise Incorrect(f"place_order returned for {what} without raising: the DocumentTooLarge refusal "
                            "should reach the caller")
        if not raised.is_a("DocumentTooLarge"):
            raise Incorrect(f"for {what} place_order raised {raised.type_name}, not DocumentTooLarge: the statement "
                            "has insert_one_checked refuse it before anything is sent")
        sent = [f"{op.collection}.{op.method}" for op in watched.ops() if op.kind == "write"]
        if sent:
            raise Incorrect(f"place_order sent {what} to the database ({', '.join(sent)}) before it was refused: "
                            "the statement has insert_one_checked refuse it before anything is sent")

    @visible(points=1, checks="size")
    def refuses_an_order_over_16_mib(self, answer):
        """An order just over 16 MiB raises DocumentTooLarge and is not sent"""
        self._expect_too_large(answer, 990, [oversized_line()])

    # ---- add_line -------------------------------------------------------------
    @visible(points=1, checks="add")
    def add_line_adds_the_line_and_its_amount(self, answer):
        """add_line appends the line, adds its amount to the total and returns True"""
        before = order(8, [line(1, 1, 500)])
        db = self._database(before)
        new_line = line(6, 3, 120)
        returned = self._add(answer, db, 8, new_line, "an order of 1 line")
        self._expect_accepted(returned, before, db.orders.find_one({"_id": 8}), new_line, "an order of 1 line")

    @hidden(points=1, checks="add")
    def add_line_twice(self, answer):
        """Two lines in a row on an order of 10"""
        before = order(18, lines(10))
        db = self._database(before)
        for new_line in (line(70, 2, 333), line(71, 4, 25)):
            returned = self._add(answer, db, 18, new_line, f"an order of {len(before['lines'])} lines")
            after = db.orders.find_one({"_id": 18})
            self._expect_accepted(returned, before, after, new_line, f"an order of {len(before['lines'])} lines")
            before = after

    @visible(points=2, checks="full")
    def add_line_stops_at_max_lines(self, answer):
        """An order of MAX_LINES - 1 lines takes one more line; then it is full and refuses the next"""
        before = order(9, lines(MAX_LINES - 1))
        db = self._database(before)
        situation = f"an order of {MAX_LINES - 1} lines"
        returned = self._add(answer, db, 9, line(901, 2, 10), situation)
        after = db.orders.find_one({"_id": 9})
        if returned is not True or len(after.get("lines", [])) != MAX_LINES:
            raise Incorrect(f"add_line on {situation} should add the line (the order may hold {MAX_LINES}) and "
                            f"return True; it returned {typed(returned)} and the order holds "
                            f"{len(after.get('lines', []))} lines")
        returned = self._add(answer, db, 9, line(902, 2, 10), f"a full order ({MAX_LINES} lines)")
        self._expect_refused_line(returned, after, db.orders.find_one({"_id": 9}), f"a full order ({MAX_LINES} lines)")

    @hidden(points=1, checks="full")
    def a_full_order_refuses_every_line(self, answer):
        """An order stored with exactly MAX_LINES lines refuses three lines in a row"""
        before = order(10, lines(MAX_LINES))
        db = self._database(before)
        for k in range(3):
            returned = self._add(answer, db, 10, line(950 + k), f"a full order ({MAX_LINES} lines)")
            self._expect_refused_line(returned, before, db.orders.find_one({"_id": 10}),
                                      f"a full order ({MAX_LINES} lines)")

    def _expect_missing(self, answer, order_id) -> None:
        db = self._database(order(1, lines(2)))
        before = snapshot(db, ("orders", "customers"))
        returned = self._add(answer, db, order_id, line(3), f"an order that does not exist ({order_id!r})")
        difference = snapshot_difference(before, snapshot(db, ("orders", "customers")))
        if difference:
            raise Incorrect(f"add_line(db, {order_id!r}, line) for an order that does not exist changed the data "
                            f"({difference}): do not upsert, change nothing")
        if returned is not False:
            raise Incorrect(f"add_line(db, {order_id!r}, line) for an order that does not exist should return "
                            f"False, got {typed(returned)}")

    @visible(points=1, checks="missing")
    def add_line_on_an_unknown_order(self, answer):
        """add_line on an order that does not exist returns False and creates nothing"""
        self._expect_missing(answer, 12345)

    @hidden(points=1, checks="missing")
    def add_line_on_another_unknown_order(self, answer):
        """Another unknown order id, a string"""
        self._expect_missing(answer, "o-404")

    @visible(points=1, checks="atomic")
    def add_line_is_one_update(self, answer):
        """The line and the total change in a single update"""
        db = self._database(order(5, [line(1)]))
        watched = RecordingDatabase(db)
        self._add(answer, watched, 5, line(2, 2, 50), "an order of 1 line")
        writes = watched.updates()
        if len(writes) != 1:
            made = ", ".join(f"{w.collection}.{w.via or w.method}" for w in writes) or "none"
            raise Incorrect(f"add_line made {len(writes)} writes ({made}): a reader between two writes sees the "
                            "line without its amount; change the lines and the total together in one update")

    def _race(self, answer, start: int) -> None:
        """add_line on an order of ``start`` lines, another add_line injected between a read and a write."""
        db = self._database(order(6, lines(start)))
        theirs = line(800, 1, 100)

        def competing_add_line():
            db.orders.update_one({"_id": 6, f"lines.{MAX_LINES - 1}": {"$exists": False}},
                                 {"$push": {"lines": theirs}, "$inc": {"total_pence": 100}})

        watched = RecordingDatabase(db, race=competing_add_line)
        mine = line(801, 2, 10)
        situation = f"an order of {start} lines"
        returned = self._add(answer, watched, 6, mine, situation)
        if not watched.raced:  # no read before the write: nothing to race with
            return
        after = db.orders.find_one({"_id": 6})
        ids = [item.get("product_id") for item in after.get("lines", [])]
        race = f"another add_line landed on {situation} between your read and your write"
        if theirs["product_id"] not in ids:
            raise Incorrect(f"{race}, and your write lost its line: the stored lines no longer hold it")
        if len(ids) > MAX_LINES:
            raise Incorrect(f"{race} and filled it ({MAX_LINES} lines); your write then pushed line {len(ids)}: "
                            "the length you read was out of date when you wrote")
        total, summed = after.get("total_pence"), amount(after.get("lines", []))
        if total != summed:
            raise Incorrect(f"{race}: total_pence is now {shown(total)}, but the lines add up to {summed}: the "
                            "amount of one of the two adds was lost")
        if start + 1 < MAX_LINES and mine["product_id"] not in ids:
            raise Incorrect(f"{race}, leaving room for one more, and add_line did not add its own line (it "
                            f"returned {typed(returned)}): a concurrent add_line must not make yours fail while "
                            "the order has room")
        if returned is not (mine["product_id"] in ids):
            raise Incorrect(f"add_line returned {typed(returned)}, but its line was "
                            f"{'added' if mine['product_id'] in ids else 'not added'} (another add_line filled "
                            "the order first): what it returns should say what its update did")

    @visible(points=2, checks="atomic")
    def concurrent_add_line(self, answer):
        """Another add_line between your read and your write: room for both, then for one only"""
        self._race(answer, 10)
        self._race(answer, MAX_LINES - 1)
