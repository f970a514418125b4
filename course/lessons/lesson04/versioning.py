"""Lesson 04, exercises 04.7 and 04.8: schema versioning (read every live version, query every place) and
the self-check.
"""

from __future__ import annotations

import random

from course.datasets.patterns import versioned_orders
from course.engine.answer_keys import refuse_other_keys
from course.engine.exercise import Exercise, Incorrect, LearnerRaised, hidden, visible
from course.lessons.lesson04.common import COMPARE, as_list, data, first_difference, ordered, seeded

SHARED_PHONE = "0901234567"


def _shuffled_orders(extra: bool, backwards: bool = False) -> list[dict]:
    """The versioned orders (when ``extra``: two more sharing the phone, one of them second in a v2 list, and
    two whose phones contain it, or are contained in it, without being it), inserted out of _id order
    (shuffled, or ``backwards``: highest _id first)."""
    orders = versioned_orders()
    if extra:
        orders += [{"_id": 13, "tenantId": "t1", "total": 120_000, "customer": {"name": "C 13", "phone": SHARED_PHONE}},
                   {"_id": 14, "tenantId": "t1", "total": 45_000,
                    "customer": {"name": "C 14", "phone": f"+44 {SHARED_PHONE} ext 2"}},
                   {"_id": 15, "tenantId": "t1", "schema_version": 2, "total": 99_000,
                    "customer": {"name": "C 15", "phones": ["0905550000", SHARED_PHONE]}},
                   {"_id": 16, "tenantId": "t1", "schema_version": 2, "total": 61_000,
                    "customer": {"name": "C 16", "phones": [SHARED_PHONE[1:6], f"{SHARED_PHONE}9"]}}]
    if backwards:
        return sorted(orders, key=lambda order: order["_id"], reverse=True)
    random.Random(len(orders)).shuffle(orders)
    return orders


def _phones(order: dict) -> list[str]:
    customer = order["customer"]
    return [customer["phone"]] if "phone" in customer else list(customer.get("phones", []))


class Versioning(Exercise):
    id = "04.7"
    title = "Schema versioning: read every live version, query every place a field can be"
    answers = ("phones_of", "find_by_phone")
    requirements = {
        "v1": "phones_of returns a v1 order's customer.phone as a one-item list, [] when it is missing (v1: "
              "schema_version 1 or no schema_version)",
        "v2": "phones_of returns a v2 order's customer.phones as a list",
        "unknown": "phones_of raises ValueError for any other schema_version",
        "query": "find_by_phone returns the whole orders that have the phone in either place",
        "order": "find_by_phone returns them sorted by _id",
    }
    hints = (
        "A document without schema_version is version 1: customer.phone (a string, maybe missing). "
        "Version 2 has customer.phones (a list).",
        "phones_of returns a list in both cases, and raises ValueError for a version it does not know.",
        "find_by_phone: {'$or': [{'customer.phone': phone}, {'customer.phones': phone}]}, sorted by _id.",
    )
    solution_code = """
def phones_of(order):
    \"\"\"The order's phones as a list, whichever live version the order is in.\"\"\"
    version = order.get("schema_version", 1)
    if version == 1:
        phone = order["customer"].get("phone")
        return [phone] if phone else []
    if version == 2:
        return list(order["customer"].get("phones", []))
    raise ValueError(f"order {order.get('_id')} has schema_version {version}, which this code cannot read")


def find_by_phone(orders, phone):
    \"\"\"Orders with this phone, in both places it can be, in _id order.\"\"\"
    query = {"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}
    return list(orders.find(query).sort("_id", 1))
"""

    def _check_phones(self, answer, order, want):
        version = order.get("schema_version", "none")
        got = self.call("phones_of", answer.phones_of, dict(order), expect_raise=True)
        if isinstance(got, LearnerRaised):
            raise Incorrect(f"phones_of(order {order['_id']}, schema_version {version}) raised {got.type_name}: "
                            f"{got.message[:80]}; a v1 order (schema_version 1 or none) may lack customer.phone, a v2 "
                            "order has customer.phones")
        if not isinstance(got, list):
            raise Incorrect(f"phones_of(order {order['_id']}, schema_version {version}) should return a list; it "
                            f"returned a {type(got).__name__}: {got!r:.60}")
        if got != want:
            raise Incorrect(f"phones_of(order {order['_id']}, schema_version {version}) returned {got}; the order's "
                            f"customer is {order['customer']}")

    @visible(points=2, checks="v1")
    def reads_v1(self, answer):
        """A v1 order with a phone, one without, and one whose schema_version 1 is written out"""
        orders = data(versioned_orders)
        self._check_phones(answer, orders[0], [orders[0]["customer"]["phone"]])
        self._check_phones(answer, orders[4], [])
        self._check_phones(answer, {"_id": 30, "schema_version": 1, "customer": {"name": "C", "phone": "0907000000"}},
                           ["0907000000"])

    @hidden(points=1, checks="v1")
    def reads_v1_other_cases(self, answer):
        """Other v1 orders, and a written-out schema_version 1 without a phone"""
        for order in data(versioned_orders)[1:6]:
            self._check_phones(answer, order, _phones(order))
        self._check_phones(answer, {"_id": 31, "schema_version": 1, "customer": {"name": "C"}}, [])

    @visible(points=1, checks="v2")
    def reads_v2(self, answer):
        """v2 orders with two phones and with one"""
        orders = data(versioned_orders)
        for order in (orders[6], orders[7]):
            self._check_phones(answer, order, order["customer"]["phones"])

    @hidden(points=1, checks="v2")
    def reads_v2_without_phones(self, answer):
        """A v2 order with an empty phones list"""
        self._check_phones(answer, {"_id": 32, "schema_version": 2, "customer": {"name": "C", "phones": []}}, [])

    def _check_unknown(self, answer, version):
        future = {"_id": 99, "schema_version": version, "customer": {"contacts": [{"phone": "0900000000"}]}}
        raised = self.raised("phones_of", answer.phones_of, future)
        if raised is None:
            raise Incorrect(f"phones_of should raise ValueError for schema_version {version!r}: a reader that "
                            "guesses hides the fact that it is out of date")
        if not raised.is_a("ValueError"):
            raise Incorrect(f"for schema_version {version!r} phones_of raised {raised.type_name}: raise ValueError, "
                            "saying the version is unknown")

    @visible(points=2, checks="unknown")
    def unknown_version_fails_loudly(self, answer):
        """schema_version 3 raises ValueError"""
        self._check_unknown(answer, 3)

    @hidden(points=1, checks="unknown")
    def other_unknown_versions(self, answer):
        """schema_version 0 and 4 raise ValueError too"""
        self._check_unknown(answer, 0)
        self._check_unknown(answer, 4)

    def _found(self, answer, extra: bool, phone: str, backwards: bool = False):
        orders = data(_shuffled_orders, extra, backwards)
        db = seeded(self.lab, orders=orders)
        got = as_list("find_by_phone", self.call("find_by_phone", answer.find_by_phone, db.orders, phone))
        return orders, got

    def _check_query(self, orders, got, phone):
        stored = {o["_id"]: o for o in orders}
        for item in got:
            if not isinstance(item, dict) or "_id" not in item:
                raise Incorrect(f"find_by_phone should return whole orders (documents); one item is {item!r:.60}")
            difference = first_difference(stored.get(item["_id"]), item, words=COMPARE)
            if difference:
                raise Incorrect(f"find_by_phone should return whole orders, as stored; order {item['_id']} differs "
                                f"({difference})")
        ids = sorted({item["_id"] for item in got})
        want = sorted(o["_id"] for o in orders if phone in _phones(o))
        if ids != want or len(got) != len(want):
            lost = [f"the {'v2' if stored[i].get('schema_version') == 2 else 'v1'} order {i}"
                    for i in want if i not in ids]
            strays = [f"order {i} has {_phones(stored[i])}" for i in ids if i not in want and i in stored]
            raise Incorrect(f"find_by_phone({phone!r}) found orders {[item['_id'] for item in got]}"
                            + (f": it misses {' and '.join(lost)}" if lost else f"; the orders with it are {want}")
                            + (f" (an order has the phone when one of its phones is {phone!r}, whole: "
                               f"{'; '.join(strays)})" if strays else ""))

    @visible(points=2, checks="query")
    def query_finds_both_versions(self, answer):
        """The shared phone is found in v1 and v2 orders (second in one v2 list), as whole orders; phones that
        contain it, or a part of it, are other phones"""
        orders, got = self._found(answer, True, SHARED_PHONE)
        self._check_query(orders, got, SHARED_PHONE)
        orders, got = self._found(answer, True, SHARED_PHONE[1:6])
        self._check_query(orders, got, SHARED_PHONE[1:6])

    @hidden(points=1, checks="query")
    def every_phone_findable(self, answer):
        """Every phone of every order is found, and only its orders"""
        orders = data(_shuffled_orders, True)
        db = seeded(self.lab, orders=orders)
        for phone in sorted({p for o in orders for p in _phones(o)}):
            got = as_list("find_by_phone", self.call("find_by_phone", answer.find_by_phone, db.orders, phone))
            self._check_query(orders, got, phone)

    def _check_order(self, got):
        ids = [item.get("_id") if isinstance(item, dict) else item for item in got]
        if ids != ordered(ids):
            raise Incorrect(f"find_by_phone should return the orders sorted by _id; it returned them in the order "
                            f"{ids}")

    @visible(points=1, checks="order")
    def sorted_by_id(self, answer):
        """Four orders with the phone, in both versions, inserted out of _id order: they come sorted by _id"""
        self._check_order(self._found(answer, True, SHARED_PHONE)[1])

    @hidden(points=1, checks="order")
    def sorted_by_id_inserted_backwards(self, answer):
        """The same orders inserted highest _id first: still sorted by _id"""
        self._check_order(self._found(answer, True, SHARED_PHONE, backwards=True)[1])


# ---------------------------------------------------------------------------
SELF_CHECK_CHOICES = {
    "projection_shrinks_working_set": ("yes", "no"),
    "inc_on_10mb_document_rewrites": ("4 bytes", "the field's page", "the whole document"),
    "outliers_at_40_percent": ("outlier", "subset or reference", "bucket"),
    "lazy_migration_phone_search": ("finds everything", "misses unmigrated orders", "raises an error"),
}
SELF_CHECK_ANSWERS = {
    "projection_shrinks_working_set": "no",
    "inc_on_10mb_document_rewrites": "the whole document",
    "outliers_at_40_percent": "subset or reference",
    "lazy_migration_phone_search": "misses unmigrated orders",
}
_WHY = {
    "projection_shrinks_working_set": "Think of what the cache holds when only two fields are returned.",
    "inc_on_10mb_document_rewrites": "Think of what becomes dirty and what the next checkpoint writes.",
    "outliers_at_40_percent": "When is an exception no longer an exception?",
    "lazy_migration_phone_search": "Which orders does a lazy migration leave untouched?",
}


class SelfCheck(Exercise):
    id = "04.8"
    title = "Self-check: four short answers"
    answers = ("self_check",)
    fixed_answer = True  #: four answers about the lesson: nothing to vary, so no hidden assertion
    requirements = {
        "working_set": "question 1 (key projection_shrinks_working_set) is answered right",
        "checkpoint": "question 2 (key inc_on_10mb_document_rewrites) is answered right",
        "outliers": "question 3 (key outliers_at_40_percent) is answered right",
        "lazy": "question 4 (key lazy_migration_phone_search) is answered right",
        "keys": "self_check has one key per question: no key besides the four of the statement",
    }
    hints = (
        "Re-read the measurement lab: what does a projection cut, and what must the cache still hold?",
        "An outlier design is for a few exceptions; a lazy migration only changes documents it touches.",
    )
    solution_code = """
self_check = {
    "projection_shrinks_working_set": "no",
    "inc_on_10mb_document_rewrites": "the whole document",
    "outliers_at_40_percent": "subset or reference",
    "lazy_migration_phone_search": "misses unmigrated orders",
}
"""

    def _given(self, answer) -> dict:
        return self.expect_type("self_check", answer.self_check, dict,
                                "{'projection_shrinks_working_set': ..., 'inc_on_10mb_document_rewrites': ..., ...} "
                                "with the four keys of the statement")

    def _judge(self, answer, key):
        given = self._given(answer)
        if key not in given:
            raise Incorrect(f"self_check has no key {key!r}: the statement names the four keys")
        choices = SELF_CHECK_CHOICES[key]
        if given[key] not in choices:
            raise Incorrect(f"self_check[{key!r}] should be one of {list(choices)}, got {given[key]!r}")
        if given[key] != SELF_CHECK_ANSWERS[key]:
            raise Incorrect(f"{key}: not {given[key]!r}. {_WHY[key]}")

    @visible(points=1, checks="working_set")
    def question_1(self, answer):
        """Question 1: does a projection shrink the working set?"""
        self._judge(answer, "projection_shrinks_working_set")

    @visible(points=1, checks="checkpoint")
    def question_2(self, answer):
        """Question 2: what does a 4-byte $inc make the checkpoint write?"""
        self._judge(answer, "inc_on_10mb_document_rewrites")

    @visible(points=1, checks="outliers")
    def question_3(self, answer):
        """Question 3: which design fits when 40% exceed the threshold?"""
        self._judge(answer, "outliers_at_40_percent")

    @visible(points=1, checks="lazy")
    def question_4(self, answer):
        """Question 4: what does a search on the new field find during a lazy migration?"""
        self._judge(answer, "lazy_migration_phone_search")

    @visible(points=1, checks="keys")
    def one_key_per_question(self, answer):
        """self_check has no key besides the four questions' keys"""
        refuse_other_keys("self_check", self._given(answer), SELF_CHECK_ANSWERS)
