"""Reading query plans: the server's explain(), or a labelled simulation.

On a real MongoDB server :func:`plan_for` runs ``explain()`` and summarises
the winning plan.  Embedded engines cannot plan, so on them it simulates the
documented planner behaviour for simple queries: an index is a candidate
when the filter constrains its first field or the sort starts with it; a
candidate serves the sort when, after the fields held equal by the filter,
its keys continue with the sort keys (all in the sort's direction or all
reversed).  Among candidates the simulation prefers one that constrains a
filter field, then one that avoids an in-memory sort (the equality, sort,
range rule), then the one whose leading fields the filter constrains most,
then the shorter index.  The summary always says which it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from course.store.capabilities import Capability

_RANGE_OPERATORS = {"$gt", "$gte", "$lt", "$lte", "$in", "$ne", "$nin", "$exists", "$regex"}
_LOGICAL = {"$and", "$or", "$nor", "$expr", "$where", "$text"}


@dataclass(frozen=True)
class PlanSummary:
    """What a query plan comes down to: scan kind, index, and whether it sorts in memory."""

    stage: str  #: "IXSCAN" or "COLLSCAN"
    index: str | None
    in_memory_sort: bool
    source: str  #: "server" or "simulated"

    def __str__(self) -> str:
        scan = f"IXSCAN on {self.index}" if self.stage == "IXSCAN" else "COLLSCAN"
        sort = " + in-memory SORT" if self.in_memory_sort else ""
        label = "" if self.source == "server" else "  [simulated: embedded engines have no planner]"
        return f"{scan}{sort}{label}"

    __repr__ = __str__


def _normalise_sort(sort: Any) -> list[tuple[str, int]]:
    if not sort:
        return []
    if isinstance(sort, Mapping):
        sort = list(sort.items())
    if isinstance(sort, str):
        return [(sort, 1)]
    return [(str(field), int(direction)) for field, direction in sort]


def _normalise_keys(keys: Any) -> list[tuple[str, int]]:
    if isinstance(keys, Mapping):
        keys = list(keys.items())
    return [(str(field), int(direction)) for field, direction in keys]


def classify_filter(query: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """Split a simple filter into (equality fields, range fields).

    Raises ValueError for logical operators, which the simulation does not model.
    """
    equality, ranges = set(), set()
    for field, condition in (query or {}).items():
        if field in _LOGICAL:
            if field == "$and":
                for part in condition:
                    more_eq, more_range = classify_filter(part)
                    equality |= more_eq
                    ranges |= more_range
                continue
            raise ValueError(f"the simulated planner does not model {field}; use a MongoDB server")
        if isinstance(condition, Mapping) and condition and all(k.startswith("$") for k in condition):
            operators = set(condition)
            if operators == {"$eq"} or (operators == {"$in"} and len(condition["$in"]) == 1):
                equality.add(field)
            elif operators & _RANGE_OPERATORS:
                ranges.add(field)
            else:
                ranges.add(field)
        else:
            equality.add(field)
    return equality, ranges - equality


def _serves_sort(keys: list[tuple[str, int]], equality: set[str], sort: list[tuple[str, int]]) -> bool:
    if not sort:
        return True
    rest = list(keys)
    while rest and rest[0][0] in equality and rest[0][0] not in {f for f, _ in sort}:
        rest.pop(0)
    head = rest[: len(sort)]
    if [f for f, _ in head] != [f for f, _ in sort]:
        return False
    same = all(d == s for (_, d), (_, s) in zip(head, sort))
    reversed_ = all(d == -s for (_, d), (_, s) in zip(head, sort))
    return same or reversed_


def _condition(value: Any) -> Any:
    """An equality condition in one form: ``{"$eq": v}`` and ``v`` are the same."""
    if isinstance(value, Mapping) and set(value) == {"$eq"}:
        return value["$eq"]
    return value


def query_implies(query: Mapping[str, Any], partial: Mapping[str, Any]) -> bool:
    """True when every condition of a partial index's filter appears in the query (a server's rule:
    a partial index serves only a query whose predicate implies its filter; the simulation accepts the
    conditions written out, ``{"kind": "book"}`` or ``{"kind": {"$eq": "book"}}``)."""
    conditions = dict(query or {})
    for part in conditions.pop("$and", []) if isinstance(conditions.get("$and"), list) else []:
        conditions.update(part)
    return all(field in conditions and _condition(conditions[field]) == _condition(value)
               for field, value in partial.items())


def simulate(query: Mapping[str, Any], sort: Any, indexes: Mapping[str, Any],
             partial: Mapping[str, Mapping[str, Any]] | None = None) -> PlanSummary:
    """Simulate the planner's choice for ``find(query).sort(sort)`` given ``indexes`` (name -> keys).

    ``partial`` (name -> partialFilterExpression) leaves out the partial indexes the query does not imply.
    """
    partial = partial or {}
    indexes = {name: keys for name, keys in indexes.items()
               if name not in partial or query_implies(query, partial[name])}
    equality, ranges = classify_filter(query)
    constrained = equality | ranges
    sort_keys = _normalise_sort(sort)
    if set(query or {}) == {"_id"} and "_id" in equality and "_id_" in indexes:
        return PlanSummary("IXSCAN", "_id_", False, "simulated")
    best, best_rank = None, None
    for name, raw_keys in indexes.items():
        keys = _normalise_keys(raw_keys)
        first = keys[0][0]
        if first not in constrained and not (sort_keys and sort_keys[0][0] == first):
            continue
        leading = 0
        for field, _ in keys:
            if field not in constrained:
                break
            leading += 1
        serves = _serves_sort(keys, equality, sort_keys)
        rank = (first in constrained, serves, leading, -len(keys), name)
        if best_rank is None or rank[:4] > best_rank[:4] or (rank[:4] == best_rank[:4] and name < best_rank[4]):
            best, best_rank = (name, serves), rank
    if best is None:
        return PlanSummary("COLLSCAN", None, bool(sort_keys), "simulated")
    name, serves = best
    return PlanSummary("IXSCAN", name, not serves, "simulated")


def _stages(node: Any) -> Iterable[Mapping[str, Any]]:
    if isinstance(node, Mapping):
        if "stage" in node:
            yield node
        for key in ("queryPlan", "inputStage", "inputStages", "winningPlan", "shards"):
            child = node.get(key)
            if isinstance(child, list):
                for item in child:
                    yield from _stages(item)
            elif child is not None:
                yield from _stages(child)


def summarise_explain(explain: Mapping[str, Any]) -> PlanSummary:
    """Summarise a server ``explain()`` document's winning plan."""
    planner = explain.get("queryPlanner", explain)
    stages = list(_stages(planner.get("winningPlan", planner)))
    names = [s["stage"] for s in stages]
    in_memory_sort = any(n in ("SORT", "SORT_KEY_GENERATOR") for n in names)
    for stage in stages:
        if stage["stage"] in ("IXSCAN", "EXPRESS_IXSCAN", "DISTINCT_SCAN", "COUNT_SCAN"):
            return PlanSummary("IXSCAN", stage.get("indexName", "_id_"), in_memory_sort, "server")
        if stage["stage"] in ("IDHACK", "EXPRESS_IDHACK", "CLUSTERED_IXSCAN"):
            return PlanSummary("IXSCAN", "_id_", in_memory_sort, "server")
    return PlanSummary("COLLSCAN", None, in_memory_sort, "server")


def plan_for(collection: Any, backend: Any, query: Mapping[str, Any], sort: Any = None) -> PlanSummary:
    """The plan for ``collection.find(query).sort(sort)``: from the server, or simulated."""
    if backend.supports(Capability.SERVER_EXPLAIN):
        cursor = collection.find(query)
        if sort:
            cursor = cursor.sort(_normalise_sort(sort))
        return summarise_explain(cursor.explain())
    information = collection.index_information()
    indexes = {name: info["key"] for name, info in information.items()}
    partial = {name: info["partialFilterExpression"] for name, info in information.items()
               if info.get("partialFilterExpression")}
    return simulate(query, sort, indexes, partial)


def index_keys(collection: Any) -> dict[str, list[tuple[str, int]]]:
    """Return ``{index name: [(field, direction), ...]}`` for a collection, on any backend."""
    return {name: _normalise_keys(info["key"]) for name, info in collection.index_information().items()}


def serving_index(collection: Any, backend: Any, query: Mapping[str, Any], sort: Sequence | None = None) -> str | None:
    """The index that serves the query without an in-memory sort, or None."""
    plan = plan_for(collection, backend, query, sort)
    if plan.stage == "IXSCAN" and not plan.in_memory_sort:
        return plan.index
    return None


def _filters_on_first_field(collection: Any, plan: PlanSummary, query: Mapping[str, Any]) -> bool:
    """True when the plan's index starts with a field the filter constrains."""
    keys = index_keys(collection).get(plan.index or "", [])
    return bool(keys) and keys[0][0] in query


def plan_problem(collection: Any, backend: Any, query: Mapping[str, Any], sort: Sequence, read: str) -> str:
    """Why ``read`` (``query`` sorted by ``sort``) is not served by an index, or "" when it is.

    The message names what the plan does (a collection scan, a whole-index walk, an in-memory
    sort) and what the index would need; ``read`` names the read for the learner.
    """
    plan = plan_for(collection, backend, query, sort)
    field = next(iter(query))
    if plan.stage != "IXSCAN":
        return f"{read} reads the whole collection ({plan}): no index starts with {field}"
    if not _filters_on_first_field(collection, plan, query):
        return (f"{read} walks the whole index {plan.index} ({plan}): its first field is not {field}, "
                f"so it cannot jump to the matching documents")
    if plan.in_memory_sort:
        sort_field = sort[0][0]
        return (f"{read} finds its documents through {plan.index} but sorts them in memory ({plan}): "
                f"the index must continue with {sort_field} after {field}")
    return ""
