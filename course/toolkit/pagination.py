"""Two ways to page through a sorted list: skip/limit, and keyset (range) pagination.

``skip((page - 1) * size).limit(size)`` is simple and lets a reader jump to any
page, but the server still walks every skipped index key: page 50 of 20 costs
1,000 keys to return 20.  A keyset page asks instead for the entries *after*
the last one shown (``name > last_name``, ties broken by ``_id``), so every
page costs about ``size`` keys, however deep, at the price of "next page"
links instead of page numbers.  Both need an index that serves the filter and the
whole sort, ``(category, name, _id)``.  :func:`keys_examined` reads the cost from a
server's ``explain("executionStats")``; an embedded engine has no planner, so
there it gives the count a server makes with the indexes the collection has
(none: a collection scan; one that does not give the sort: every matching key,
then an in-memory sort), labelled as simulated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from course.toolkit.plans import plan_for

LISTING = {"name": 1, "price_pence": 1}
ORDER = [("name", 1), ("_id", 1)]


def skip_page(products: Any, category: str, page: int, size: int = 20) -> list[dict]:
    """Page ``page`` (from 1) of ``category`` in (name, _id) order, by skip and limit."""
    cursor = products.find({"category": category}, LISTING).sort(ORDER).skip((page - 1) * size).limit(size)
    return list(cursor)


def keyset_filter(category: str, after: Mapping[str, Any] | None) -> dict:
    """The filter of the page after ``after`` (the last product shown, or None for the first page)."""
    if after is None:
        return {"category": category}
    return {"category": category, "$or": [{"name": {"$gt": after["name"]}},
                                          {"name": after["name"], "_id": {"$gt": after["_id"]}}]}


def keyset_page(products: Any, category: str, after: Mapping[str, Any] | None = None, size: int = 20) -> list[dict]:
    """The ``size`` products of ``category`` that come after ``after`` in (name, _id) order."""
    return list(products.find(keyset_filter(category, after), LISTING).sort(ORDER).limit(size))


@dataclass(frozen=True)
class Cost:
    """Index keys a page read examines, and where the figure comes from."""

    keys: int
    source: str  #: "server explain" or "simulated"
    plan: str = ""  #: when no index gives the page in order: the plan a server would run instead

    def __str__(self) -> str:
        text = f"{self.keys:,} index keys examined" + (f", {self.plan}" if self.plan else "")
        return text if self.source == "server explain" else f"{text}  [simulated: what a server examines]"


def keys_examined(products: Any, backend: Any, query: Mapping[str, Any], skip: int, limit: int) -> Cost:
    """What reading one page costs in index keys: the server's own count, or the count a server would make."""
    if backend.name == "server":
        cursor = products.find(dict(query), LISTING).sort(ORDER).skip(skip).limit(limit)
        stats = cursor.explain().get("executionStats", {})
        return Cost(int(stats.get("totalKeysExamined", 0)), "server explain")
    matching = products.count_documents(dict(query))
    plan = plan_for(products, backend, {"category": query.get("category")}, ORDER)
    if plan.stage != "IXSCAN":
        return Cost(0, "simulated", "a collection scan instead: every document read, then sorted in memory")
    if plan.in_memory_sort:
        return Cost(matching, "simulated", f"{plan.index} does not give the order: every matching key, then an "
                                           "in-memory sort")
    return Cost(min(skip + limit, matching) + (1 if skip + limit < matching else 0), "simulated")
