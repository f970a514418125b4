"""Lab 05, exercise 05.4: a resumable, idempotent background batch job.

The check hands the job its own ``sleep`` and ``log``.  Each call of either is
a tick: the number of version 2 orders is counted there, so the growth
between two ticks is what one batch migrated, whatever way the job selects
its batches (by the version filter, by ``_id`` ranges, ...).  A batch, as the
statement's loop defines it, is the writes the job makes between two ticks:
one ``update_many``, one ``bulk_write`` or an ``update_one`` per order of the
batch are all one batch (the recording's log may hold a ``bulk_write`` as one
call or, from the grader's command log, as one entry per operation: the
writes between two ticks are one batch either way).  ``sleep`` also plays the
application: the old version writes version 1 orders during the pauses, or a
deploy interrupts the job.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from course.store.capabilities import Capability
from course.datasets.migration import VERSION_FIELD, phone_of
from course.engine.exercise import Exercise, Incorrect, LearnerRaised, hidden, visible
from course.lessons.lesson05.data import database_state, expected_v2, first_difference, seeded_orders
from course.toolkit.migration_sim import NOT_MIGRATED, Interrupted, migrate_ids
from course.engine.recording import RecordingCollection

#: what the messages call a batch (the statement's loop: the writes between one log-and-pause and the next)
_BATCH = "a batch: the writes between two calls of log or sleep"
LATE_IDS = (5001, 5002, 5003)  #: orders the old application writes during the job's first pauses
#: an order another process writes at the job's second pause with an _id behind the job's position (_ids from
#: several processes are only roughly ordered, as ObjectIds are): only a final sweep from the start finds it
BEHIND_ID = 0
#: (n, seed) of the visible checks' and the hidden checks' collections: small, as pipeline updates are slow
#: on the embedded engine
VISIBLE, OTHER = (36, 5), (40, 8)


def _changed_since(before: dict, orders: Any) -> int:
    """How many of ``orders``' documents differ from ``before`` (_id -> document; a new one counts)."""
    return sum(1 for d in orders.find({}) if first_difference(before.get(d["_id"]), d) is not None)


class _Watch:
    """The ``sleep`` and ``log`` a check passes to the job, and what they saw."""

    def __init__(self, orders: Any, *, interrupt_at: int | None = None, old_app: bool = False, behind: int = 0):
        self.orders = orders
        self.interrupt_at = interrupt_at
        self.old_app = old_app
        self.behind = behind  #: version 1 orders another process writes behind the walk at the second pause
        self.lines: list = []
        self.sleeps: list = []
        self.v2_counts = [self._v2()]
        self.inserted: list[dict] = []
        self.recorded: RecordingCollection | None = None  #: the job's collection, set when the job is called
        self.ticks: list[int] = []  #: how many calls the job had made through ``recorded`` at each tick
        self.calls_after_interrupt = 0  #: log and sleep calls after the interrupting pause raised

    def _v2(self) -> int:
        return self.orders.count_documents({VERSION_FIELD: 2})

    @property
    def interrupted(self) -> bool:
        """Whether the interrupting pause came (and raised)."""
        return self.interrupt_at is not None and len(self.sleeps) >= self.interrupt_at

    def tick(self) -> None:
        """Count the version 2 orders now (a batch boundary), and where the job's calls had got to."""
        if self.interrupted:
            self.calls_after_interrupt += 1
        self.v2_counts.append(self._v2())
        if self.recorded is not None:
            self.ticks.append(len(self.recorded.ops()))

    def log(self, line: Any = "") -> None:
        """The job's log: one call per batch."""
        self.tick()
        self.lines.append(line)

    def sleep(self, seconds: Any = None) -> None:
        """The job's pause: the application runs here (the old version writes v1), or a deploy stops the job."""
        self.tick()
        self.sleeps.append(seconds)
        if self.old_app and len(self.sleeps) <= len(LATE_IDS):
            order_id = LATE_IDS[len(self.sleeps) - 1]
            doc = {"_id": order_id, "tenantId": "t1",
                   "customer": {"_id": 1, "name": "Customer 1", "phone": phone_of(1)}, "views": 0}
            self.orders.insert_one(dict(doc))
            self.inserted.append(doc)
            if len(self.sleeps) == 2:
                behind = {**doc, "_id": BEHIND_ID}
                self.orders.insert_one(dict(behind))
                self.inserted.append(behind)
            self.v2_counts.append(self._v2())
        if self.behind and len(self.sleeps) == 2:
            self.orders.insert_many([{"_id": -n, "tenantId": "t1", "views": 0,
                                      "customer": {"_id": 1, "name": "Customer 1", "phone": phone_of(1)}}
                                     for n in range(self.behind, 0, -1)])
        if self.interrupt_at is not None and len(self.sleeps) == self.interrupt_at:
            raise Interrupted(f"deploy at pause {len(self.sleeps)}")

    def batches(self) -> int:
        """How many batches the job wrote: groups of writes with no log or sleep call between them."""
        ops = self.recorded.ops() if self.recorded is not None else []
        return len({bisect_right(self.ticks, i) for i, op in enumerate(ops) if op.kind == "write"})

    def largest_batch(self) -> int:
        """The most orders migrated between two ticks (or before the first, or after the last)."""
        counts = self.v2_counts + [self._v2()]
        return max((b - a for a, b in zip(counts, counts[1:])), default=0)


class BatchJob(Exercise):
    id = "05.4"
    title = "A background batch job that can be stopped and restarted"
    answers = ("migrate_in_batches",)
    requires = frozenset({Capability.PIPELINE_UPDATES})
    requirements = {
        "migrates": "every version 1 order ends up in the version 2 form of to_v2, those written while the job "
                    "runs included (also one whose _id sorts before where the job has got to)",
        "only_v1": "only version 1 orders are changed: version 2 orders stay as they are, and a second run "
                   "changes nothing",
        "batch_size": "at most batch_size orders are migrated per batch",
        "log": "log(line) is called once per batch (one more summary line is allowed), with a str",
        "pause": "sleep(pause) is called between batches, with the pause given",
        "returns": "it returns how many orders this run migrated, an int",
        "resumable": "an exception raised by sleep (an interruption) stops the job, and a restarted job finishes "
                     "the work",
    }
    hints = (
        "Walk the collection in _id order: take the _ids of at most batch_size orders after the last _id you "
        'handled ({"_id": {"$gt": last}}, sorted by _id), stop when there are none; update_many those ids '
        'with to_v2 and the version filter; log one line; sleep(pause).',
        "When the walk runs out, sweep once more from the start for what is still version 1: another process may "
        "have written an order with an _id lower than where the walk had got to.",
        'Keep the version filter, {"schema_version": {"$exists": False}}, in the update_many: then a restarted '
        "job, or a second job, changes nothing twice.",
        "Add result.modified_count to your total after each batch and return it. Do not catch exceptions.",
    )
    solution_code = """
def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=time.sleep, log=print):
    \"\"\"Migrate every version 1 order, batch_size at a time, pausing between batches; return how many moved.\"\"\"
    old = {"schema_version": {"$exists": False}}
    moved, last, sweeping = 0, None, False
    with tqdm(total=orders.count_documents(old), desc="orders to v2") as bar:
        while True:
            after_last = {} if last is None else {"_id": {"$gt": last}}
            ids = [doc["_id"] for doc in orders.find({**after_last, **old}, {"_id": 1}).sort("_id", 1)
                   .limit(batch_size)]
            if not ids:
                if sweeping or last is None:
                    break
                # the final sweep, from the start: orders written behind the walk (a lower _id than where it
                # had got to: _ids from several processes are only roughly ordered)
                last, sweeping = None, True
                continue
            result = orders.update_many({"_id": {"$in": ids}, **old}, to_v2)
            moved += result.modified_count
            last = ids[-1]
            bar.update(result.modified_count)
            log(f"_id {ids[0]} to {last}: {result.modified_count} migrated, {moved} in this run")
            sleep(pause)
    return moved
"""

    def _job(self, answer, orders, watch: _Watch, batch_size: int = 10, pause: float = 0.25,
             expect_raise: bool = False, race=None) -> tuple[Any, RecordingCollection]:
        recorded = watch.recorded = RecordingCollection(orders, race=race)
        returned = self.call("migrate_in_batches", answer.migrate_in_batches, recorded, batch_size=batch_size,
                             pause=pause, sleep=watch.sleep, log=watch.log, expect_raise=expect_raise)
        return returned, recorded

    # ---- migrates ----
    def _migrates(self, answer, orders, batch_size):
        before = {d["_id"]: d for d in orders.find({})}
        watch = _Watch(orders, old_app=True)
        self._job(answer, orders, watch, batch_size)
        before.update({d["_id"]: d for d in watch.inserted})
        left = sorted(d["_id"] for d in orders.find(NOT_MIGRATED, {"_id": 1}))
        if left:
            late = [i for i in left if i in LATE_IDS]
            behind = (f" (order {BEHIND_ID} was written by another application process at the job's second pause, "
                      "with an _id lower than where the job had got to: _ids from several processes are only "
                      "roughly ordered, and a walk by _id never comes back for it)" if BEHIND_ID in left else "")
            raise Incorrect(f"after the job, orders {left[:6]} are still version 1"
                            + (f" ({late} were written by the old application while the job ran: select what is "
                               "not migrated yet until nothing is left)" if late else "") + behind)
        for order_id, doc in sorted(before.items()):
            if doc.get(VERSION_FIELD) == 2:
                continue  # version 2 orders are the only_v1 requirement's business
            problem = first_difference(expected_v2(doc), orders.find_one({"_id": order_id}))
            if problem:
                raise Incorrect(f"after the job, order {order_id}: {problem}")

    @visible(points=2, checks="migrates")
    def migrates_everything(self, answer):
        """Every version 1 order, and those the old application writes meanwhile, end up version 2"""
        self._migrates(answer, seeded_orders(self.lab, *VISIBLE), 10)

    @hidden(points=2, checks="migrates")
    def migrates_another_collection(self, answer):
        """Another collection, in batches of 7"""
        self._migrates(answer, seeded_orders(self.lab, *OTHER), 7)

    @hidden(points=1, checks="migrates")
    def batch_of_exactly_everything(self, answer):
        """batch_size exactly the number of version 1 orders"""
        orders = seeded_orders(self.lab, *VISIBLE)
        self._migrates(answer, orders, orders.count_documents(NOT_MIGRATED))

    # ---- only_v1 ----
    def _only_v1(self, answer, orders, batch_size):
        orders.update_one({VERSION_FIELD: 2}, {"$push": {"customer.phones": "0999999999"}})
        v2 = {d["_id"]: d for d in orders.find({VERSION_FIELD: 2})}
        self._job(answer, orders, _Watch(orders), batch_size)
        for order_id, doc in sorted(v2.items()):
            problem = first_difference(doc, orders.find_one({"_id": order_id}))
            if problem:
                raise Incorrect(f"order {order_id} was already version 2, and the job changed it: {problem}: "
                                "update only orders that are still version 1")
        state = database_state(orders.database)
        self._job(answer, orders, _Watch(orders), batch_size)
        if database_state(orders.database) != state:
            raise Incorrect("a second run of the job changed data: select and update only version 1 orders")

    @visible(points=2, checks="only_v1")
    def leaves_v2_alone(self, answer):
        """Version 2 orders are left as they are, and a second run changes nothing"""
        self._only_v1(answer, seeded_orders(self.lab, *VISIBLE), 10)

    @hidden(points=1, checks="only_v1")
    def leaves_v2_alone_elsewhere(self, answer):
        """The same on another collection, in batches of 7"""
        self._only_v1(answer, seeded_orders(self.lab, *OTHER), 7)

    @visible(points=1, checks="only_v1")
    def leaves_alone_what_the_application_migrates(self, answer):
        """An order the application migrates between the job's read and its update is left as it is"""
        orders = seeded_orders(self.lab, *VISIBLE)
        target = orders.find_one(NOT_MIGRATED, sort=[("_id", 1)])["_id"]
        added = "0988888888"

        def application_migrates_and_adds_a_phone():
            migrate_ids(orders, self.lab.backend, [target])
            orders.update_one({"_id": target, VERSION_FIELD: 2}, {"$push": {"customer.phones": added}})

        _, recorded = self._job(answer, orders, _Watch(orders), race=application_migrates_and_adds_a_phone)
        phones = (orders.find_one({"_id": target}) or {}).get("customer", {}).get("phones")
        if recorded.raced and isinstance(phones, list) and added not in phones:
            raise Incorrect(f"between the job's read and its update, the application migrated order {target} and "
                            f"added the phone {added}; the job then overwrote it (phones is now {phones!r}): keep "
                            "the version filter in the update itself, not only in the selection")

    # ---- batch_size ----
    def _batch_size(self, answer, orders, batch_size, behind=0):
        watch = _Watch(orders, behind=behind)
        self._job(answer, orders, watch, batch_size)
        largest = watch.largest_batch()
        if largest > batch_size:
            swept = (f" ({behind} orders were written behind the walk at its second pause, and the sweep that "
                     "finds them is batched too)" if behind else "")
            raise Incorrect(f"with batch_size={batch_size}, one batch migrated {largest} orders (counted between "
                            f"two calls of log or sleep): keep each batch to at most batch_size{swept}")

    @visible(points=1, checks="batch_size")
    def batches_of_batch_size(self, answer):
        """At most batch_size orders per batch"""
        self._batch_size(answer, seeded_orders(self.lab, *VISIBLE), 10)

    @hidden(points=1, checks="batch_size")
    def batches_of_six(self, answer):
        """At most batch_size orders per batch, batch_size 6, another collection"""
        self._batch_size(answer, seeded_orders(self.lab, *OTHER), 6)

    @visible(points=1, checks="batch_size")
    def batches_when_many_are_written_behind(self, answer):
        """At most batch_size orders per batch, the final sweep included, when more than a batch of orders is
        written behind the walk"""
        self._batch_size(answer, seeded_orders(self.lab, *VISIBLE), 5, behind=8)

    # ---- log ----
    def _log(self, answer, orders, batch_size):
        watch = _Watch(orders)
        self._job(answer, orders, watch, batch_size)
        batches = watch.batches()
        odd = [line for line in watch.lines if not isinstance(line, str)]
        if odd:
            raise Incorrect(f"log should be called with a line of text (a str), got {odd[0]!r:.40}")
        if not batches - 1 <= len(watch.lines) <= batches + 1:
            raise Incorrect(f"the job wrote {batches} batches ({_BATCH}) and logged {len(watch.lines)} lines: the "
                            "statement asks for one line per batch")

    @visible(points=1, checks="log")
    def logs_a_line_per_batch(self, answer):
        """One log line per batch"""
        self._log(answer, seeded_orders(self.lab, *VISIBLE), 10)

    @hidden(points=1, checks="log")
    def logs_a_line_per_batch_elsewhere(self, answer):
        """One log line per batch, batch_size 9, another collection"""
        self._log(answer, seeded_orders(self.lab, *OTHER), 9)

    # ---- pause ----
    def _pause(self, answer, orders, batch_size, pause):
        watch = _Watch(orders)
        self._job(answer, orders, watch, batch_size, pause)
        batches = watch.batches()
        other = [s for s in watch.sleeps if s != pause]
        if other:
            raise Incorrect(f"the job was given pause={pause} but called sleep({other[0]!r}): the pause between "
                            "batches is the one the job is given")
        if not batches - 1 <= len(watch.sleeps) <= batches + 1:
            raise Incorrect(f"the job wrote {batches} batches ({_BATCH}) and paused {len(watch.sleeps)} times: the "
                            "statement asks for one pause between two batches")

    @visible(points=1, checks="pause")
    def pauses_between_batches(self, answer):
        """sleep(pause) between batches"""
        self._pause(answer, seeded_orders(self.lab, *VISIBLE), 10, 0.25)

    @hidden(points=1, checks="pause")
    def pauses_with_another_pause(self, answer):
        """sleep(pause) between batches, another pause and batch size"""
        self._pause(answer, seeded_orders(self.lab, *OTHER), 9, 1.5)

    # ---- returns ----
    def _returned(self, returned, moved, what):
        if isinstance(returned, bool) or not isinstance(returned, int):
            raise Incorrect(f"{what} should return how many orders it migrated, an int such as {moved}; it returned "
                            f"{returned!r:.40}")
        if returned != moved:
            raise Incorrect(f"{what} migrated {moved} orders and returned {returned}: it should return how many "
                            "orders this run migrated")

    def _returns(self, answer, orders, what):
        before = {d["_id"]: d for d in orders.find({})}
        returned, _ = self._job(answer, orders, _Watch(orders))
        self._returned(returned, _changed_since(before, orders), what)

    @visible(points=1, checks="returns")
    def returns_how_many_moved(self, answer):
        """It returns how many orders it migrated"""
        self._returns(answer, seeded_orders(self.lab, *VISIBLE), "the job")

    @visible(points=1, checks="returns")
    def returns_what_it_changed_under_a_race(self, answer):
        """The application migrates an order between the job's read and its update: it is not the job's"""
        orders = seeded_orders(self.lab, *OTHER)
        before = {d["_id"]: d for d in orders.find({})}
        target = orders.find_one(NOT_MIGRATED, sort=[("_id", 1)])["_id"]
        by_application: list = []  #: the order as the application migrated it

        def application_migrates():
            if migrate_ids(orders, self.lab.backend, [target]):
                by_application.append(orders.find_one({"_id": target}))

        returned, _ = self._job(answer, orders, _Watch(orders), race=application_migrates)
        if by_application and orders.find_one({"_id": target}) != by_application[0]:
            return  # the job rewrote what the application migrated: the only_v1 requirement's business
        self._returned(returned, _changed_since(before, orders) - len(by_application),
                       f"the job (the application migrated order {target} between its read and its update)"
                       if by_application else "the job")

    @hidden(points=1, checks="returns")
    def restart_returns_what_it_moved(self, answer):
        """A restarted job returns what this run migrated, not the total"""
        orders = seeded_orders(self.lab, *VISIBLE)
        self._job(answer, orders, _Watch(orders, interrupt_at=1), expect_raise=True)
        self._returns(answer, orders, "the restarted job")

    # ---- resumable ----
    def _resumable(self, answer, orders, batch_size, interrupts):
        for pause_number in interrupts:
            watch = _Watch(orders, interrupt_at=pause_number)
            raised, _ = self._job(answer, orders, watch, batch_size, expect_raise=True)
            if not isinstance(raised, LearnerRaised):
                if watch.interrupted:
                    went_on = (f"called sleep or log {watch.calls_after_interrupt} more times, then "
                               if watch.calls_after_interrupt else "")
                    raise Incorrect(f"sleep raised Interrupted at pause {pause_number} (a deploy), and the job "
                                    f"{went_on}returned {raised!r:.30}: the interruption must stop the job, not be "
                                    "caught")
                return  # the job finished before that pause: nothing to interrupt
        self._job(answer, orders, _Watch(orders), batch_size)
        left = orders.count_documents(NOT_MIGRATED)
        if left:
            raise Incorrect(f"interrupted at pause {interrupts} and restarted, the job left {left} orders in "
                            "version 1: select what is not migrated yet on every run")

    @visible(points=1, checks="resumable")
    def survives_interruption(self, answer):
        """Interrupted at its second pause and restarted, the job finishes"""
        self._resumable(answer, seeded_orders(self.lab, *VISIBLE), 10, (2,))

    @hidden(points=2, checks="resumable")
    def survives_two_interruptions(self, answer):
        """Interrupted twice (first pause, then again after a restart), the job still finishes"""
        self._resumable(answer, seeded_orders(self.lab, *OTHER), 7, (1, 2))
