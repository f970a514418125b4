"""Lesson 07, exercise 07.9: money as integer minor units, or as ``Decimal128``, never as a float.

The amounts come as the shop's price list gives them, decimal strings; several (``"0.29"``,
``"19.99"``, ``"4.35"``) are exactly the ones a float turns into a cent less.
"""

from __future__ import annotations

import re
from decimal import Decimal

from bson.decimal128 import Decimal128

from course.datasets.more_patterns import PRICES
from course.engine.exercise import Exercise, Incorrect, LearnerCodeError, LearnerRaised, hidden, visible
from course.engine.crossed_values import Opaque
from course.lessons.lesson04.common import error_text, is_int, seeded
from course.lessons.lesson06.text import clipped

SUB_CENT = ("1.005", "0.001")


def _cents(amount: str) -> int:
    return int(Decimal(amount) * 100)


def _shown(value) -> str:
    """A returned value for a message: its repr and type name; only the type name for a value that crossed
    the grader's channel as an :class:`Opaque` (so check() and a graded run say the same "a Decimal")."""
    if isinstance(value, Opaque):
        return f"a {value.type_name}"
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{clipped(value, 60)}, {article} {name}"


def _without_namespace(text: str) -> str:
    """An error's text with the scratch database's name (the grader tags it per learner) left out:
    ``collection: course_07_scratch_....prices`` reads ``in the prices collection``."""
    return re.sub(r"\bcollection: [\w.-]+\.(\w+)", r"in the \1 collection", text)


def _decimal(value):
    """The stored value as a Decimal, whichever way the backend returned a Decimal128 (else None)."""
    if isinstance(value, Decimal128):
        return value.to_decimal()
    return None


def _rounds(amount: str, stored: Decimal) -> bool:
    """True when ``stored`` is ``amount`` rounded to fewer decimals (0.0035 stored as 0.00)."""
    try:
        exponent = stored.as_tuple().exponent
        return stored.is_finite() and exponent > Decimal(amount).as_tuple().exponent \
            and stored == Decimal(amount).quantize(Decimal(1).scaleb(exponent))
    except (ArithmeticError, TypeError, ValueError):
        return False


class Money(Exercise):
    id = "07.9"
    title = "Money: integer cents, or Decimal128"
    answers = ("to_cents", "set_price")
    requirements = {
        "cents": "to_cents(amount) returns the amount, a decimal string such as '19.99', as an exact int number "
                 "of cents (1999; '8.200' is exactly 820)",
        "sub_cent": "to_cents raises ValueError for an amount with a fraction of a cent (a non-zero digit beyond "
                    "the cents), such as '1.005'",
        "decimal": "set_price(db, sku, amount) stores {_id: sku, price: Decimal128 equal to the amount} in "
                   "db.prices, replacing an earlier price of that sku",
    }
    hints = (
        "Decimal('19.99') * 100 is exactly 1999; float('19.99') * 100 is 1998.9999999999998.",
        "A Decimal d has whole cents when d * 100 == int(d * 100).",
        "Decimal128(amount) takes the string itself; update_one({'_id': sku}, {'$set': {'price': ...}}, "
        "upsert=True).",
    )
    solution_code = """
def to_cents(amount):
    \"\"\"'19.99' -> 1999, exactly; ValueError for a fraction of a cent.\"\"\"
    cents = Decimal(amount) * 100
    if cents != cents.to_integral_value():
        raise ValueError(f"{amount} has a fraction of a cent")
    return int(cents)


def set_price(db, sku, amount):
    \"\"\"Store the price as a Decimal128, exactly as written.\"\"\"
    db.prices.update_one({"_id": sku}, {"$set": {"price": Decimal128(amount)}}, upsert=True)
"""

    def _check_cents(self, answer, amounts):
        for amount in amounts:
            want = _cents(amount)
            got = self.call("to_cents", answer.to_cents, amount, expect_raise=True)
            if isinstance(got, LearnerRaised):
                if not got.is_a("ValueError"):
                    raise LearnerCodeError(f"to_cents({amount!r}) raised {got}", got)
                said = f" ({got.message:.80})" if got.message else ""
                beyond = amount.partition(".")[2][2:]
                raise Incorrect(f"to_cents({amount!r}) raised ValueError{said}, but {amount!r} is exactly {want} "
                                "cents" + (": only a non-zero digit beyond the cents is a fraction of a cent"
                                           if beyond else ""))
            if not is_int(got):
                raise Incorrect(f"to_cents({amount!r}) should return an int; got {_shown(got)}")
            if got != want:
                raise Incorrect(f"to_cents({amount!r}) returned {got}, expected {want}: a float cannot hold "
                                f"{amount} exactly, and the cents must be exact")

    @visible(points=2, checks="cents")
    def price_list(self, answer):
        """The price list: 19.99, 0.29, 4.35, 1.10, 12, 0.07, 1005.50, and 8.200 (exactly 820 cents)"""
        self._check_cents(answer, PRICES + ("8.200",))

    @hidden(points=1, checks="cents")
    def more_amounts(self, answer):
        """Zero, large amounts, one decimal place, and trailing zeros"""
        self._check_cents(answer, ("0", "0.5", "123456789.99", "8.20", "8.200", "0.57", "2.67"))

    def _check_sub_cent(self, answer, amounts):
        for amount in amounts:
            got = self.call("to_cents", answer.to_cents, amount, expect_raise=True)
            raised = got if isinstance(got, LearnerRaised) else None
            if raised is None or not raised.is_a("ValueError"):
                what = f"raised {raised.type_name}" if raised else f"returned {_shown(got)}"
                raise Incorrect(f"to_cents({amount!r}) {what}; an amount with a fraction of a cent must raise "
                                "ValueError, not be rounded")

    @visible(points=1, checks="sub_cent")
    def fraction_of_a_cent(self, answer):
        """'1.005' raises ValueError"""
        self._check_sub_cent(answer, ("1.005",))

    @hidden(points=1, checks="sub_cent")
    def tiny_fraction(self, answer):
        """'0.001' and '19.999' raise ValueError"""
        self._check_sub_cent(answer, ("0.001", "19.999"))

    def _check_price(self, answer, settings):
        db = seeded(self.lab, prices=[{"_id": "OLD-1", "price": Decimal128("1.00")}])
        for sku, amount in settings:
            raised = self.call("set_price", answer.set_price, db, sku, amount, expect_raise=True)
            if isinstance(raised, LearnerRaised):
                if raised.is_a("Inexact"):
                    raise Incorrect(f"set_price(db, {sku!r}, {amount!r}) raised decimal.Inexact: Decimal128 refuses a "
                                    "Decimal it cannot hold exactly, and a Decimal made from a float carries the "
                                    f"float's binary error (Decimal(float({amount!r})) is "
                                    f"{Decimal(float(amount))!s:.40}...): the price must be stored exactly as "
                                    "written")
                if raised.is_a("DuplicateKeyError") and any(s == sku for s, _ in settings[:settings.index(
                        (sku, amount))]):
                    raise Incorrect(f"set_price(db, {sku!r}, {amount!r}) raised "
                                    f"{_without_namespace(error_text(raised))}: {sku} already had a price, and "
                                    "set_price must replace a sku's earlier price")
                raise LearnerCodeError(f"set_price(db, {sku!r}, {amount!r}) raised "
                                       f"{_without_namespace(error_text(raised))}", raised)
        final = dict(settings)
        for sku, amount in final.items():
            doc = db.prices.find_one({"_id": sku})
            if doc is None:
                raise Incorrect(f"db.prices has no document with _id {sku!r} after set_price(db, {sku!r}, "
                                f"{amount!r})")
            value = doc.get("price")
            if _decimal(value) is None:
                raise Incorrect(f"the price of {sku} is stored as {type(value).__name__} {value!r}: store a "
                                "Decimal128 (a float is not exact, a string does not sort or add as a number)")
            stored = _decimal(value)
            if stored != Decimal(amount):
                rounded = _rounds(amount, stored)
                raise Incorrect(f"the price of {sku} is stored as {value!r}, expected exactly {amount}: "
                                + ("it was rounded" if rounded else "it carries a float's binary error"))
        if db.prices.count_documents({}) != len(final) + 1:
            raise Incorrect(f"db.prices holds {db.prices.count_documents({})} documents, expected one per sku: "
                            "replace a sku's earlier price")

    @visible(points=2, checks="decimal")
    def prices_stored(self, answer):
        """Three skus: each price a Decimal128 equal to the amount"""
        self._check_price(answer, (("TEA-1", "19.99"), ("PEN-2", "0.29"), ("CUP-3", "4.35")))

    @visible(points=1, checks="decimal")
    def price_replaced(self, answer):
        """A sku priced twice keeps the second price"""
        self._check_price(answer, (("TEA-1", "19.99"), ("TEA-1", "21.50")))

    @hidden(points=1, checks="decimal")
    def whole_and_small(self, answer):
        """Whole and tiny amounts, and a unit price with more decimals than cents"""
        self._check_price(answer, (("BIG-9", "1005.50"), ("GUM-7", "0.07"), ("BAG-4", "12"), ("INK-5", "0.0035")))
