"""Lab 05, exercise 05.3: read both versions while the migration runs.

The reader and the lookup are judged on seeded orders and then inside the
migration simulator (:mod:`course.toolkit.migration_sim`), each with a correct
partner, so that a mistake in one costs only its own requirement; an upgrade
mistake is the ``upgrade`` requirement's alone (results that agree with the
learner's own ``upgrade`` are accepted by the other two).
"""

from __future__ import annotations

import copy
from typing import Any

from course.datasets.migration import NO_PHONE_IDS, VERSION_FIELD, phone_of
from course.engine.exercise import Exercise, Incorrect, LearnerCodeError, LearnerRaised, NotAttempted, hidden, visible
from course.lessons.lesson05.data import (database_state, expected_v2, first_difference, orders_of, seeded_orders,
                                          writes_seen)
from course.toolkit.migration_sim import NOT_MIGRATED, careful_batches, simulate
from course.engine.recording import RecordingCollection

#: the rule a lookup that misses one version breaks (the hint, not the message, shows the query)
_BOTH_PLACES = "a version 1 order holds the phone in customer.phone, a version 2 order in customer.phones"


def _reference_read(orders: Any, order_id: Any) -> Any:
    doc = orders.find_one({"_id": order_id})
    return None if doc is None else expected_v2(doc)


def _reference_lookup(orders: Any, phone: str) -> list:
    return [expected_v2(d) for d in orders.find({"$or": [{"customer.phone": phone}, {"customer.phones": phone}]})]


def _phone_shared_by_both_versions(docs) -> tuple[str, list]:
    for phone in sorted({phone_of(d["customer"]["_id"]) for d in docs}):
        want = sorted(d["_id"] for d in docs
                      if phone in [d["customer"].get("phone")] + d["customer"].get("phones", []))
        if {d.get(VERSION_FIELD, 1) for d in docs if d["_id"] in want} == {1, 2}:
            return phone, want
    raise AssertionError("the seed has no customer with orders in both versions")


#: the _id of a version 2 order added to the visible lookup check, holding the shared phone second in its list
SECOND_PHONE_ID = 970


def _with_a_second_phone(docs, phone: str) -> dict:
    """A version 2 order (a copy of the seed's first) whose customer has another phone first, then ``phone``."""
    model = next(d for d in docs if d.get(VERSION_FIELD) == 2)
    customer = {**model["customer"], "phones": ["0900000970", phone]}
    return {**copy.deepcopy(model), "_id": SECOND_PHONE_ID, "customer": customer}


def _dual_written(model: dict, order_id: int) -> dict:
    """A copy of version 2 order ``model`` as dual-writing leaves it (lesson 05.5): customer.phone kept too."""
    customer = {**model["customer"], "phone": (model["customer"].get("phones") or [phone_of(1)])[0]}
    return {**copy.deepcopy(model), "_id": order_id, "customer": customer}


class ReadBothVersions(Exercise):
    id = "05.3"
    title = "Read both versions while the migration runs"
    answers = ("upgrade", "read_order", "find_by_phone")
    requirements = {
        "upgrade": "upgrade(doc) returns the version 2 form: schema_version 2, customer.phones [phone] or [] "
                   "without a phone, no customer.phone, every other field kept; a version 2 order as it is",
        "read_order": "read_order(orders, order_id) returns that order in the version 2 shape whatever version "
                      "is stored, or None when there is no such order",
        "find_by_phone": "find_by_phone(orders, phone) returns every order with that phone in either field, "
                         "each in the version 2 shape (a list or any iterable, in any order)",
        "read_only": "reading never writes",
    }
    hints = (
        "upgrade(doc) turns a version 1 document into the version 2 shape in memory: pop customer.phone, "
        "set customer.phones to [phone] (or [] without one), set schema_version to 2. Do not write anything.",
        'find_by_phone must look in both places: {"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}, '
        "then upgrade each result.",
    )
    solution_code = """
def upgrade(doc):
    \"\"\"Return an order in the version 2 shape (in memory: nothing is written).\"\"\"
    if doc is None or doc.get("schema_version") == 2:
        return doc
    customer = dict(doc["customer"])
    phone = customer.pop("phone", None)
    customer["phones"] = [] if phone is None else [phone]
    return {**doc, "schema_version": 2, "customer": customer}
def read_order(orders, order_id):
    \"\"\"One order by _id, in the version 2 shape, whatever version is stored.\"\"\"
    return upgrade(orders.find_one({"_id": order_id}))
def find_by_phone(orders, phone):
    \"\"\"Every order with this phone number, version 1 or 2, in the version 2 shape.\"\"\"
    query = {"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}
    return [upgrade(doc) for doc in orders.find(query)]
"""

    # ---- upgrade ----
    def _upgrade(self, answer, docs):
        for doc in docs:
            got = self.call("upgrade", answer.upgrade, copy.deepcopy(doc))
            problem = first_difference(expected_v2(doc), got) if isinstance(got, dict) else \
                f"it returned {got!r:.60} instead of a document"
            if problem:
                raise Incorrect(f"upgrade(order {doc['_id']}, version {doc.get(VERSION_FIELD, 1)}): {problem}")

    @visible(points=2, checks="upgrade")
    def upgrades_both_versions(self, answer):
        """upgrade gives the version 2 form of a version 1 order, one without a phone, and a version 2 order
        (a dual-written one, which still has customer.phone, included) as it is"""
        docs = {d["_id"]: d for d in orders_of()}
        self._upgrade(answer, [docs[1], docs[NO_PHONE_IDS[0]], docs[16], docs[6], _dual_written(docs[16], 963)])

    @hidden(points=1, checks="upgrade")
    def upgrades_other_orders(self, answer):
        """Other orders: more customer fields, a version 2 order without phones, a dual-written version 2 order"""
        docs = list(orders_of(40, 8)) + [
            {"_id": 960, "customer": {"_id": 3, "name": "C 3", "phone": phone_of(3), "email": "c3@example"},
             "views": 0, "items": [{"sku": "b"}]},
            {"_id": 961, VERSION_FIELD: 2, "customer": {"_id": 4, "name": "C 4", "phones": []}},
            # dual-written (lesson 05.5): a version 2 order that still carries the old field, returned as it is
            {"_id": 962, VERSION_FIELD: 2, "customer": {"_id": 5, "name": "C 5", "phone": phone_of(5),
                                                        "phones": [phone_of(5)]}},
        ]
        self._upgrade(answer, [d for d in docs if d["_id"] in (1, 2, 17, 33, 960, 961, 962)])

    # ---- shared: a returned order is right if it is the v2 form, or what the learner's own upgrade makes
    def _own_upgrade(self, answer, doc):
        try:
            return self.call("upgrade", answer.upgrade, copy.deepcopy(doc))
        except (LearnerCodeError, NotAttempted, Incorrect):
            return None

    def _judge(self, answer, raw, got, what):
        problem = first_difference(expected_v2(raw), got) if isinstance(got, dict) else \
            f"it returned {got!r:.60} instead of a document"
        if problem and not (isinstance(got, dict) and got.get(VERSION_FIELD) == 2
                            and got == self._own_upgrade(answer, raw)):
            raise Incorrect(f"{what}: {problem}")

    # ---- read_order ----
    def _read(self, answer, orders, order_id):
        return self.call("read_order", answer.read_order, orders, order_id)

    @visible(points=2, checks="read_order")
    def reads_both_versions(self, answer):
        """read_order gives a version 1 and a version 2 order in the version 2 shape, and None for no order"""
        orders = seeded_orders(self.lab)
        for raw in (orders.find_one(NOT_MIGRATED), orders.find_one({VERSION_FIELD: 2})):
            got = self._read(answer, orders, raw["_id"])
            self._judge(answer, raw, got, f"read_order(orders, {raw['_id']}) (version {raw.get(VERSION_FIELD, 1)})")
        got = self.call("read_order", answer.read_order, orders, 10_000, expect_raise=True)
        if isinstance(got, LearnerRaised):
            raise Incorrect(f"read_order(orders, 10000), an order that does not exist, raised {got}: it should "
                            "return None")
        if got is not None:
            raise Incorrect(f"read_order(orders, 10000), an order that does not exist, should return None, "
                            f"got {got!r:.80}")

    def _simulate(self, answer, reader, lookup):
        orders = seeded_orders(self.lab)
        for order_id in NO_PHONE_IDS:  # phoneless orders are the upgrade requirement's business
            orders.update_one({"_id": order_id, **NOT_MIGRATED}, {"$set": {"customer.phone": phone_of(order_id)}})
            orders.update_one({"_id": order_id, VERSION_FIELD: 2}, {"$set": {"customer.phones": [phone_of(order_id)]}})
        result = simulate(orders, self.lab.backend, reader=reader, lookup=lookup,
                          migration=careful_batches(self.lab.backend), seed=3, batch_size=20, ops_per_pause=6)
        if result.anomalies:
            n = len(result.anomalies)
            raise Incorrect(f"{n} {'read' if n == 1 else 'reads'} went wrong while a batch job migrated the orders "
                            f"underneath; the first: {result.anomalies[0]}")

    @hidden(points=2, checks="read_order")
    def reader_during_migration(self, answer):
        """In the simulator, while a batch job runs and is restarted, every read by _id is right"""
        self._simulate(answer, lambda orders, order_id: self._read(answer, orders, order_id), _reference_lookup)

    # ---- find_by_phone ----
    def _lookup(self, answer, orders, phone) -> list:
        found = self.call("find_by_phone", answer.find_by_phone, orders, phone)
        if isinstance(found, (dict, str, bytes)) or found is None:
            raise Incorrect(f"find_by_phone should return a list (or any iterable) of orders, got {found!r:.60}")
        try:
            return list(found)
        except TypeError:
            raise Incorrect(f"find_by_phone should return a list (or any iterable) of orders, got a "
                            f"{type(found).__name__}") from None

    @visible(points=2, checks="find_by_phone")
    def lookup_finds_both_versions(self, answer):
        """find_by_phone finds a customer's version 1 and version 2 orders (in one the phone is second in
        customer.phones), in the version 2 shape"""
        phone, want = _phone_shared_by_both_versions(orders_of())
        orders = seeded_orders(self.lab, extra=[_with_a_second_phone(orders_of(), phone)])
        want = sorted(want + [SECOND_PHONE_ID], key=str)
        found = self._lookup(answer, orders, phone)
        ids = sorted((d.get("_id") for d in found if isinstance(d, dict)), key=str)
        if ids != want:
            missed = [i for i in want if i not in ids]
            versions = sorted({orders.find_one({"_id": i}).get(VERSION_FIELD, 1) for i in missed}) if missed else []
            later = [i for i in missed if phone in orders.find_one({"_id": i})["customer"].get("phones", [])[1:]]
            where = (f"; order {later[0]} holds it second in customer.phones, and a phone anywhere in that list "
                     "counts" if later else "")
            raise Incorrect(f"find_by_phone(orders, {phone!r}) should find orders {want}, found {ids}"
                            + (f": the missed ones are version {' and '.join(map(str, versions))} orders, and the "
                               f"lookup must find either version ({_BOTH_PLACES}){where}"
                               if missed else ""))
        for doc in found:
            self._judge(answer, orders.find_one({"_id": doc["_id"]}), doc, f"find_by_phone: order {doc['_id']}")

    @hidden(points=2, checks="find_by_phone")
    def lookup_during_migration(self, answer):
        """In the simulator, while a batch job runs and is restarted, every lookup finds every order"""
        self._simulate(answer, _reference_read, lambda orders, phone: self._lookup(answer, orders, phone))

    # ---- read_only ----
    def _reads_only(self, answer, order_ids, phones):
        orders = seeded_orders(self.lab)
        before = database_state(orders.database)
        recorded = RecordingCollection(orders)
        for order_id in order_ids:
            self._read(answer, recorded, order_id)
        for phone in phones:
            self._lookup(answer, recorded, phone)
        wrote = writes_seen(recorded)
        if wrote or database_state(orders.database) != before:
            raise Incorrect(f"reading wrote to the database ({', '.join(wrote) or 'the data changed'}): upgrade "
                            "in memory, and leave writing to migrate-on-write and the batch job")

    @visible(points=1, checks="read_only")
    def reading_writes_nothing(self, answer):
        """Reading an order and looking up a phone write nothing"""
        self._reads_only(answer, (1, 16), (phone_of(40),))

    @hidden(points=1, checks="read_only")
    def reading_every_order_writes_nothing(self, answer):
        """Reading every order, and looking up every phone, write nothing"""
        docs = orders_of()
        self._reads_only(answer, [d["_id"] for d in docs], sorted({phone_of(d["customer"]["_id"]) for d in docs})[:10])
