"""Lab 05, changing a schema while the system runs: migrate on write (05.2), and the lesson's exercises.

The running example: ``customer.phone`` (a string) becomes ``customer.phones``
(a list) in an orders collection where version 1 and version 2 coexist.
Every assertion seeds its own scratch collection (:mod:`course.lessons.lesson05.data`)
and judges the learner's code by what it does to the data; the audit (05.1) lives in
:mod:`course.lessons.lesson05.audit`, exercises 05.3-05.6 in ``reading``, ``batch``,
``contract`` and ``staging``.
"""

from __future__ import annotations

from typing import Any

from bson.int64 import Int64

from course.store.capabilities import Capability
from course.datasets.migration import NO_PHONE_IDS, OVERFLOW_ID, SMALL_LONG_ID, VERSION_FIELD, phone_of
from course.engine.exercise import Exercise, Incorrect, LearnerCodeError, hidden, visible
from course.lessons.lesson05.audit import Audit
from course.lessons.lesson05.batch import BatchJob
from course.lessons.lesson05.contract import Reconcile
from course.lessons.lesson05.data import expected_v2, first_difference, seeded_orders
from course.lessons.lesson05.reading import ReadBothVersions
from course.lessons.lesson05.staging import Staging
from course.engine.recording import RecordingCollection

TITLE = "Live migration"
SLUG = "live-migration"

#: The phone a competing writer (an old application instance) sets between a learner's read and write.
RACE_PHONE = "0911111111"


class MigrateOnWrite(Exercise):
    id = "05.2"
    title = "Migrate one order on write, idempotently"
    answers = ("to_v2", "migrate_order")
    requires = frozenset({Capability.PIPELINE_UPDATES})
    requirements = {
        "shape": "to_v2 (and migrate_order) turn a version 1 order into version 2: schema_version 2, "
                 "customer.phones [phone], customer.phone removed, every other field kept as it is",
        "no_phone": "an order without a phone gets customer.phones: [] (not [null])",
        "only_v1": "only a version 1 order changes: a version 2 order is left as it is, so a second run "
                   "changes nothing",
        "count": "migrate_order returns how many documents it changed, an int (1, then 0)",
        "one_update": "one update computes the new value from the stored one: no read then write, so a phone "
                      "changed meanwhile is not lost and no reader sees half an order",
    }
    hints = (
        "to_v2 is an update pipeline: a list of stages, $set then $unset, so the new value can be computed "
        'from the old one ("$customer.phone").',
        'An order with no phone must get phones: [], not [null]: {"$cond": [{"$eq": [{"$type": '
        '"$customer.phone"}, "missing"]}, [], ["$customer.phone"]]}.',
        'Filter on the old version too: {"_id": order_id, "schema_version": {"$exists": False}}, so a second '
        "run matches nothing. Return result.modified_count.",
    )
    solution_code = """
to_v2 = [
    {"$set": {
        "schema_version": 2,
        "customer.phones": {"$cond": [{"$eq": [{"$type": "$customer.phone"}, "missing"]},
                                      [], ["$customer.phone"]]},
    }},
    {"$unset": "customer.phone"},
]
def migrate_order(orders, order_id):
    \"\"\"Move one order to version 2 if it is still version 1; return how many documents changed.\"\"\"
    result = orders.update_one({"_id": order_id, "schema_version": {"$exists": False}}, to_v2)
    return result.modified_count
"""

    def _pipeline(self, answer) -> list:
        return self.expect_type("to_v2", answer.to_v2, list, '[{"$set": {...}}, {"$unset": "customer.phone"}]')

    def _migrate(self, answer, orders, order_id) -> Any:
        try:
            return self.call("migrate_order", answer.migrate_order, orders, order_id)
        except LearnerCodeError as error:
            if error.raised is not None and error.raised.is_a("DuplicateKeyError"):
                raise Incorrect(f"migrate_order(orders, {order_id!r}) tried to insert order {order_id!r} again "
                                "(DuplicateKeyError): update an order that is still version 1, and do not "
                                "upsert") from None
            raise

    def _became_v2(self, orders, order_id, before, how):
        after = orders.find_one({"_id": order_id})
        problem = first_difference(expected_v2(before), after)
        if problem:
            raise Incorrect(f"order {order_id} after {how}: {problem}")

    def _shape(self, answer, orders, order_ids):
        pipeline = self._pipeline(answer)
        first, *others = order_ids
        before = orders.find_one({"_id": first})
        orders.update_one({"_id": first}, pipeline)
        self._became_v2(orders, first, before, "update_one({'_id': ...}, to_v2)")
        for order_id in others:
            before = orders.find_one({"_id": order_id})
            self._migrate(answer, orders, order_id)
            if orders.find_one({"_id": order_id}) == before:
                raise Incorrect(f"to_v2 migrated order {first}, but migrate_order(orders, {order_id}) left version 1 "
                                f"order {order_id} as it was: its update matched no document")
            self._became_v2(orders, order_id, before, f"migrate_order(orders, {order_id})")

    @visible(points=2, checks="shape")
    def migrates_a_v1_order(self, answer):
        """A version 1 order becomes version 2, every other field kept (a long counter stays a long)"""
        self._shape(answer, seeded_orders(self.lab), (1, 2, OVERFLOW_ID, SMALL_LONG_ID))

    @hidden(points=1, checks="shape")
    def other_orders(self, answer):
        """Other version 1 orders, with more customer fields, on another collection"""
        extra = [{"_id": 950, "customer": {"_id": 7, "name": "C 7", "phone": phone_of(7), "email": "c7@example"},
                  "views": Int64(5), "items": [{"sku": "a", "qty": 2}]}]
        orders = seeded_orders(self.lab, n=40, seed=8, extra=extra)
        ids = [d["_id"] for d in orders.find({VERSION_FIELD: {"$exists": False}, "customer.phone": {"$exists": True}},
                                             {"_id": 1}).sort("_id", 1).limit(3)]
        self._shape(answer, orders, ids + [950])

    def _no_phone(self, answer, orders, order_ids):
        for order_id in order_ids:
            self._migrate(answer, orders, order_id)
            after = orders.find_one({"_id": order_id}) or {}
            phones = after.get("customer", {}).get("phones", "missing")
            if phones != []:
                raise Incorrect(f"order {order_id} has no phone: customer.phones should be [], it is {phones!r}")

    @visible(points=1, checks="no_phone")
    def no_phone_gets_empty_list(self, answer):
        """An order with no phone gets an empty phones list, not [null]"""
        self._no_phone(answer, seeded_orders(self.lab), NO_PHONE_IDS[:1])

    @hidden(points=1, checks="no_phone")
    def other_orders_without_phone(self, answer):
        """Other orders without a phone"""
        extra = [{"_id": 951, "customer": {"name": "Only a name"}, "views": 0}]
        self._no_phone(answer, seeded_orders(self.lab, n=40, seed=8, extra=extra), NO_PHONE_IDS[1:] + (951,))

    def _leaves_alone(self, answer, orders, order_ids, twice=()):
        for order_id in twice:
            self._migrate(answer, orders, order_id)
        for order_id in list(twice) + list(order_ids):
            before = orders.find_one({"_id": order_id})
            self._migrate(answer, orders, order_id)
            problem = first_difference(before, orders.find_one({"_id": order_id}))
            if problem:
                raise Incorrect(f"order {order_id} was already version 2, but migrate_order changed it: {problem}"
                                ": filter the update on the old version")

    @visible(points=2, checks="only_v1")
    def second_run_changes_nothing(self, answer):
        """A second run, and a run on a version 2 order with two phones, change nothing"""
        orders = seeded_orders(self.lab)
        orders.update_one({"_id": 16}, {"$push": {"customer.phones": "0999999999"}})
        self._leaves_alone(answer, orders, (16,), twice=(1,))

    @hidden(points=1, checks="only_v1")
    def leaves_every_v2_alone(self, answer):
        """Every version 2 order of another collection, one without phones included; no order is created"""
        orders = seeded_orders(self.lab, n=40, seed=8)
        self._leaves_alone(answer, orders, [d["_id"] for d in orders.find({VERSION_FIELD: 2}, {"_id": 1})])
        self._migrate(answer, orders, 10_000)
        if orders.find_one({"_id": 10_000}) is not None:
            raise Incorrect("migrate_order(orders, 10000) created order 10000, which did not exist: do not upsert")

    def _counts(self, answer, orders, order_ids):
        for order_id in order_ids:
            before = orders.find_one({"_id": order_id})
            returned = self._migrate(answer, orders, order_id)
            after = orders.find_one({"_id": order_id})
            if before is None and after is not None:
                continue  # a created order is the only_v1 requirement's business
            changed = int(after != before)
            if isinstance(returned, bool) or not isinstance(returned, int):
                raise Incorrect(f"migrate_order should return how many documents it changed, an int such as "
                                f"{changed}; it returned {returned!r:.40} (a {type(returned).__name__})")
            if returned != changed:
                raise Incorrect(f"migrate_order(orders, {order_id!r}) changed {changed} document"
                                f"{'' if changed == 1 else 's'} and returned {returned}")

    @visible(points=1, checks="count")
    def returns_how_many_changed(self, answer):
        """It returns 1 for a migration, then 0"""
        self._counts(answer, seeded_orders(self.lab), (1, 1))

    @hidden(points=1, checks="count")
    def returns_zero_for_nothing(self, answer):
        """0 for an order that does not exist and for a version 2 order"""
        self._counts(answer, seeded_orders(self.lab), (10_000, 16, 3))

    def _race(self, answer, order_id):
        orders = seeded_orders(self.lab)

        def old_instance_edits():
            orders.update_one({"_id": order_id}, {"$set": {"customer.phone": RACE_PHONE}})

        recorded = RecordingCollection(orders, race=old_instance_edits)
        self._migrate(answer, recorded, order_id)
        updates = [w for w in recorded.updates() if w.method != "insert_one"]
        if len(updates) > 1:
            raise Incorrect(f"migrating order {order_id} took {len(updates)} writes: a reader between them sees "
                            "an order half version 1, half version 2; make it one update")
        after = orders.find_one({"_id": order_id}) or {}
        phones = after.get("customer", {}).get("phones")
        if recorded.raced and phones != [RACE_PHONE] and after.get(VERSION_FIELD) == 2:
            raise Incorrect(f"an old instance changed order {order_id}'s phone to {RACE_PHONE} between your read "
                            f"and your write, and the migrated order has {phones!r} instead of {[RACE_PHONE]!r}: "
                            "the migration must carry over the phone the order holds when it is migrated, "
                            "whatever changed since your read")

    @visible(points=2, checks="one_update")
    def one_update_no_stale_phone(self, answer):
        """One update, computed from the stored phone: a concurrent phone change is not lost"""
        self._race(answer, 1)

    @hidden(points=1, checks="one_update")
    def one_update_for_an_order_without_phone(self, answer):
        """The same for an order that had no phone until the competing write"""
        self._race(answer, NO_PHONE_IDS[0])


EXERCISES = (Audit, MigrateOnWrite, ReadBothVersions, BatchJob, Reconcile, Staging)
