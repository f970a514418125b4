"""Lesson 08, exercise 08.5: copies kept fresh by a change stream, stopped and resumed.

The consumer's loop is the course's (:func:`follow`): it opens ``customers.watch(**watch_options(token))``,
hands each event to ``apply_change(orders, event)`` and saves the event's resume token after it.  The
learner writes the two parts a consumer decides: where the stream resumes, and how an event changes the
copies.  The loop runs where the checks run (the stream is the checks' own, in ``check()`` and in ``course
grade``), so the checks can stop it between any two events, or after an event was applied but before its
token was saved, and start it again, deterministically.

mongoeco records change events only while some stream is open on the engine (writes made with none open
leave a gap, and resuming across it fails with "resume token is no longer available"), where a server's
oplog keeps them whatever is open: :func:`history_kept` holds a stream open for the check's whole run, as
the oplog would, so a consumer stopped between events can resume on both.

Each part is judged with the course's own version of the other, so a mistake in one never shows as the
other's: the resume options with the course's applier (which reads the customer itself), the applier with
events the course's stream delivered.

One module past 400 lines on purpose: exercise 08.5's checks stop and restart the consumer at several
points, and each stop point's check reads with the stream and applier it drives.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

from course.store.capabilities import Capability
from course.engine.exercise import Exercise, Incorrect, Unsupported, hidden, visible
from course.lessons.lesson04.common import data, seeded
from course.lessons.lesson08.data import shop_customers, shop_orders
from course.engine.recording import RecordingCollection

POLL_MS = 0  #: how long an empty poll waits in the checks: every write is made before the loop runs
EVENT_FIELDS = ("_id", "operationType", "documentKey", "fullDocument", "ns")
WATCH_OPTIONS = ("resume_after", "start_after", "full_document", "pipeline", "max_await_time_ms",
                 "start_at_operation_time", "batch_size", "full_document_before_change", "show_expanded_events")


#: full_document modes that read a recorded post-image (MongoDB 6.0+), not the document at delivery
POST_IMAGE_MODES = ("whenAvailable", "required")


class Stopped(Exception):
    """The check stopped the consumer (a deploy, a crash)."""


@contextmanager
def history_kept(collection: Any) -> Iterator[None]:
    """Keep ``collection``'s change history while the block runs (an open stream: mongoeco records events only
    while one is open; a server's oplog keeps them anyway, so there it costs one idle cursor)."""
    keeper = collection.watch(max_await_time_ms=POLL_MS)
    try:
        yield
    finally:
        keeper.close()


def plain_event(event: dict) -> dict:
    """The parts of a change event the consumer reads, as plain data (it crosses to the learner's kernel)."""
    kept = {k: event[k] for k in EVENT_FIELDS if k in event}
    if isinstance(kept.get("ns"), dict):
        kept["ns"] = {k: str(v) for k, v in kept["ns"].items()}
    return kept


def reference_apply(orders: Any, event: dict) -> None:
    """The course's applier: the copies of the event's customer take its name and phone; a deleted customer's
    orders keep the name and lose the phone; an insert has no orders to change."""
    kind = event.get("operationType")
    who = (event.get("documentKey") or {}).get("_id")
    if kind in ("update", "replace"):
        customer = event.get("fullDocument")
        if customer is None:
            return  # deleted since: the delete event that follows removes the phone
        orders.update_many({"customerId": who}, {"$set": {"customer.name": customer.get("name"),
                                                            "customer.phone": customer.get("phone")}})
    elif kind == "delete":
        orders.update_many({"customerId": who}, {"$unset": {"customer.phone": ""}})


def expected_copies(customers: list[dict], orders: list[dict], deleted: set) -> dict:
    """What every order's copy should be, by order _id, given the source customers now."""
    now = {c["_id"]: c for c in customers}
    want = {}
    for order in orders:
        who = order["customerId"]
        if who in deleted:
            want[order["_id"]] = {"name": order["customer"]["name"]}
        else:
            want[order["_id"]] = {"name": now[who]["name"], "phone": now[who]["phone"]}
    return want


def follow(source: Any, orders: Any, saved: dict, options: Callable[[Any], Any],
           apply: Callable[[Any, dict], Any], *, stop_after: int | None = None, crash_after: int | None = None,
           delivered: list | None = None, meanwhile: Callable[[], Any] | None = None) -> int:
    """The consumer's loop: resume from ``saved["token"]``, apply each event, save its token after it.

    ``stop_after`` stops it (Stopped) once that many events were applied and saved; ``crash_after`` once that
    many were applied, the last one before its token was saved.  ``delivered`` collects each event's token as
    the stream gives it; ``meanwhile`` runs once the stream is open, before the first event is read (the
    writers at work while a consumer that just started waits).  Returns the number of events applied.
    """
    kwargs = options(saved.get("token"))
    if not isinstance(kwargs, dict):
        raise Incorrect(f"watch_options should return a dict of watch() keyword arguments; got {kwargs!r:.100}")
    unknown = sorted(set(kwargs) - set(WATCH_OPTIONS))
    if unknown:
        raise Incorrect(f"watch_options returned {', '.join(unknown)}, which watch() does not take")
    # the loop polls without waiting: a learner's max_await_time_ms (None waits for ever on mongoeco, and a
    # server waits 1 s per empty getMore without it) is the loop's business, not the answer's
    kwargs = {**kwargs, "max_await_time_ms": POLL_MS}
    try:
        stream = source.watch(**kwargs)
    except Exception as error:  # noqa: BLE001 - the server's refusal is the verdict's business
        code = getattr(error, "code", None)
        if code in (40573, 20):
            raise Unsupported(reason="change streams need a replica set: this server is a standalone mongod "
                                     "(start it with --replSet rs0, then rs.initiate())") from error
        raise Incorrect(f"source.watch(**{kwargs!r:.100}) raised {type(error).__name__}: {error}") from error
    applied = 0
    try:
        if meanwhile is not None:
            meanwhile()
        while True:
            event = stream.try_next()
            if event is None:
                return applied
            if delivered is not None:
                delivered.append(event["_id"])
            apply(orders, plain_event(event))
            applied += 1
            if crash_after is not None and applied >= crash_after:
                raise Stopped("crash before saving the token")
            saved["token"] = event["_id"]
            if stop_after is not None and applied >= stop_after:
                raise Stopped("stopped between events")
    finally:
        stream.close()


#: the writers' changes, in batches; the consumer runs after each batch, stopped where the plan says
def _writes(customers: Any, variant: int) -> list[list[Callable[[], Any]]]:
    c = customers
    first = [lambda: c.update_one({"_id": 1}, {"$set": {"name": "Ana Lima"}}),
             lambda: c.update_one({"_id": 2}, {"$set": {"phone": "+55 21 90000-0002"}}),
             lambda: c.insert_one({"_id": 7, "name": "Customer 7", "phone": "+55 11 90007-0007"}),
             lambda: c.update_one({"_id": 1}, {"$set": {"phone": "+55 11 91111-1111"}})]
    second = [lambda: c.replace_one({"_id": 3}, {"name": "Carla Dias", "phone": "+55 31 93333-3333"}),
              lambda: c.delete_one({"_id": 4}),
              lambda: c.update_one({"_id": 5}, {"$set": {"name": "Eva Reis"}})]
    third = [lambda: c.update_one({"_id": 2}, {"$set": {"name": "Bruno Melo"}}),
             lambda: c.update_one({"_id": 6}, {"$set": {"name": "Fábio", "phone": "+55 41 96666-6666"}})]
    batches = [first, second, third]
    return batches if variant == 0 else [batches[1], batches[0] + batches[2]]


def _lookup_apply(source: Any) -> Callable[[Any, dict], None]:
    """The course's applier reading the customer itself (so the resume check needs no fullDocument)."""
    def apply(orders: Any, event: dict) -> None:
        who = (event.get("documentKey") or {}).get("_id")
        current = source.find_one({"_id": who})
        if event.get("operationType") in ("update", "replace") and current is not None:
            event = {**event, "fullDocument": current}
        reference_apply(orders, event)
    return apply


class ChangeStreamCopies(Exercise):
    id = "08.5"
    title = "Copies kept fresh by a change stream"
    answers = ("watch_options", "apply_change")
    requires = frozenset({Capability.CHANGE_STREAMS})
    requirements = {
        "resume": "watch_options(token) makes the stream resume just after the saved token (and, for None, start "
                  "where the stream is now): stopped between events and started again, the consumer misses no "
                  "change and is given none twice",
        "lookup": "watch_options asks for update events to carry the customer as it is now (fullDocument)",
        "apply": "apply_change(orders, event) brings the copies of the event's customer up to date: an update or "
                 "a replace sets customer.name and customer.phone of that customer's orders from fullDocument, a "
                 "delete removes customer.phone and keeps the name, an insert changes nothing; other orders and "
                 "fields are left alone",
        "idempotent": "applying an event a second time (a consumer stopped after applying it, before saving its "
                      "token) changes nothing, and an update event whose fullDocument is None (the customer was "
                      "deleted since) changes nothing and raises nothing",
    }
    hints = (
        "watch(resume_after=token) starts after that event; with token None, leave it out.",
        "full_document='updateLookup' puts the document in update events.",
        "update_many({'customerId': id}, {'$set': {'customer.name': ..., 'customer.phone': ...}}) is the same "
        "however often it runs; $unset for a delete.",
    )
    solution_code = """
def watch_options(token):
    \"\"\"Keyword arguments of customers.watch(): resume after token, with the whole customer on updates.\"\"\"
    options = {"full_document": "updateLookup"}
    if token is not None:
        options["resume_after"] = token
    return options


def apply_change(orders, event):
    \"\"\"Bring the orders' copies of one customer up to date with one change event.\"\"\"
    kind = event["operationType"]
    customer_id = event["documentKey"]["_id"]
    if kind in ("update", "replace"):
        customer = event.get("fullDocument")
        if customer is None:  # deleted since: its delete event follows
            return
        orders.update_many({"customerId": customer_id},
                           {"$set": {"customer.name": customer["name"], "customer.phone": customer["phone"]}})
    elif kind == "delete":
        orders.update_many({"customerId": customer_id}, {"$unset": {"customer.phone": ""}})
"""

    def _options(self, answer) -> Callable[[Any], Any]:
        return lambda token: self.call("watch_options", answer.watch_options, token)

    # ---- resume -----------------------------------------------------------------------------------
    def _run_plan(self, answer, variant, stops):
        db = seeded(self.lab, customers=data(shop_customers), orders=data(shop_orders))
        with history_kept(db.customers):
            self._run_plan_on(db, answer, variant, stops)

    def _run_plan_on(self, db, answer, variant, stops):
        saved: dict = {}
        delivered: list = []
        apply = _lookup_apply(db.customers)
        options = self._options(answer)
        made = 0
        for number, (batch, stop) in enumerate(zip(_writes(db.customers, variant), stops)):
            def write(batch=batch):
                for change in batch:
                    change()
            if number > 0:  # made while the consumer is stopped
                write()
            made += len(batch)
            try:  # the first run starts where the stream is now, then the writers write
                follow(db.customers, db.orders, saved, options, apply, stop_after=stop, delivered=delivered,
                       meanwhile=write if number == 0 else None)
            except Stopped:
                pass
        for _ in range(made):  # start it again until it has nothing left
            if follow(db.customers, db.orders, saved, options, apply, delivered=delivered) == 0:
                break
        seen = [repr(sorted(t.items())) if isinstance(t, dict) else repr(t) for t in delivered]
        twice = len(seen) - len(set(seen))
        if twice:
            raise Incorrect(f"stopped and started again, the consumer was given {twice} events twice "
                            f"({len(seen)} deliveries of {made} changes): resume after the saved token "
                            "(resume_after=token), not at or before it")
        if len(seen) < made:
            raise Incorrect(f"stopped and started again, the consumer was given {len(seen)} of the {made} changes: "
                            "the ones made while it was stopped were missed (resume after the saved token instead "
                            "of opening the stream at the present)")

    @visible(points=2, checks="resume")
    def resumes_after_stops(self, answer):
        """Stopped after 1 and 2 events of two batches, then started again: every change, once"""
        self._run_plan(answer, 0, (1, 2, None))

    @hidden(points=1, checks="resume")
    def resumes_other_stops(self, answer):
        """Other batches, stopped after 3 events"""
        self._run_plan(answer, 1, (3, 1))

    @visible(points=1, checks="lookup")
    def update_events_carry_documents(self, answer):
        """Update events come with the customer (fullDocument)"""
        db = seeded(self.lab, customers=data(shop_customers))
        with history_kept(db.customers):
            self._check_lookup(db, answer)

    def _check_lookup(self, db, answer):
        opened = db.customers.watch(max_await_time_ms=POLL_MS)
        try:
            db.customers.update_one({"_id": 1}, {"$set": {"name": "Ana Lima"}})
            token = opened.try_next()["_id"]
        finally:
            opened.close()
        db.customers.update_one({"_id": 2}, {"$set": {"name": "Bruno Melo"}})
        kwargs = self.call("watch_options", answer.watch_options, token)
        if not isinstance(kwargs, dict):
            raise Incorrect(f"watch_options should return a dict of watch() keyword arguments; got {kwargs!r:.100}")
        mode = kwargs.get("full_document", "default")
        if mode in POST_IMAGE_MODES:  # mongoeco fills these in as updateLookup; a server needs post-images
            raise Incorrect(f"full_document={mode!r} gives update events the post-image only where the collection "
                            "records pre- and post-images (changeStreamPreAndPostImages, MongoDB 6.0+), which "
                            "customers does not: there a server's update events have no fullDocument "
                            + ("at all" if mode == "whenAvailable" else "and the stream fails")
                            + "; the customer as it is now is what a lookup at delivery reads")
        try:  # the course resumes the stream itself: only the learner's full_document is judged here
            stream = db.customers.watch(resume_after=token, full_document=mode, max_await_time_ms=POLL_MS)
        except Exception as error:  # noqa: BLE001 - an unknown mode is refused by the server
            raise Incorrect(f"watch(full_document={mode!r}) raised {type(error).__name__}: {error}") from error
        try:
            event = stream.try_next()
        finally:
            stream.close()
        if event is None or not isinstance(event.get("fullDocument"), dict):
            raise Incorrect(f"with full_document={mode!r}, the update event of customer 2 has no fullDocument: a "
                            "server sends only the changed fields unless watch() asks for "
                            "full_document='updateLookup'")

    # ---- apply -----------------------------------------------------------------------------------
    def _events(self, writes: Callable[[Any], None]) -> list[dict]:
        """The events the course's own stream delivers for ``writes`` on a fresh copy of the customers."""
        db = seeded(self.lab, customers=data(shop_customers))
        stream = db.customers.watch(full_document="updateLookup", max_await_time_ms=POLL_MS)
        try:
            writes(db.customers)
            return [plain_event(e) for e in iter(stream.try_next, None)]
        finally:
            stream.close()

    def _applied(self, answer, events: list[dict], times: int = 1):
        """The orders after ``apply_change`` ran on each event (each ``times`` times in a row)."""
        db = seeded(self.lab, orders=data(shop_orders))
        orders = RecordingCollection(db.orders)
        for event in events:
            for _ in range(times):
                self.call("apply_change", answer.apply_change, orders, dict(event))
        return {o["_id"]: o for o in db.orders.find()}

    def _compare(self, got: dict, want_customers: dict, deleted: set, what: str) -> None:
        known = {order["_id"] for order in data(shop_orders)}
        added = [got[i] for i in got if i not in known]
        if added:
            raise Incorrect(f"{what}, orders holds {len(added)} order(s) it did not hold before, such as "
                            f"{ {k: v for k, v in added[0].items() if k != '_id'}!r:.100}: a change of a customer "
                            "changes its orders' copies, it never adds an order")
        for order in data(shop_orders):
            if order["_id"] not in got:
                raise Incorrect(f"{what}, order {order['_id']} (customer {order['customerId']}) is gone: a change "
                                "of the customer changes its orders' copies, never the orders themselves")
            copy = got[order["_id"]].get("customer")
            who = order["customerId"]
            if who in deleted:
                want = {"name": order["customer"]["name"]}
            elif who in want_customers:
                want = {"name": want_customers[who]["name"], "phone": want_customers[who]["phone"]}
            else:
                want = order["customer"]
            if copy != want:
                extra = sorted(set(copy) - set(want)) if isinstance(copy, dict) else []
                raise Incorrect(f"{what}, order {order['_id']} (customer {who}) holds customer {copy!r:.100}; "
                                f"expected {want!r}" + (f": the copy holds the name and phone only, not "
                                                        f"{', '.join(map(str, extra))}" if extra else ""))
            others = {k: v for k, v in got[order["_id"]].items() if k != "customer"}
            if others != {k: v for k, v in order.items() if k != "customer"}:
                raise Incorrect(f"{what}, order {order['_id']}'s other fields changed: {others!r:.100}")

    @visible(points=2, checks="apply")
    def applies_each_kind(self, answer):
        """An update, a replace (with a field not copied), a delete, an insert; two customers of one name"""
        def writes(c):
            c.update_one({"_id": 1}, {"$set": {"name": "Ana Lima"}})
            c.replace_one({"_id": 3}, {"name": "Carla Dias", "phone": "+55 31 93333-3333",
                                       "email": "carla@example.com"})
            c.delete_one({"_id": 4})
            c.insert_one({"_id": 9, "name": "Customer 9", "phone": "+55 11 90009-0009"})
            c.update_one({"_id": 5}, {"$set": {"name": "Ana Lima", "phone": "+55 51 95555-0005"}})
        events = self._events(writes)
        customers = {c["_id"]: c for c in data(shop_customers)}
        want = {1: {**customers[1], "name": "Ana Lima"}, 3: {"name": "Carla Dias", "phone": "+55 31 93333-3333"},
                5: {"name": "Ana Lima", "phone": "+55 51 95555-0005"}}
        self._compare(self._applied(answer, events), want, {4}, "after an update, a replace, a delete, an insert "
                      "and a second customer named Ana Lima")

    @hidden(points=1, checks="apply")
    def applies_phone_changes(self, answer):
        """Phone changes of two customers, one of them twice"""
        def writes(c):
            c.update_one({"_id": 2}, {"$set": {"phone": "+55 21 90000-0002"}})
            c.update_one({"_id": 5}, {"$set": {"phone": "+55 51 95555-5555", "name": "Eva Reis"}})
            c.update_one({"_id": 2}, {"$set": {"phone": "+55 21 92222-2222"}})
        events = self._events(writes)
        customers = {c["_id"]: c for c in data(shop_customers)}
        want = {2: {**customers[2], "phone": "+55 21 92222-2222"},
                5: {"name": "Eva Reis", "phone": "+55 51 95555-5555"}}
        self._compare(self._applied(answer, events), want, set(), "after three updates")

    def _check_twice(self, answer, writes):
        """Each event applied twice in a row leaves the orders as applying it once did (whatever that was: the
        rule on what it should be is "apply"'s)."""
        events = self._events(writes)
        once, twice = self._applied(answer, events), self._applied(answer, events, times=2)
        known = {order["_id"] for order in data(shop_orders)}
        for order_id in sorted(known):
            if once.get(order_id) != twice.get(order_id):
                raise Incorrect(f"applying each event twice (a consumer stopped after applying one, before saving "
                                f"its token) left order {order_id} as "
                                f"{(twice.get(order_id) or {}).get('customer')!r:.100}; "
                                f"applied once, {(once.get(order_id) or {}).get('customer')!r:.100}: the second "
                                "time must change nothing")
        added = [sorted(repr(sorted((k, v) for k, v in o.items() if k != "_id")) for o in run.values()
                        if o["_id"] not in known) for run in (once, twice)]
        if added[0] != added[1]:  # orders an applier added (apply's rule) are compared without their new _ids
            raise Incorrect(f"applying each event twice (a consumer stopped after applying one, before saving "
                            f"its token) added {len(added[1])} order(s) where applying it once added "
                            f"{len(added[0])}: the second time must change nothing")

    @visible(points=2, checks="idempotent")
    def applying_twice(self, answer):
        """Each event applied twice, and an update whose customer is gone"""
        def writes(c):
            c.update_one({"_id": 1}, {"$set": {"name": "Ana Lima"}})
            c.delete_one({"_id": 4})
            c.insert_one({"_id": 9, "name": "Customer 9", "phone": "+55 11 90009-0009"})
        self._check_twice(answer, writes)
        gone = {"_id": {"_data": "replayed"}, "operationType": "update", "documentKey": {"_id": 2},
                "fullDocument": None, "ns": {"db": "shop", "coll": "customers"}}
        self._compare(self._applied(answer, [gone]), {}, set(),
                      "after an update event whose fullDocument is None (customer 2 deleted since)")

    @hidden(points=1, checks="idempotent")
    def replaying_a_batch(self, answer):
        """A batch of a replace and updates replayed whole"""
        def writes(c):
            c.replace_one({"_id": 3}, {"name": "Carla Dias", "phone": "+55 31 93333-3333"})
            c.update_one({"_id": 6}, {"$set": {"name": "Fábio"}})
            c.update_one({"_id": 3}, {"$set": {"phone": "+55 31 90000-0000"}})
        self._check_twice(answer, writes)
