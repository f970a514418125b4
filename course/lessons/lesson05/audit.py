"""Lab 05, exercise 05.1: audit the shapes (version, phone, phones and views types) before changing anything.

The census is judged per requirement on seeded orders: the visible checks' collection holds a bool and a
double counter besides the int and long ones, where a census naming types its own way can be told apart;
a type misnamed is the types requirement's alone (the longs check then leaves the int/long split be).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from bson.int64 import Int64

from course.store.capabilities import Capability
from course.datasets.migration import VERSION_FIELD
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson05.data import longs_in, seeded_orders
from course.toolkit.migration_audit import expected_census

#: Shapes nobody designed, added to another collection for the hidden audit checks.
ODD_ORDERS = (
    {"_id": 901, VERSION_FIELD: 2, "customer": {"name": "X", "phones": "0900000000"}, "views": 1.5},
    {"_id": 902, "customer": {"name": "Y", "phone": None}},
    {"_id": 903, VERSION_FIELD: 2, "customer": {"name": "Z", "phones": []}, "views": Int64(3_000_000_000)},
    {"_id": 904, "customer": {"name": "W", "phone": "0900000001"}, "views": Int64(0)},
    {"_id": 905, VERSION_FIELD: 2, "customer": {"name": "V", "phones": ["0900000002"]}, "views": False},
    # a newer deploy's version: its schema_version is its version (not "2 unless absent")
    {"_id": 906, VERSION_FIELD: 3, "customer": {"name": "U", "phones": ["0900000003"]}, "views": 4},
)
#: Two counters stored as other types, added to the visible audit checks' collection: a bool (an int in
#: Python) and a double, where a census that names types its own way can be told apart; an order of a
#: newer version 3, and a phone stored as null.
ODD_COUNTERS = (
    {"_id": 951, "customer": {"name": "B", "phone": "0900000951"}, "views": True},
    {"_id": 952, "customer": {"name": "D", "phone": "0900000952"}, "views": 2.5},
    # a newer deploy's version: its schema_version is its version (not "2 unless absent")
    {"_id": 953, VERSION_FIELD: 3, "customer": {"name": "T", "phones": ["0900000953"]}, "views": 7},
    # a phone stored as null: "null", not "missing" (the statement names both)
    {"_id": 954, "customer": {"name": "N", "phone": None}, "views": 3},
)
_NUMBERS = ("int", "long")


def _orders_word(n: Any) -> str:
    return f"{n} order" if n == 1 else f"{n} orders"


def _shape_words(shape: tuple, named: Iterable[str]) -> str:
    """A (phone, phones, views) shape in words, the views type as the census named it ("'int' or 'long'")."""
    views = " or ".join(repr(name) for name in sorted(named)) if shape[2] == "int or long" else repr(shape[2])
    return f"phone {shape[0]!r}, phones {shape[1]!r}, views {views}"


class Audit(Exercise):
    id = "05.1"
    title = "Audit the shapes before changing anything"
    answers = ("audit",)
    requires = frozenset({Capability.TYPE_QUERIES})
    requirements = {
        "form": "audit(orders) returns a dict: (version, phone type, phones type, views type) tuple -> number "
                "of orders (an int)",
        "counts": "every order is counted once, under its own shape",
        "version": "the version is 1 for an order without schema_version, else its schema_version",
        "types": "types are named as $type names them (\"string\", \"array\", \"missing\", \"null\", "
                 "\"double\", ...)",
        "longs": "views is \"int\" or \"long\" as stored, decided right on this engine too (a small Int64 is "
                 "a long)",
    }
    hints = (
        'Project, for every order, {"$ifNull": ["$schema_version", 1]} and {"$type": "$customer.phone"}, '
        "the same for customer.phones and views, then count the tuples in Python (or $group on them).",
        "Count each version 1 order as version 1 even though it has no schema_version ($ifNull), and name an "
        'absent field "missing", as $type does. To double-check the longs, find({"views": {"$type": "long"}}) '
        "gives the ids whose counter really is a long.",
        "Return a dict like {(1, 'string', 'missing', 'int'): 200, (1, 'string', 'missing', 'long'): 2, ...}.",
    )
    solution_code = """
def audit(orders):
    \"\"\"Count orders by (version, type of customer.phone, type of customer.phones, type of views).\"\"\"
    rows = orders.aggregate([{"$project": {
        "v": {"$ifNull": ["$schema_version", 1]},
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

    # ---- reading the answer: forms other than the stated one are still read, and judged by "form" alone
    def _raw(self, answer, orders):
        return self.call("audit", answer.audit, orders)

    def _census(self, answer, orders) -> dict:
        value = self._raw(answer, orders)
        if isinstance(value, dict):
            items = list(value.items())
        else:
            try:
                items = [tuple(pair) for pair in value]
                if not all(len(pair) == 2 for pair in items):
                    raise ValueError
            except (TypeError, ValueError):
                raise Incorrect("audit(orders) should return a dict such as {(1, 'string', 'missing', 'int'): "
                                f"50, ...}}; got a {type(value).__name__}") from None
        census: Counter = Counter()
        for key, n in items:
            if not isinstance(key, (tuple, list)) or len(key) != 4:
                raise Incorrect(f"each key should be a tuple (version, phone type, phones type, views type), "
                                f"not {key!r:.60}")
            census[tuple(key)] += n if isinstance(n, (int, float)) else 0
        return census

    @staticmethod
    def _by(census, pick) -> Counter:
        found: Counter = Counter()
        for key, n in census.items():
            found[pick(key)] += n
        return +found

    def _same(self, what, want: Counter, got: Counter, advice: str) -> None:
        """Each value the census reports must be right; values it leaves out are the counts requirement's."""
        for key in sorted(got, key=str):
            if key not in want:
                raise Incorrect(f"your census reports {_orders_word(got[key])} with {what} {key!r}, and no order "
                                f"has it{advice}")
            if want[key] != got[key]:
                raise Incorrect(f"{what} {key!r}: {_orders_word(want[key])}, your census says {got[key]}{advice}")

    def _types(self, census, orders, advice=": name types as $type names them (\"string\", \"array\", \"missing\", "
                                              "\"bool\", \"double\"...)"):
        """Each (phone, phones, views) shape the census names exists, and each shape of the orders is counted
        (int and long taken together: which one is the longs requirement's)."""
        def shape(key):
            return key[1], key[2], "int or long" if key[3] in _NUMBERS else key[3]
        documents = list(orders.find({}))
        want = self._by(expected_census(documents), shape)
        got = self._by(census, shape)
        named: dict = {}
        for key in census:
            named.setdefault(shape(key), set()).add(key[3])
        for key in sorted(got, key=str):
            if key not in want:
                raise Incorrect(f"your census reports {_orders_word(got[key])} with {_shape_words(key, named[key])}, "
                                f"and no order has that shape{advice}")
        every_order = sum(census.values()) == len(documents)  # else a shape left out is the counts requirement's
        for key in sorted(want, key=str):
            if key not in got and every_order:
                ids = sorted(d["_id"] for d in documents if shape(next(iter(expected_census([d])))) == key)
                raise Incorrect(f"{_orders_word(want[key])} (order {ids[0]}{' and more' if len(ids) > 1 else ''}) "
                                f"{'has' if want[key] == 1 else 'have'} {_shape_words(key, _NUMBERS)}, and your "
                                f"census has no such shape{advice}")
        for key in sorted(got, key=str):
            if want[key] != got[key] and (every_order or got[key] > want[key]):
                raise Incorrect(f"{_shape_words(key, named[key])}: {_orders_word(want[key])} "
                                f"{'has' if want[key] == 1 else 'have'} it, your census says {got[key]}{advice}")

    def _longs(self, census, orders):
        expected = expected_census(orders.find({}))
        versions = {k[0] for k in expected}

        def kind(key):
            return key[0], key[3]
        want = self._by({k: n for k, n in expected.items() if k[3] in _NUMBERS}, kind)
        got = self._by({k: n for k, n in census.items() if k[3] in _NUMBERS and k[0] in versions}, kind)

        def integers(counts, version):
            return sum(n for key, n in counts.items() if key[0] == version)
        for key in sorted(set(want) | set(got), key=str):
            if integers(want, key[0]) != integers(got, key[0]):
                continue  # more or fewer integers than stored: another type named "int" (the types requirement's)
            if key[0] in {k[0] for k in got} and want.get(key, 0) != got.get(key, 0):
                longs = sorted(longs_in(orders))
                raise Incorrect(f"version {key[0]}: {want.get(key, 0)} orders whose views is {key[1]!r}, your census "
                                f"says {got.get(key, 0)} (the longs are orders {longs}): decide int versus long "
                                "with a $type query, on this engine too")

    def _versions(self, census, orders):
        want = self._by(expected_census(orders.find({})), lambda k: k[0])
        self._same("version", want, self._by(census, lambda k: k[0]),
                   ": an order without schema_version is version 1 ($ifNull), any other has the version its "
                   "schema_version says")

    def _counts(self, census, orders):
        total = orders.count_documents({})
        if sum(census.values()) != total:
            raise Incorrect(f"the census counts {sum(census.values())} orders; the collection holds {total}: "
                            "count every order, each under its shape")

    @visible(points=1, checks="form")
    def returns_a_dict_of_tuples(self, answer):
        """audit returns a dict of 4-tuples to counts"""
        value = self._raw(answer, seeded_orders(self.lab, extra=ODD_COUNTERS))
        value = self.expect_type("audit(orders)", value, dict, "{(1, 'string', 'missing', 'int'): 50, ...}")
        for key, n in value.items():
            if not (isinstance(key, tuple) and len(key) == 4):
                raise Incorrect(f"each key should be a tuple (version, phone type, phones type, views type), "
                                f"not {key!r:.60}")
            if isinstance(n, bool) or not isinstance(n, int):
                raise Incorrect(f"each value should be a number of orders (an int), not {n!r:.40}")

    @visible(points=1, checks="counts")
    def counts_every_order(self, answer):
        """The census counts every order once"""
        orders = seeded_orders(self.lab, extra=ODD_COUNTERS)
        self._counts(self._census(answer, orders), orders)

    @hidden(points=1, checks="counts")
    def counts_another_collection(self, answer):
        """Every order counted, on another collection"""
        orders = seeded_orders(self.lab, n=45, seed=8, extra=ODD_ORDERS)
        self._counts(self._census(answer, orders), orders)

    @visible(points=1, checks="version")
    def versions(self, answer):
        """Orders without schema_version are version 1, the others the version they name (3 included)"""
        orders = seeded_orders(self.lab, extra=ODD_COUNTERS)
        self._versions(self._census(answer, orders), orders)

    @hidden(points=1, checks="version")
    def versions_another_collection(self, answer):
        """Versions, on another collection (an order of a newer version 3 among them)"""
        orders = seeded_orders(self.lab, n=45, seed=8, extra=ODD_ORDERS)
        self._versions(self._census(answer, orders), orders)

    @visible(points=1, checks="types")
    def type_names(self, answer):
        """Types named as $type names them, missing included"""
        orders = seeded_orders(self.lab, extra=ODD_COUNTERS)
        self._types(self._census(answer, orders), orders)

    @hidden(points=1, checks="types")
    def odd_types(self, answer):
        """Shapes nobody designed (a phones string, a null phone, a double counter) are named too"""
        orders = seeded_orders(self.lab, n=45, seed=8, extra=ODD_ORDERS)
        self._types(self._census(answer, orders), orders)

    @visible(points=2, checks="longs")
    def both_longs(self, answer):
        """The overflowed counter and the small Int64 are both longs"""
        orders = seeded_orders(self.lab, extra=ODD_COUNTERS)
        self._longs(self._census(answer, orders), orders)

    @hidden(points=1, checks="longs")
    def longs_elsewhere(self, answer):
        """Longs in other orders, version 2 included, are found too"""
        orders = seeded_orders(self.lab, n=45, seed=8, extra=ODD_ORDERS)
        self._longs(self._census(answer, orders), orders)
