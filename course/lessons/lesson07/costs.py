"""What the order screen's two reads cost: a ``$lookup`` against an extended reference, measured.

On a MongoDB server the figures are the server's own (``explain`` with ``executionStats``: documents and
index keys examined).  An embedded engine has no executionStats, so there the figures are counts of the
documents each read brings together (taken from the join's own output) and the engine's own timings,
labelled as that engine's: they are not MongoDB's latencies.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable

from course.store.capabilities import Capability

JOIN = {"$lookup": {"from": "customers", "localField": "customerId", "foreignField": "_id", "as": "customer"}}


@dataclass(frozen=True)
class ReadCost:
    """One read of the order screen and what it cost."""

    read: str
    documents: int  #: documents the read examined (server) or brought together (embedded engines)
    source: str  #: where the figure comes from, in words
    engine_ms: float | None = None  #: the embedded engine's own median time, when there is no server
    engine: str = ""  #: that engine's name

    def __str__(self) -> str:
        timing = f"; {self.engine_ms:.2f} ms ({self.engine}'s own time, not MongoDB's)" \
            if self.engine_ms is not None else ""
        return f"{self.read}: {self.documents} documents [{self.source}]{timing}"


def lookup_pipeline(order_ids: Iterable[int]) -> list[dict]:
    """The order screen through ``$lookup``: filter, then join each order to its customer."""
    return [{"$match": {"_id": {"$in": list(order_ids)}}}, JOIN,
            {"$project": {"total": 1, "customerName": {"$first": "$customer.name"}}}]


def _examined(node: Any) -> list[int]:
    """Every ``totalDocsExamined`` in an explain document (one per stage that reports it)."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "totalDocsExamined" and isinstance(value, int):
                found.append(value)
            else:
                found += _examined(value)
    elif isinstance(node, list):
        for item in node:
            found += _examined(item)
    return found


def _median_ms(read, runs: int = 15) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        read()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)[len(times) // 2]


def compare(db: Any, backend: Any, order_ids: list[int]) -> list[ReadCost]:
    """The two reads of ``order_ids``: ``db.orders`` with ``$lookup``, ``db.orders_ext`` with the copy."""
    ids = list(order_ids)
    extended = {"_id": {"$in": ids}}
    if backend.supports(Capability.SERVER_EXPLAIN):
        explained = db.command({"explain": {"aggregate": "orders", "pipeline": lookup_pipeline(ids), "cursor": {}},
                                "verbosity": "executionStats"})
        stages = explained.get("stages")
        if stages:  # the classic engine: the $cursor stage, then the $lookup stage, each with its own figure
            examined = sum(_examined(stages))
            how = "server explain: totalDocsExamined of the $cursor and $lookup stages"
        else:  # the slot-based engine plans the whole pipeline: one figure for all of it
            examined = explained.get("executionStats", {}).get("totalDocsExamined", 0)
            how = "server explain: the pipeline's totalDocsExamined"
        ext = db.orders_ext.find(extended).explain().get("executionStats", {}).get("totalDocsExamined", 0)
        return [ReadCost("$lookup", examined, how),
                ReadCost("extended reference", ext, "server explain: totalDocsExamined")]
    joined = list(db.orders.aggregate([{"$match": extended}, JOIN]))
    customers = sum(len(row["customer"]) for row in joined)
    copied = list(db.orders_ext.find(extended))
    lookup_ms = _median_ms(lambda: list(db.orders.aggregate(lookup_pipeline(ids))))
    ext_ms = _median_ms(lambda: list(db.orders_ext.find(extended, {"total": 1, "customer.name": 1})))
    return [ReadCost("$lookup", len(joined) + customers,
                     f"counted from the results: {len(joined)} orders + {customers} customers", lookup_ms,
                     backend.name),
            ReadCost("extended reference", len(copied), f"counted from the results: {len(copied)} orders", ext_ms,
                     backend.name)]
