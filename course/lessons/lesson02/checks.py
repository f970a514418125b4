"""Lesson 02's check data and comparisons: seed documents built once, messages that name the first difference.

The seeded documents are pure data, so they are built once per process
(:func:`functools.cache`) and every check gets its own deep copy to load with
``insert_many``.  The comparisons return a sentence naming the first field
that differs (with the types when the values print alike), or ``None``.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Iterable, Mapping

from course.datasets.orders import KIND_COLLECTIONS, UNCLASSIFIED, customers, mixed_records, products, shop
from course.engine.exercise import LearnerRaised
from course.toolkit.sizes import MAX_BSON_SIZE

#: every collection a split of a mixed collection writes to
SPLIT_COLLECTIONS = (*KIND_COLLECTIONS.values(), UNCLASSIFIED)


def raised_by(value: Any) -> LearnerRaised | None:
    """What a learner's function raised, when ``Exercise.call(..., expect_raise=True)`` returned it; else None."""
    return value if isinstance(value, LearnerRaised) else None


def said(raised: LearnerRaised) -> str:
    """What the learner's code raised, for a message: its type and text, without the ``full error: {...}``
    reply document pymongo appends to a server error."""
    text = raised.message.split(", full error: ")[0]
    return f"{raised.type_name}: {text}" if text else raised.type_name


def line(product_id: int, qty: int = 1, price_pence: int = 250) -> dict:
    """One order line as lesson 02 stores it."""
    return {"product_id": product_id, "name": f"Product {product_id}", "qty": qty, "price_pence": price_pence}


def lines(count: int, first: int = 1, qty: int = 1) -> list[dict]:
    """``count`` distinct lines, product ids from ``first``, prices varying with the product."""
    return [line(first + k, qty, 100 + first + k) for k in range(count)]


def amount(order_lines: Iterable[Mapping[str, Any]]) -> int:
    """The sum of ``qty * price_pence`` over ``order_lines``."""
    return sum(item["qty"] * item["price_pence"] for item in order_lines)


def order(order_id: Any, order_lines: list[dict], customer_id: int = 1) -> dict:
    """An order document as place_order stores it, for checks that start from an existing order."""
    return {"_id": order_id, "schema_version": 1, "customer_id": customer_id, "placed_at": 1,
            "lines": copy.deepcopy(order_lines), "total_pence": amount(order_lines)}


#: how far past 16 MiB the checks' oversized order goes: well under the 16 KiB of command overhead pymongo
#: allows before it refuses a document itself, so only a size check before the write stops it
OVER_THE_CEILING = 1024


@functools.cache
def oversized_line() -> dict:
    """A line whose note alone passes 16 MiB by a little: an order holding it is over the ceiling."""
    return {**line(1), "note": "x" * (MAX_BSON_SIZE + OVER_THE_CEILING)}


@functools.cache
def _customers(n: int) -> tuple[dict, ...]:
    return tuple(customers(n))


@functools.cache
def _products(n: int) -> tuple[dict, ...]:
    return tuple(products(n))


#: (customer, copied field, the out-of-date value one of its orders still holds) in 02.3's shop
STALE_COPIES = ((3, "phone", "07000 300300"), (5, "phone", "07000 500500"))


@functools.cache
def _shop() -> dict[str, tuple[dict, ...]]:
    data = shop(customers_n=6, orders_per_customer=3, products_n=3, seed=9)
    namesake = data["customers"][5]["name"]  # customer 4 is called what customer 6 is, as people can be
    data["customers"][3]["name"] = namesake
    for placed in data["orders"]:
        if placed["customer_id"] == 4:
            placed["customer_copy"]["name"] = namesake
    # a copy an earlier write left out of date (a crash between a customer and its copies): an update path
    # sets the copies of the fields it changes, so leaving this one and refreshing it can be told apart
    for customer_id, field, old_value in STALE_COPIES:
        first = min((o for o in data["orders"] if o["customer_id"] == customer_id), key=lambda o: o["_id"])
        first["customer_copy"][field] = old_value
    return {name: tuple(docs) for name, docs in data.items()}


@functools.cache
def _records(sizes: tuple[tuple[str, int], ...]) -> tuple[dict, ...]:
    return tuple(mixed_records(**dict(sizes)))


def seed_customers(n: int = 5) -> list[dict]:
    """A fresh copy of ``n`` seeded customers."""
    return copy.deepcopy(list(_customers(n)))


def seed_products(n: int = 4) -> list[dict]:
    """A fresh copy of ``n`` seeded products."""
    return copy.deepcopy(list(_products(n)))


def seed_shop() -> dict[str, list[dict]]:
    """A fresh copy of the small shop 02.3 checks on: 6 customers with 3 orders each; 4 and 6 share a name;
    an order of customer 3 and one of customer 5 hold an out-of-date phone copy."""
    return {name: copy.deepcopy(list(docs)) for name, docs in _shop().items()}


def seed_records(**sizes: int) -> list[dict]:
    """A fresh copy of ``mixed_records(**sizes)``."""
    return copy.deepcopy(list(_records(tuple(sorted(sizes.items())))))


def shown(value: Any) -> str:
    """``repr`` of a value, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def typed(value: Any) -> str:
    """A value with its type, for when two values print alike (``2147`` the int, ``2147.0`` the float)."""
    if value is None or isinstance(value, bool):
        return shown(value)
    kind = type(value).__name__
    return f"{shown(value)} ({'an' if kind[0] in 'aeiou' else 'a'} {kind})"


def same(expected: Any, got: Any) -> bool:
    """Equal and of the same type all the way down (``1 == 1.0 == True`` is not enough here)."""
    if type(expected) is not type(got):
        return False
    if isinstance(expected, dict):
        return expected.keys() == got.keys() and all(same(expected[k], got[k]) for k in expected)
    if isinstance(expected, (list, tuple)):
        return len(expected) == len(got) and all(same(e, g) for e, g in zip(expected, got))
    return expected == got


def field_difference(expected: Mapping[str, Any], got: Mapping[str, Any], fields: Iterable[str] | None = None,
                     extra_allowed: bool = True) -> str | None:
    """The first of ``fields`` (default: every expected field) whose value differs, as a phrase, or None.

    With ``extra_allowed=False`` a field ``got`` has and ``expected`` lacks is a difference too.
    """
    for name in (list(expected) if fields is None else list(fields)):
        if name not in got:
            return f"has no {name} field (it should be {shown(expected[name])})"
        if not same(expected[name], got[name]):
            if shown(expected[name]) == shown(got[name]) or expected[name] == got[name]:
                return f"has {name} {typed(got[name])}, but it should be {typed(expected[name])}"
            return f"has {name} {shown(got[name])}, but it should be {shown(expected[name])}"
    if not extra_allowed:
        extra = sorted(set(got) - set(expected))
        if extra:
            return f"has a field it should not have: {extra[0]} = {shown(got[extra[0]])}"
    return None


def changed_fields(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The top-level fields added, removed or changed from ``before`` to ``after``."""
    return sorted(k for k in set(before) | set(after) if k not in before or k not in after
                  or not same(before[k], after[k]))


def snapshot(db: Any, names: Iterable[str]) -> dict[str, dict[Any, dict]]:
    """``{collection: {_id: document}}`` of the named collections of ``db``."""
    return {name: {doc["_id"]: doc for doc in db[name].find()} for name in names}


def snapshot_difference(before: Mapping[str, Mapping[Any, dict]],
                        after: Mapping[str, Mapping[Any, dict]]) -> str | None:
    """The first document added, removed or changed between two snapshots, as a phrase, or None."""
    for name in before:
        old, new = before[name], after.get(name, {})
        for key in sorted(set(old) | set(new), key=repr):
            if key not in new:
                return f"{name} lost {shown(key)}"
            if key not in old:
                return f"{name} gained {shown(key)}"
            fields = changed_fields(old[key], new[key])
            if fields:
                return f"{shown(key)} in {name} changed its {', '.join(fields)}"
    return None
