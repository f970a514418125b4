"""Lesson 06, exercise 06.3: three shapes of one entity get the field that says which.

The checks seed the shop's payments (card, bank transfer and voucher, told apart
today only by their fields), call ``add_method(db)`` and rerun the audit's
``mixed_kinds``; the hidden check uses another, smaller set of payments.
"""

from __future__ import annotations

from typing import Any

from course.engine.exercise import Incorrect, hidden, visible
from course.lessons.lesson06.shop import Repair, Variant, by_id, first_change
from course.lessons.lesson06.text import clipped

LEGACY = Variant("legacy")
OTHER = Variant("other payments", (("seed", 21), ("payments", 90), ("orders", 120)))
#: method -> the field only that kind of payment has
MARKERS = {"card": "card_last4", "bank": "iban", "voucher": "voucher_code"}


def method_of(payment: dict) -> str | None:
    """The method a payment's fields say it is, or None."""
    return next((method for method, marker in MARKERS.items() if marker in payment), None)


class AddMethod(Repair):
    id = "06.3"
    title = "Three shapes of one entity: add the discriminator"
    answers = ("add_method",)
    function = "add_method"
    kind = "mixed_kinds"
    collections = ("payments",)
    requirements = {
        "method": "every payment gets a field method: \"card\" when it has card_last4, \"bank\" when it has iban, "
                  "\"voucher\" when it has voucher_code; the audit no longer reports mixed kinds in payments, and "
                  "the reads by method give what the reads by field gave",
        "unchanged": "nothing else changes: every payment keeps every other field as it was, none is added or "
                     "removed",
    }
    hints = (
        "Each kind has a field no other kind has: card_last4, iban, voucher_code. Filter on it with $exists.",
        "Three update_many calls, one per kind: update_many({'iban': {'$exists': True}}, {'$set': {'method': 'bank'}}).",
    )
    solution_code = """
def add_method(db):
    \"\"\"Give every payment the field that says which kind it is.\"\"\"
    for method, marker in (("card", "card_last4"), ("bank", "iban"), ("voucher", "voucher_code")):
        db.payments.update_many({marker: {"$exists": True}}, {"$set": {"method": method}})
"""

    def reads_before(self, db: Any) -> dict:
        """The payments of an order, and each kind's payments found by the field only that kind has."""
        reads = {"payments_of_order": [d["_id"] for d in db.payments.find({"order_id": 5}, {"_id": 1}).sort("_id", 1)]}
        for method, marker in MARKERS.items():
            reads[f"{method}_payments"] = [d["_id"] for d in by_id(db.payments, {marker: {"$exists": True}}, {"_id": 1})]
        return reads

    def reads_after(self, db: Any) -> dict:
        """The same reads, each kind found by its method."""
        reads = {"payments_of_order": [d["_id"] for d in db.payments.find({"order_id": 5}, {"_id": 1}).sort("_id", 1)]}
        for method in MARKERS:
            reads[f"{method}_payments"] = [d["_id"] for d in by_id(db.payments, {"method": method}, {"_id": 1})]
        return reads

    def _method(self, answer, variant):
        run = self.run(answer, variant)
        for payment in by_id(run.db.payments):
            wanted = method_of(payment)
            if wanted is None:
                continue  # a payment that lost its fields is the other requirement's business
            if payment.get("method") != wanted:
                found = f"it is {clipped(payment['method'], 40)}" if "method" in payment else "it has no method"
                raise Incorrect(f"payment {payment['_id']} has {MARKERS[wanted]}, so its method should be {wanted!r}; "
                                f"{found}")
        self.check_audit(run, ": every payment needs its method")
        self.check_reads(run, ": find each kind by method as its own field found it",
                         only=[f"{method}_payments" for method in MARKERS])

    def _unchanged(self, answer, variant):
        run = self.run(answer, variant)
        seeded = {p["_id"]: p for p in run.seeded.collections["payments"]}
        now = {p["_id"]: {k: v for k, v in p.items() if k != "method"} for p in by_id(run.db.payments)}
        if sorted(now, key=repr) != sorted(seeded, key=repr):
            lost, added = sorted(set(seeded) - set(now)), sorted(set(now) - set(seeded), key=repr)
            raise Incorrect(f"the payments are not the same ones: {len(lost)} lost {lost[:3]}, {len(added)} added "
                            f"{added[:3]}: add a field, remove nothing")
        for _id in sorted(seeded):
            difference = first_change(seeded[_id], now[_id])
            if difference:
                raise Incorrect(f"payment {_id} changed beyond its method ({difference}): set method, touch nothing "
                                "else")
        self.check_reads(run, ": set method, touch nothing else", only=["payments_of_order"])  # by other fields

    @visible(points=2, checks="method")
    def every_payment_says_its_method(self, answer):
        """The legacy payments: each gets its method; the audit and the reads agree"""
        self._method(answer, LEGACY)

    @visible(points=1, checks="unchanged")
    def nothing_else_changes(self, answer):
        """The legacy payments: every other field as it was, none added or removed"""
        self._unchanged(answer, LEGACY)

    @hidden(points=1, checks="method")
    def other_payments_say_their_method(self, answer):
        """Other payments: each gets its method"""
        self._method(answer, OTHER)

    @hidden(points=1, checks="unchanged")
    def other_payments_unchanged(self, answer):
        """Other payments: nothing else changes"""
        self._unchanged(answer, OTHER)
