"""Lab 05, exercise 05.5: reconcile the two copies of a dual write before contracting.

The data is built once in Python (each kind of drift applied to a copy of the
seed) and inserted in a shuffled order, so the natural order is not the
``_id`` order.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from course.datasets.migration import NO_PHONE_IDS, phone_of
from course.store.capabilities import Capability
from course.engine.exercise import Exercise, Incorrect, LearnerCodeError, Unsupported, hidden, visible
from course.lessons.lesson05.data import database_state, expected_v2, orders_of, shuffled, writes_seen
from course.engine.recording import RecordingCollection

#: (n, seed) -> the _id given each kind of drift, and the orders not migrated yet
DRIFT = {
    (60, 5): {"edited": 5, "prepended": 7, "appended": 8, "phone_lost": 10, "phones_emptied": 12,
              "unmigrated": (1001,)},
    (45, 8): {"edited": 21, "prepended": 3, "appended": 30, "phone_lost": 14, "phones_emptied": 40,
              "unmigrated": (2001, 2002)},
}
_DISAGREE = ("edited", "prepended", "phone_lost", "phones_emptied")


def _engine_expression_gap(error: BaseException | None) -> bool:
    """True when ``error`` is mongomock failing on an expression a server evaluates: a KeyError or IndexError
    raised inside mongomock's own code (a missing field, $arrayElemAt past the end), or its refusal of the $type
    expression.  A KeyError of the learner's own code (``doc["customer"]["phone"]``) is not one."""
    if isinstance(error, (KeyError, IndexError)):
        frame, last = error.__traceback__, ""
        while frame is not None:
            last = frame.tb_frame.f_code.co_filename.replace("\\", "/")
            frame = frame.tb_next
        return "/mongomock/" in last
    return type(error).__name__ == "OperationFailure" and "Unrecognized expression '$type'" in str(error)


@functools.cache
def dual_docs(n: int, seed: int) -> tuple[dict, ...]:
    """Orders in the expand phase (v2 with customer.phone copied), with each kind of drift, shuffled."""
    drift = DRIFT[(n, seed)]
    docs = []
    for doc in orders_of(n, seed):
        v2 = copy.deepcopy(expected_v2(doc))
        customer = v2["customer"]
        if customer["phones"]:
            customer["phone"] = customer["phones"][0]
        order_id = v2["_id"]
        if order_id == drift["edited"]:
            customer["phone"] = "0911111111"  # an old instance edits the only field it knows
        elif order_id == drift["prepended"]:
            customer["phones"].insert(0, "0922222222")
        elif order_id == drift["appended"]:
            customer["phones"].append("0933333333")  # a second number: still in agreement
        elif order_id == drift["phone_lost"]:
            customer.pop("phone")  # the second write failed
        elif order_id == drift["phones_emptied"]:
            customer["phones"] = []
        docs.append(v2)
    for i, order_id in enumerate(drift["unmigrated"]):
        customer = {"_id": 1, "name": "Customer 1"}
        if i == 0:
            customer["phone"] = phone_of(1)
        docs.append({"_id": order_id, "tenantId": "t1", "customer": customer, "views": 0})
    return tuple(shuffled(docs, seed))


def dual_written(lab: Any, n: int = 60, seed: int = 5) -> Any:
    """A fresh scratch collection holding :func:`dual_docs`."""
    orders = lab.scratch().dual
    orders.insert_many([copy.deepcopy(d) for d in dual_docs(n, seed)])
    return orders


class Reconcile(Exercise):
    id = "05.5"
    title = "Reconcile the two copies before contracting"
    answers = ("disagreements",)
    requirements = {
        "form": "disagreements(orders) returns a list of _id values (such as [5, 7])",
        "first": "an order disagrees when customer.phone is not exactly the first of customer.phones (elsewhere "
                 "in the list is not enough); a second number after the first still agrees",
        "no_phone": "a missing phone beside a non-empty list disagrees, and so does a phone beside an empty list; "
                    "no phone and an empty list agree",
        "unmigrated": "orders without customer.phones are not listed",
        "order": "the _ids are in _id order",
        "read_only": "reconciling only reads",
    }
    hints = (
        'Look at orders that have the new field ({"customer.phones": {"$exists": True}}); orders not migrated '
        "yet are the batch job's business.",
        "The copies agree when customer.phone is exactly the first number of customer.phones, or when both are "
        "absent/empty. Compare [phone] (or [] without one) with phones[:1].",
        "Return the _ids as a list sorted by _id, and write nothing.",
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

    def _raw(self, answer, orders):
        try:
            return self.call("disagreements", answer.disagreements, orders)
        except LearnerCodeError as error:
            if not self.lab.backend.supports(Capability.MISSING_FIELD_EXPRESSIONS) \
                    and _engine_expression_gap(error.__cause__):
                raise Unsupported(Capability.MISSING_FIELD_EXPRESSIONS) from None
            raise

    def _found(self, answer, orders) -> list:
        value = self._raw(answer, orders)
        if isinstance(value, (dict, str, bytes)) or value is None or isinstance(value, (int, float)):
            raise Incorrect(f"disagreements(orders) should return a list of _ids such as [5, 7], got {value!r:.60}")
        try:
            items = list(value)
        except TypeError:
            raise Incorrect(f"disagreements(orders) should return a list of _ids such as [5, 7], got a "
                            f"{type(value).__name__}") from None
        return [item.get("_id") if isinstance(item, dict) else item for item in items]

    @visible(points=1, checks="form")
    def returns_a_list_of_ids(self, answer):
        """It returns a list of _ids"""
        value = self._raw(answer, dual_written(self.lab))
        value = self.expect_type("disagreements(orders)", value, list, "[5, 7]")
        odd = [v for v in value if isinstance(v, (dict, list, tuple))]
        if odd:
            raise Incorrect(f"disagreements(orders) should hold the _ids themselves (such as 5), not {odd[0]!r:.40}")

    def _expect(self, answer, n, seed, inside, outside, rule):
        found = self._found(answer, dual_written(self.lab, n, seed))
        drift = DRIFT[(n, seed)]
        for kind in inside:
            if drift[kind] not in found:
                raise Incorrect(f"order {drift[kind]} ({kind.replace('_', ' ')}) disagrees and is not in your list: "
                                f"{rule}")
        for kind in outside:
            ids = drift[kind] if isinstance(drift[kind], tuple) else (drift[kind],)
            for order_id in ids:
                if order_id in found:
                    raise Incorrect(f"order {order_id} ({kind.replace('_', ' ')}) is in your list: {rule}")

    _FIRST = "compare customer.phone with exactly the first of customer.phones"
    _NO_PHONE = ("a missing phone beside a non-empty list disagrees, a phone beside an empty list too, and no phone "
                 "with an empty list agrees")

    @visible(points=2, checks="first")
    def phone_is_the_first(self, answer):
        """An edited phone and a number put in front disagree; a number added after agrees"""
        self._expect(answer, 60, 5, ("edited", "prepended"), ("appended",), self._FIRST)

    @hidden(points=1, checks="first")
    def phone_is_the_first_elsewhere(self, answer):
        """The same kinds of drift in other orders"""
        self._expect(answer, 45, 8, ("edited", "prepended"), ("appended",), self._FIRST)

    def _no_phone(self, answer, n, seed):
        self._expect(answer, n, seed, ("phone_lost", "phones_emptied"), (), self._NO_PHONE)
        found = self._found(answer, dual_written(self.lab, n, seed))
        agreeing = [i for i in NO_PHONE_IDS if i in found]
        if agreeing:
            raise Incorrect(f"order {agreeing[0]} has no phone and an empty phones list, which agree, but it is in "
                            f"your list: {self._NO_PHONE}")

    @visible(points=2, checks="no_phone")
    def missing_phone_and_empty_list(self, answer):
        """A lost phone and an emptied list disagree; no phone with no phones agree"""
        self._no_phone(answer, 60, 5)

    @hidden(points=1, checks="no_phone")
    def missing_phone_and_empty_list_elsewhere(self, answer):
        """The same in other orders"""
        self._no_phone(answer, 45, 8)

    _UNMIGRATED = "orders without customer.phones are not migrated yet: they are the batch job's business"

    @visible(points=1, checks="unmigrated")
    def leaves_unmigrated_out(self, answer):
        """A version 1 order is not a disagreement"""
        self._expect(answer, 60, 5, (), ("unmigrated",), self._UNMIGRATED)

    @hidden(points=1, checks="unmigrated")
    def leaves_unmigrated_out_elsewhere(self, answer):
        """Version 1 orders, one without any phone, are not disagreements"""
        self._expect(answer, 45, 8, (), ("unmigrated",), self._UNMIGRATED)

    def _order(self, answer, n, seed):
        found = self._found(answer, dual_written(self.lab, n, seed))
        try:
            ordered = sorted(found)
        except TypeError:
            return  # mixed _id types: the form requirement's business
        if found != ordered:
            raise Incorrect(f"your list is {found[:8]}: give the _ids in _id order (sort on _id), not in the "
                            "order the collection returns them")

    @visible(points=1, checks="order")
    def in_id_order(self, answer):
        """The _ids come in _id order"""
        self._order(answer, 60, 5)

    @hidden(points=1, checks="order")
    def in_id_order_elsewhere(self, answer):
        """In _id order on another collection"""
        self._order(answer, 45, 8)

    def _read_only(self, answer, n, seed):
        orders = dual_written(self.lab, n, seed)
        before = database_state(orders.database)
        recorded = RecordingCollection(orders)
        self._raw(answer, recorded)
        wrote = writes_seen(recorded)
        if wrote or database_state(orders.database) != before:
            raise Incorrect(f"reconciling wrote to the database ({', '.join(wrote) or 'the data changed'}): it "
                            "should only read; repairs are a separate, deliberate step")

    @visible(points=1, checks="read_only")
    def only_reads(self, answer):
        """Reconciling writes nothing"""
        self._read_only(answer, 60, 5)

    @hidden(points=1, checks="read_only")
    def only_reads_elsewhere(self, answer):
        """Reconciling another collection writes nothing"""
        self._read_only(answer, 45, 8)
