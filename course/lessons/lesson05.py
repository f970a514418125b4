"""Lab 05, changing a schema while the system runs: exercises and their checks.

The running example: ``customer.phone`` (a string) becomes ``customer.phones``
(a list) in an orders collection where version 1 and version 2 coexist.
Every check seeds its own scratch collection from
:mod:`course.datasets_migration` and judges the learner's code by what it does
to the data and to the reads the application makes meanwhile
(:mod:`course.migration_sim`).
"""

from __future__ import annotations

import math
from typing import Any

from pymongo.errors import OperationFailure

from course.capabilities import Capability
from course.datasets_migration import (NO_PHONE_IDS, OVERFLOW_ID, SMALL_LONG_ID, VERSION_FIELD, legacy_orders,
                                       phone_of, seed_orders)
from course.exercise import Exercise, Incorrect, hidden, visible
from course.migration_audit import expected_census
from course.migration_sim import NOT_MIGRATED, careful_batches, migrate_ids, simulate
from course.recording import RecordingCollection
from course.validation_settings import ValidationChangeError, change_validation

TITLE = "Live migration"
SLUG = "live-migration"

LAB_ORDERS, SEED = 240, 5  #: what the lab seeds
CHECK_ORDERS = 60  #: a smaller collection for the checks


def seeded_orders(lab, n: int = CHECK_ORDERS, seed: int = SEED, name: str = "orders") -> Any:
    """A scratch collection holding ``n`` legacy orders, the overflowed counter included."""
    orders = lab.scratch()[name]
    seed_orders(orders, legacy_orders(n=n, seed=seed))
    return orders


def expected_v2(doc: dict) -> dict:
    """The version 2 form of a stored order (version 2 orders are unchanged)."""
    if doc.get(VERSION_FIELD) == 2:
        return doc
    customer = {k: v for k, v in doc["customer"].items() if k != "phone"}
    customer["phones"] = [doc["customer"]["phone"]] if "phone" in doc["customer"] else []
    return {**doc, VERSION_FIELD: 2, "customer": customer}


def _differences(orders, before: dict) -> list[str]:
    """Orders whose stored form differs from the expected version 2 form of ``before``."""
    found = {d["_id"]: d for d in orders.find({})}
    problems = [f"order {i} is gone" for i in before if i not in found]
    for order_id, doc in sorted(before.items()):
        if order_id in found and found[order_id] != expected_v2(doc):
            got = found[order_id]
            if got.get(VERSION_FIELD) != 2:
                problems.append(f"order {order_id} is still version 1")
            else:
                problems.append(f"order {order_id} should be {expected_v2(doc)['customer']!r} "
                                f"but is {got.get('customer')!r}")
    return problems


def _longs(orders) -> set:
    return {d["_id"] for d in orders.find({"views": {"$type": "long"}}, {"_id": 1})}


# ---------------------------------------------------------------------------
class Audit(Exercise):
    id = "05.1"
    title = "Audit the shapes before changing anything"
    answers = ("audit",)
    requires = frozenset({Capability.TYPE_QUERIES})
    hints = (
        'Project, for every order, {"$ifNull": ["$schemaVersion", 1]} and {"$type": "$customer.phone"}, '
        "the same for customer.phones and views, then count the tuples in Python (or $group on them).",
        "The $type expression of this engine reports a small long as int. The $type query operator does not: "
        'find({"views": {"$type": "long"}}) gives the ids whose counter really is a long.',
        "Return a dict like {(1, 'string', 'missing', 'int'): 200, (1, 'string', 'missing', 'long'): 2, ...}.",
    )
    solution_code = """
def audit(orders):
    \"\"\"Count orders by (version, type of customer.phone, type of customer.phones, type of views).\"\"\"
    rows = orders.aggregate([{"$project": {
        "v": {"$ifNull": ["$schemaVersion", 1]},
        "phone": {"$type": "$customer.phone"},
        "phones": {"$type": "$customer.phones"},
        "views": {"$type": "$views"},
    }}])
    longs = {doc["_id"] for doc in orders.find({"views": {"$type": "long"}}, {"_id": 1})}
    census = {}
    for row in rows:
        views = row["views"]
        if views in ("int", "long"):
            views = "long" if row["_id"] in longs else "int"
        key = (row["v"], row["phone"], row["phones"], views)
        census[key] = census.get(key, 0) + 1
    return census
"""

    def _census(self, answer, orders):
        census = self.call("audit", answer.audit, orders)
        census = self.expect_type("audit(orders)", census, dict, "{(1, 'string', 'missing', 'int'): 200, ...}")
        bad = [k for k in census if not (isinstance(k, tuple) and len(k) == 4)]
        if bad:
            raise Incorrect(f"each key should be a tuple (version, phone type, phones type, views type), "
                            f"not {bad[0]!r}")
        return census

    def _compare(self, census, orders, what):
        expected = expected_census(orders.find({}))
        if census == expected:
            return
        wrong = sorted((k for k in set(expected) | set(census) if expected.get(k, 0) != census.get(k, 0)), key=str)
        key = wrong[0]
        raise Incorrect(f"{what}: expected {expected.get(key, 0)} orders with shape {key}, "
                        f"your census says {census.get(key, 0)}")

    @visible(points=1)
    def counts_every_order(self, answer):
        """The census accounts for every order, by version"""
        orders = seeded_orders(self.lab)
        census = self._census(answer, orders)
        if sum(census.values()) != CHECK_ORDERS:
            raise Incorrect(f"the census counts {sum(census.values())} orders; the collection holds {CHECK_ORDERS}")
        versions = {k[0] for k in census}
        if versions != {1, 2}:
            raise Incorrect(f"versions found: {sorted(versions, key=str)}; an order without schemaVersion "
                            "is version 1 ($ifNull)")

    @visible(points=2)
    def finds_the_overflowed_counter(self, answer):
        """The counter that $inc pushed past the int32 maximum is reported as a long"""
        orders = seeded_orders(self.lab)
        census = self._census(answer, orders)
        if not any(k[3] == "long" for k in census):
            raise Incorrect(f"order {OVERFLOW_ID}'s views went past 2147483647 and is now a long, "
                            "but your census reports no long counter")

    @hidden(points=2)
    def small_long_is_a_long(self, answer):
        """A small counter stored as a 64-bit long is reported as a long, not an int"""
        orders = seeded_orders(self.lab)
        census = self._census(answer, orders)
        longs = sum(n for k, n in census.items() if k[3] == "long")
        if longs != 2:
            raise Incorrect(f"two counters are longs (orders {OVERFLOW_ID} and {SMALL_LONG_ID}), your census "
                            f"reports {longs}: decide int versus long with $type queries")

    @hidden(points=2)
    def exact_census(self, answer):
        """The census matches the stored data exactly, orders without a phone included"""
        orders = seeded_orders(self.lab)
        self._compare(self._census(answer, orders), orders, "the lab's orders")

    @hidden(points=1)
    def another_collection(self, answer):
        """It works on another collection too"""
        orders = seeded_orders(self.lab, n=50, seed=8)
        orders.insert_one({"_id": 999, VERSION_FIELD: 2, "customer": {"name": "X", "phones": "0900000000"},
                           "views": 1.5})
        self._compare(self._census(answer, orders), orders, "another collection")


# ---------------------------------------------------------------------------
class MigrateOnWrite(Exercise):
    id = "05.2"
    title = "Migrate one order on write, idempotently"
    answers = ("to_v2", "migrate_order")
    requires = frozenset({Capability.PIPELINE_UPDATES})
    hints = (
        "to_v2 is an update pipeline: a list of stages, $set then $unset, so the new value can be computed "
        'from the old one ("$customer.phone").',
        'An order with no phone must get phones: [], not [null]: {"$cond": [{"$eq": [{"$type": '
        '"$customer.phone"}, "missing"]}, [], ["$customer.phone"]]}.',
        'Filter on the old version too: {"_id": order_id, "schemaVersion": {"$exists": False}}, so a second '
        "run matches nothing. Return result.modified_count.",
    )
    solution_code = """
to_v2 = [
    {"$set": {
        "schemaVersion": 2,
        "customer.phones": {"$cond": [{"$eq": [{"$type": "$customer.phone"}, "missing"]},
                                      [], ["$customer.phone"]]},
    }},
    {"$unset": "customer.phone"},
]
def migrate_order(orders, order_id):
    \"\"\"Move one order to version 2 if it is still version 1; return how many documents changed.\"\"\"
    result = orders.update_one({"_id": order_id, "schemaVersion": {"$exists": False}}, to_v2)
    return result.modified_count
"""

    def _migrate(self, answer, orders, order_id):
        changed = self.call("migrate_order", answer.migrate_order, orders, order_id)
        if isinstance(changed, bool) or not isinstance(changed, int):
            raise Incorrect(f"migrate_order should return the number of documents it changed (0 or 1), "
                            f"got {changed!r}")
        return changed

    def _one(self, answer, order_id):
        orders = seeded_orders(self.lab)
        before = orders.find_one({"_id": order_id})
        changed = self._migrate(answer, orders, order_id)
        return orders, before, changed, orders.find_one({"_id": order_id})

    @visible(points=2)
    def migrates_a_v1_order(self, answer):
        """A version 1 order becomes version 2, every other field kept"""
        orders, before, changed, after = self._one(answer, 1)
        if after != expected_v2(before):
            raise Incorrect(f"order 1 should become {expected_v2(before)!r}, found {after!r}")
        if changed != 1:
            raise Incorrect(f"migrate_order changed one document but returned {changed}")

    @visible(points=2)
    def second_run_changes_nothing(self, answer):
        """Run twice, the second run matches nothing and changes nothing"""
        orders, before, _, after = self._one(answer, 1)
        again = self._migrate(answer, orders, 1)
        if orders.find_one({"_id": 1}) != after:
            raise Incorrect(f"a second run changed order 1 again, to {orders.find_one({'_id': 1})!r}: "
                            "filter the update on the old version")
        if again != 0:
            raise Incorrect(f"a second run should change nothing and return 0, it returned {again}")

    @hidden(points=1)
    def leaves_v2_alone(self, answer):
        """A version 2 order, with one or more phones, is left exactly as it is"""
        orders = seeded_orders(self.lab)
        orders.update_one({VERSION_FIELD: 2, "customer.phones.0": {"$exists": True}},
                          {"$push": {"customer.phones": "0999999999"}})
        for doc in list(orders.find({VERSION_FIELD: 2})):
            changed = self._migrate(answer, orders, doc["_id"])
            if orders.find_one({"_id": doc["_id"]}) != doc or changed:
                raise Incorrect(f"order {doc['_id']} was already version 2 but migrate_order changed it")

    @hidden(points=1)
    def no_phone_gets_empty_list(self, answer):
        """An order with no phone gets an empty phones list, not [null]"""
        orders = seeded_orders(self.lab)
        for order_id in NO_PHONE_IDS:
            before = orders.find_one({"_id": order_id})
            self._migrate(answer, orders, order_id)
            after = orders.find_one({"_id": order_id})
            if after != expected_v2(before):
                raise Incorrect(f"order {order_id} has no phone: it should become {expected_v2(before)['customer']!r}"
                                f", found {after.get('customer')!r}")

    @hidden(points=1)
    def keeps_types_and_is_atomic(self, answer):
        """One update per order, and the long counters stay longs"""
        orders = seeded_orders(self.lab)
        recorded = RecordingCollection(orders)
        for order_id in (OVERFLOW_ID, SMALL_LONG_ID):
            self._migrate(answer, recorded, order_id)
        if len(recorded.writes()) != 2:
            raise Incorrect(f"migrating two orders took {len(recorded.writes())} writes: one update pipeline "
                            "per order changes it atomically, so no reader sees it half-migrated")
        if _longs(orders) != {OVERFLOW_ID, SMALL_LONG_ID}:
            raise Incorrect("a long views counter changed type during the migration")


# ---------------------------------------------------------------------------
class ReadBothVersions(Exercise):
    id = "05.3"
    title = "Read both versions while the migration runs"
    answers = ("read_order", "find_by_phone")
    hints = (
        "upgrade(doc) turns a version 1 document into the version 2 shape in memory: pop customer.phone, "
        "set customer.phones to [phone] (or [] without one), set schemaVersion to 2. Do not write anything.",
        'find_by_phone must look in both places: {"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}, '
        "then upgrade each result.",
    )
    solution_code = """
def upgrade(doc):
    \"\"\"Return an order in the version 2 shape (in memory: nothing is written).\"\"\"
    if doc is None or doc.get("schemaVersion") == 2:
        return doc
    customer = dict(doc["customer"])
    phone = customer.pop("phone", None)
    customer["phones"] = [] if phone is None else [phone]
    return {**doc, "schemaVersion": 2, "customer": customer}
def read_order(orders, order_id):
    \"\"\"One order by _id, in the version 2 shape, whatever version is stored.\"\"\"
    return upgrade(orders.find_one({"_id": order_id}))
def find_by_phone(orders, phone):
    \"\"\"Every order with this phone number, version 1 or 2, in the version 2 shape.\"\"\"
    query = {"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}
    return [upgrade(doc) for doc in orders.find(query)]
"""

    def _read(self, answer, orders, order_id):
        return self.call("read_order", answer.read_order, orders, order_id)

    @visible(points=1)
    def reads_both_versions(self, answer):
        """read_order gives a version 1 and a version 2 order in the version 2 shape"""
        orders = seeded_orders(self.lab)
        for doc in (orders.find_one(NOT_MIGRATED), orders.find_one({VERSION_FIELD: 2}),
                    orders.find_one({"_id": NO_PHONE_IDS[0]})):
            got = self._read(answer, orders, doc["_id"])
            want = expected_v2(doc)
            if not isinstance(got, dict) or got.get("customer", {}).get("phones") != want["customer"]["phones"]:
                raise Incorrect(f"read_order(orders, {doc['_id']}) should have customer.phones = "
                                f"{want['customer']['phones']!r}, got {got!r:.160}")
            if got != want:
                raise Incorrect(f"read_order(orders, {doc['_id']}) should be {want!r:.200}, got {got!r:.200}")

    @visible(points=1)
    def lookup_finds_both_versions(self, answer):
        """find_by_phone finds the version 1 and the version 2 orders of a customer"""
        orders = seeded_orders(self.lab)
        docs = list(orders.find({}))
        for phone in sorted({phone_of(d["customer"]["_id"]) for d in docs}):
            want = sorted(d["_id"] for d in docs if phone in [d["customer"].get("phone")]
                          + d["customer"].get("phones", []))
            versions = {d.get(VERSION_FIELD, 1) for d in docs if d["_id"] in want}
            if versions == {1, 2}:
                break
        found = self.call("find_by_phone", answer.find_by_phone, orders, phone)
        try:
            got = sorted(d["_id"] for d in found)
        except (TypeError, KeyError):
            raise Incorrect("find_by_phone should return a list of orders (dicts with an _id)") from None
        if got != want:
            raise Incorrect(f"find_by_phone(orders, {phone!r}) should find orders {want} (versions 1 and 2), "
                            f"found {got}")

    @hidden(points=3)
    def no_anomaly_during_migration(self, answer):
        """In the simulator, while a batch job runs and is restarted, no read fails, misses or gets the wrong shape"""
        orders = seeded_orders(self.lab)
        result = simulate(orders, self.lab.backend, reader=answer.read_order, lookup=answer.find_by_phone,
                          migration=careful_batches(self.lab.backend), seed=3, batch_size=20, ops_per_pause=6)
        if result.anomalies:
            raise Incorrect(f"{len(result.anomalies)} reads went wrong during the migration; the first: "
                            f"{result.anomalies[0]}")

    @hidden(points=1)
    def upgrades_in_memory(self, answer):
        """Reading writes nothing, and an unknown _id gives None"""
        orders = seeded_orders(self.lab)
        recorded = RecordingCollection(orders)
        self._read(answer, recorded, 1)
        self.call("find_by_phone", answer.find_by_phone, recorded, phone_of(1))
        if recorded.writes():
            raise Incorrect("reading wrote to the database: upgrade in memory, and leave writing to "
                            "migrate-on-write and the batch job")
        missing = answer.read_order(orders, 10_000)
        if missing is not None:
            raise Incorrect(f"read_order of an _id that does not exist should return None, got {missing!r}")


# ---------------------------------------------------------------------------
class Interrupt(Exception):
    """Raised by a check's sleep to stop the learner's job mid-way."""


class BatchJob(Exercise):
    id = "05.4"
    title = "A background batch job that can be stopped and restarted"
    answers = ("migrate_in_batches",)
    requires = frozenset({Capability.PIPELINE_UPDATES})
    hints = (
        'Loop: take the _ids of at most batch_size orders matching {"schemaVersion": {"$exists": False}}; '
        "stop when there are none; update_many those ids with to_v2; log one line; sleep(pause).",
        "Keep the version filter in the update_many too: then a restarted job, or a second job, changes "
        "nothing twice.",
        "Wrap the loop in tqdm(total=orders.count_documents(...)) and call bar.update(n) after each batch.",
    )
    solution_code = """
def migrate_in_batches(orders, batch_size=50, pause=0.05, sleep=time.sleep, log=print):
    \"\"\"Migrate every version 1 order, batch_size at a time, pausing between batches; return how many moved.\"\"\"
    old = {"schemaVersion": {"$exists": False}}
    moved = 0
    with tqdm(total=orders.count_documents(old), desc="orders to v2") as bar:
        while True:
            ids = [doc["_id"] for doc in orders.find(old, {"_id": 1}).limit(batch_size)]
            if not ids:
                break
            result = orders.update_many({"_id": {"$in": ids}, **old}, to_v2)
            moved += result.modified_count
            bar.update(result.modified_count)
            log(f"batch of {len(ids)}: {result.modified_count} migrated, {moved} in this run")
            sleep(pause)
    return moved
"""

    def _job(self, answer, orders, batch_size=20, sleep=None, log=None):
        lines: list = []
        calls = {"sleep": 0}

        def default_sleep(_seconds=0.0):
            calls["sleep"] += 1

        moved = self.call("migrate_in_batches", answer.migrate_in_batches, orders, batch_size=batch_size,
                          pause=0.0, sleep=sleep or default_sleep, log=log or lines.append)
        return moved, lines, calls["sleep"]

    @visible(points=2)
    def migrates_everything(self, answer):
        """Every order ends up version 2, no field lost, and it returns how many it moved"""
        orders = seeded_orders(self.lab)
        before = {d["_id"]: d for d in orders.find({})}
        v1 = orders.count_documents(NOT_MIGRATED)
        moved, _, _ = self._job(answer, orders)
        problems = _differences(orders, before)
        if problems:
            raise Incorrect(f"after the job, {len(problems)} orders are wrong; the first: {problems[0]}")
        if moved != v1:
            raise Incorrect(f"{v1} orders were version 1, and the job returned {moved}")

    @visible(points=1)
    def small_batches_with_pauses(self, answer):
        """It works in batches of batch_size, logs a line per batch and pauses between them"""
        orders = seeded_orders(self.lab)
        v1 = orders.count_documents(NOT_MIGRATED)
        _, lines, sleeps = self._job(answer, orders, batch_size=20)
        batches = math.ceil(v1 / 20)
        if len(lines) < batches:
            raise Incorrect(f"{v1} orders in batches of 20 is {batches} batches, but the job logged "
                            f"{len(lines)} lines: log one line per batch, and keep each batch to batch_size")
        if sleeps < batches - 1:
            raise Incorrect(f"{batches} batches, but the job paused only {sleeps} times: sleep(pause) "
                            "between batches")

    @hidden(points=3)
    def survives_interruption(self, answer):
        """Stopped mid-way and restarted, every order is version 2 exactly once, no field lost"""
        orders = seeded_orders(self.lab)
        before = {d["_id"]: d for d in orders.find({})}
        calls = {"n": 0}

        def crash(_seconds=0.0):
            calls["n"] += 1
            if calls["n"] == 2:
                raise Interrupt("deploy")

        try:
            self.call("migrate_in_batches", answer.migrate_in_batches, orders, batch_size=20, pause=0.0,
                      sleep=crash, log=lambda line: None)
        except Exception as error:  # the learner's job may wrap the interruption
            if "Interrupt" not in str(error) and not isinstance(error, Interrupt):
                raise
        else:
            raise Incorrect("the job was interrupted at its second pause but returned normally: "
                            "let the interruption stop it")
        if orders.count_documents(NOT_MIGRATED) == 0:
            raise Incorrect("the job migrated everything before its second pause: use small batches")
        self._job(answer, orders)
        problems = _differences(orders, before)
        if problems:
            raise Incorrect(f"after an interruption and a restart, {len(problems)} orders are wrong; "
                            f"the first: {problems[0]}")
        if _longs(orders) != {OVERFLOW_ID, SMALL_LONG_ID}:
            raise Incorrect("a long views counter changed type during the migration")

    @hidden(points=1)
    def rerun_is_harmless(self, answer):
        """A second complete run moves nothing and changes nothing"""
        orders = seeded_orders(self.lab)
        self._job(answer, orders)
        after = list(orders.find({}).sort("_id", 1))
        moved, _, _ = self._job(answer, orders)
        if list(orders.find({}).sort("_id", 1)) != after or moved != 0:
            raise Incorrect(f"a second run of the job changed data or reported {moved} moved: "
                            "select and update only version 1 orders")

    @hidden(points=1)
    def picks_up_late_v1_writes(self, answer):
        """Orders the old application writes while the job runs are migrated too"""
        orders = seeded_orders(self.lab, n=60)
        late = iter(range(5001, 5004))

        def old_app_writes(_seconds=0.0):
            order_id = next(late, None)
            if order_id is not None:
                orders.insert_one({"_id": order_id, "customer": {"_id": 1, "name": "Customer 1",
                                                                  "phone": phone_of(1)}, "views": 0})

        self._job(answer, orders, sleep=old_app_writes)
        left = sorted(d["_id"] for d in orders.find(NOT_MIGRATED))
        if left:
            raise Incorrect(f"orders {left} were written in version 1 while the job ran and are still "
                            "version 1: select by the not-yet-migrated filter until none are left")


# ---------------------------------------------------------------------------
#: The drift injected into the dual-written check collection, and what it should reveal.
DRIFTED = (5, 7, 10, 12)


def dual_written(lab, drift: bool = True) -> Any:
    """A scratch collection in the expand phase: every version 2 order also carries customer.phone.

    With ``drift``, orders 5, 7, 10 and 12 are made to disagree in four different
    ways, order 8 gets a second number (still in agreement), and order 1001 is a
    version 1 order not migrated yet.
    """
    orders = lab.scratch().dual
    docs = []
    for doc in legacy_orders(n=CHECK_ORDERS, seed=SEED):
        v2 = expected_v2(doc)
        customer = dict(v2["customer"])
        if customer["phones"]:
            customer["phone"] = customer["phones"][0]
        docs.append({**v2, "customer": customer})
    docs.append(dict(_V1_ORDER, _id=1001))
    orders.insert_many(docs)
    if drift:
        orders.update_one({"_id": 5}, {"$set": {"customer.phone": "0911111111"}})  # an old instance edits
        orders.update_one({"_id": 7}, {"$push": {"customer.phones": {"$each": ["0922222222"], "$position": 0}}})
        orders.update_one({"_id": 8}, {"$push": {"customer.phones": "0933333333"}})
        orders.update_one({"_id": 10}, {"$unset": {"customer.phone": ""}})  # a failed second write
        orders.update_one({"_id": 12}, {"$set": {"customer.phones": []}})
    return orders


class Reconcile(Exercise):
    id = "05.5"
    title = "Reconcile the two copies before contracting"
    answers = ("disagreements",)
    hints = (
        'Look at orders that have the new field ({"customer.phones": {"$exists": True}}); orders not migrated '
        "yet are the batch job's business.",
        "The copies agree when customer.phone is exactly the first number of customer.phones, or when both are "
        "absent/empty. Compare [phone] (or [] without one) with phones[:1].",
        "Return the _ids as a sorted list, and write nothing.",
    )
    solution_code = """
def disagreements(orders):
    \"\"\"The _ids, in order, of dual-written orders whose customer.phone is not the first of customer.phones.\"\"\"
    found = []
    for doc in orders.find({"customer.phones": {"$exists": True}}, {"customer": 1}).sort("_id", 1):
        old = doc["customer"].get("phone")
        first = doc["customer"]["phones"][:1]
        if ([] if old is None else [old]) != first:
            found.append(doc["_id"])
    return found
"""

    def _found(self, answer, orders):
        found = self.call("disagreements", answer.disagreements, orders)
        found = self.expect_type("disagreements(orders)", found, list, "[5, 7]")
        return found

    @visible(points=1)
    def finds_the_old_instance_edit(self, answer):
        """It finds the order an old application instance edited through customer.phone only"""
        found = self._found(answer, dual_written(self.lab))
        if 5 not in found:
            raise Incorrect("order 5's customer.phone was changed by an old instance and no longer matches "
                            "customer.phones, but it is not in your list")
        if 8 in found:
            raise Incorrect("order 8 gained a second number: its phone is still the first of phones, so the "
                            "copies agree")

    @hidden(points=2)
    def finds_every_drift(self, answer):
        """It finds exactly the four kinds of drift, in _id order, and nothing else"""
        found = self._found(answer, dual_written(self.lab))
        if found != list(DRIFTED):
            missing = [i for i in DRIFTED if i not in found]
            if missing:
                raise Incorrect(f"orders {missing} disagree and are not in your list: compare customer.phone with "
                                "exactly the first of customer.phones, and count a missing phone beside a "
                                "non-empty list as a disagreement")
            raise Incorrect(f"expected {list(DRIFTED)} in _id order, got {found}")

    @hidden(points=1)
    def nothing_when_in_sync(self, answer):
        """A collection in sync gives an empty list, and reconciling writes nothing"""
        orders = RecordingCollection(dual_written(self.lab, drift=False))
        found = self._found(answer, orders)
        if found:
            raise Incorrect(f"every copy agrees here, but your list holds {found[:5]}")
        if orders.writes():
            raise Incorrect("reconciling should only read: repairs are a separate, deliberate step")


# ---------------------------------------------------------------------------
_V1_ORDER = {"_id": 7001, "tenantId": "t1", "customer": {"_id": 1, "name": "Customer 1", "phone": phone_of(1)},
             "views": 0}


class Staging(Exercise):
    id = "05.6"
    title = "Stage the validator: warn, then error, then strict"
    answers = ("v2_validator", "stages")
    requires = frozenset({Capability.VALIDATORS})
    hints = (
        'v2_validator is {"$jsonSchema": {...}}: require schemaVersion (enum [2]) and customer, and in customer '
        "require phones with bsonType array. Leave views alone: the audit found longs there.",
        'stages is a list of three (validationLevel, validationAction) pairs: first ("moderate", "warn"), '
        "then make new bad writes fail, and only after the batch has migrated the tail, check every document.",
    )
    solution_code = """
v2_validator = {"$jsonSchema": {
    "bsonType": "object",
    "required": ["schemaVersion", "customer"],
    "properties": {
        "schemaVersion": {"enum": [2]},
        "customer": {"bsonType": "object", "required": ["phones"],
                     "properties": {"phones": {"bsonType": "array"}}},
    },
}}
stages = [("moderate", "warn"), ("moderate", "error"), ("strict", "error")]
"""

    def _stages(self, answer):
        stages = self.expect_type("stages", answer.stages, (list, tuple), '[("moderate", "warn"), ...]')
        if len(stages) != 3 or not all(isinstance(s, (list, tuple)) and len(s) == 2 for s in stages):
            raise Incorrect("stages should be three (validationLevel, validationAction) pairs")
        return [tuple(s) for s in stages]

    def _write(self, what, write):
        """Return True if the write was accepted, False if the validator rejected it."""
        try:
            write()
        except OperationFailure as failure:
            if failure.code == 121:
                return False
            raise
        return True

    def _apply(self, db, answer, number, stage):
        level, action = stage
        try:
            change_validation(db, "orders", self.lab.backend, validator=dict(answer.v2_validator),
                              level=level, action=action)
        except ValidationChangeError as error:
            raise Incorrect(f"stage {number} {stage!r} could not be applied: {error}") from None
        return db.orders

    @visible(points=2)
    def validator_accepts_v2_only(self, answer):
        """The validator accepts version 2 orders (no phones, a long counter) and refuses version 1"""
        validator = self.expect_type("v2_validator", answer.v2_validator, dict, '{"$jsonSchema": {...}}')
        db = self.lab.scratch()
        docs = legacy_orders(n=CHECK_ORDERS, seed=SEED)
        try:
            db.create_collection("orders", validator=validator)
        except OperationFailure as error:
            raise Incorrect(f"the server refused the validator: {error}") from None
        for doc in docs:
            if doc["_id"] in (OVERFLOW_ID, SMALL_LONG_ID, NO_PHONE_IDS[0], 1, 2, 3):
                v2 = expected_v2(doc)
                if doc["_id"] == OVERFLOW_ID:
                    v2 = {**v2, "views": 2**31}
                if not self._write("insert", lambda: db.orders.insert_one(v2)):
                    raise Incorrect(f"the validator rejects a valid version 2 order: {v2!r:.200}")
        if self._write("insert", lambda: db.orders.insert_one(dict(_V1_ORDER))):
            raise Incorrect("the validator accepts a version 1 order (customer.phone, no schemaVersion)")

    @visible(points=1)
    def three_valid_stages(self, answer):
        """Three stages, each a valid (level, action) pair"""
        for level, action in self._stages(answer):
            if level not in ("moderate", "strict") or action not in ("warn", "error", "errorAndLog"):
                raise Incorrect(f"({level!r}, {action!r}) is not a stage: level moderate or strict, "
                                "action warn, error or errorAndLog")

    @hidden(points=2)
    def staged_on_legacy_data(self, answer):
        """Each stage lets through and stops the right writes on a collection full of version 1 orders"""
        stages = self._stages(answer)
        db = self.lab.scratch()
        seed_orders(db.orders, legacy_orders(n=60, seed=SEED))
        orders = self._apply(db, answer, 1, stages[0])
        if not self._write("update", lambda: orders.update_one({"_id": 1}, {"$inc": {"views": 1}})):
            raise Incorrect("stage 1 rejects an update to an old version 1 order: every legacy order just became "
                            "read-only. Start with moderate + warn")
        if not self._write("insert", lambda: orders.insert_one(dict(_V1_ORDER))):
            raise Incorrect("stage 1 rejects the old application's version 1 orders while it still runs: "
                            "start with warn, which only logs")
        orders = self._apply(db, answer, 2, stages[1])
        if self._write("insert", lambda: orders.insert_one({**_V1_ORDER, "_id": 7002})):
            raise Incorrect("stage 2 still accepts new version 1 orders: once the old application is gone, "
                            "switch validationAction to error")
        if not self._write("update", lambda: orders.update_one({"_id": 2}, {"$inc": {"views": 1}})):
            raise Incorrect("stage 2 rejects updates to legacy version 1 orders: keep validationLevel moderate "
                            "until the batch job has migrated them")
        v2_id = orders.find_one({VERSION_FIELD: 2})["_id"]
        if self._write("update", lambda: orders.update_one({"_id": v2_id}, {"$unset": {"customer.phones": ""}})):
            raise Incorrect("stage 2 lets a valid version 2 order be broken: validationAction should be error")

    @hidden(points=2)
    def strict_after_the_tail(self, answer):
        """After the batch migrates the tail, the last stage checks every write on every order"""
        stages = self._stages(answer)
        db = self.lab.scratch()
        seed_orders(db.orders, legacy_orders(n=60, seed=SEED))
        self._apply(db, answer, 1, stages[0])
        self._apply(db, answer, 2, stages[1])
        migrate_ids(db.orders, self.lab.backend, [d["_id"] for d in db.orders.find(NOT_MIGRATED, {"_id": 1})])
        orders = self._apply(db, answer, 3, stages[2])
        if not self._write("update", lambda: orders.update_one({"_id": OVERFLOW_ID}, {"$inc": {"views": 1}})):
            raise Incorrect(f"the last stage rejects a counter update on order {OVERFLOW_ID} (its views is a long)")
        orders.insert_one({**_V1_ORDER, "_id": 7003}, bypass_document_validation=True)
        if self._write("update", lambda: orders.update_one({"_id": 7003}, {"$inc": {"views": 1}})):
            raise Incorrect("the last stage still lets updates through on a version 1 order: "
                            "finish with validationLevel strict")
        if self._write("insert", lambda: orders.insert_one({**_V1_ORDER, "_id": 7004})):
            raise Incorrect("the last stage accepts a version 1 insert: validationAction should be error")


EXERCISES = (Audit, MigrateOnWrite, ReadBothVersions, BatchJob, Reconcile, Staging)
