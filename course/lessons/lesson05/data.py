"""Lab 05's check data and comparisons, shared by its exercises (no exercise lives here).

Seed documents are built once (:func:`orders_of` is cached; the documents are
never mutated) and bulk-inserted into a fresh scratch collection per
assertion, so no assertion sees data an earlier one changed.  The comparisons
name the first field that differs instead of printing two whole documents.
"""

from __future__ import annotations

import functools
import random
from typing import Any, Iterable

from bson.int64 import Int64

from course.datasets.migration import VERSION_FIELD, legacy_orders, seed_orders

CHECK_ORDERS, SEED = 60, 5  #: the checks' collection: smaller than the lab's 240 orders
_MISSING = object()


@functools.cache
def orders_of(n: int = CHECK_ORDERS, seed: int = SEED) -> tuple[dict, ...]:
    """The seeded legacy orders (cached: treat them as read-only)."""
    return tuple(legacy_orders(n=n, seed=seed))


def seeded_orders(lab: Any, n: int = CHECK_ORDERS, seed: int = SEED, name: str = "orders",
                  extra: Iterable[dict] = ()) -> Any:
    """A fresh scratch collection with ``n`` legacy orders (the overflowed counter included) and ``extra``."""
    orders = lab.scratch()[name]
    seed_orders(orders, list(orders_of(n, seed)) + [dict(d) for d in extra])
    return orders


def expected_v2(doc: dict) -> dict:
    """The version 2 form of a stored order (version 2 orders are unchanged)."""
    if doc.get(VERSION_FIELD) == 2:
        return doc
    customer = {k: v for k, v in doc["customer"].items() if k != "phone"}
    customer["phones"] = [doc["customer"]["phone"]] if "phone" in doc["customer"] else []
    return {**doc, VERSION_FIELD: 2, "customer": customer}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Int64):
        return "long"
    return "int" if isinstance(value, int) else type(value).__name__


def _article(kind: str) -> str:
    return ("an " if kind[:1] in "aeiou" else "a ") + kind


def first_difference(want: Any, got: Any, path: str = "") -> str | None:
    """The first field where ``got`` differs from ``want``, in words, or None when they are the same.

    Values compare by type too, so an Int64 counter that became an int is a difference.
    """
    where = path or "the document"
    if isinstance(want, dict) and isinstance(got, dict):
        for key in list(want) + [k for k in got if k not in want]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in got:
                return f"{sub} is missing (it should be {want[key]!r:.60})"
            if key not in want:
                return f"{sub} should not be there (it is {got[key]!r:.60})"
            found = first_difference(want[key], got[key], sub)
            if found:
                return found
        return None
    if want == got and _kind(want) == _kind(got):
        if isinstance(want, list):
            for w, g in zip(want, got):
                if _kind(w) != _kind(g):
                    return f"{where} is {got!r:.60}, with other types than {want!r:.60}"
        return None
    if want == got:
        return f"{where} is {got!r} stored as {_article(_kind(got))}; it should stay {_article(_kind(want))}"
    return f"{where} is {got!r:.80}, it should be {want!r:.80}"


def without_none(value: Any) -> Any:
    """``value`` with None elements dropped from its phone lists (so one upgrade bug is not counted twice)."""
    if not isinstance(value, dict):
        return value
    customer = value.get("customer")
    if isinstance(customer, dict) and isinstance(customer.get("phones"), list):
        customer = {**customer, "phones": [p for p in customer["phones"] if p is not None]}
        return {**value, "customer": customer}
    return value


def longs_in(orders: Any) -> set:
    """The _ids whose ``views`` is stored as a 64-bit long ($type query)."""
    return {d["_id"] for d in orders.find({"views": {"$type": "long"}}, {"_id": 1})}


def writes_seen(recorder: Any) -> list[str]:
    """Every write the recorder saw, described; an aggregate ending in $out or $merge counts as one."""
    found = []
    for op in recorder.ops():
        if op.kind == "write":
            found.append(f"{op.method} on {op.collection}")
        elif op.method == "aggregate":
            pipeline = op.argument("pipeline") or []
            last = pipeline[-1] if isinstance(pipeline, (list, tuple)) and pipeline else {}
            stage = next((s for s in ("$out", "$merge") if isinstance(last, dict) and s in last), None)
            if stage:
                found.append(f"an aggregate with {stage} on {op.collection}")
    return found


def database_state(db: Any) -> dict:
    """Every document of every collection of ``db``, by collection name (to see writes made any way)."""
    return {name: sorted((repr(sorted(d.items(), key=str)) for d in db[name].find({})))
            for name in sorted(db.list_collection_names())}


def shuffled(docs: Iterable[dict], seed: int) -> list[dict]:
    """``docs`` in a seeded random order (so a natural order is not the _id order)."""
    docs = list(docs)
    random.Random(seed).shuffle(docs)
    return docs
