"""Lesson 07, exercise 07.8: a covered query, the index answers alone.

On a server the check asks the planner (``explain``: no FETCH stage, no document examined).  Embedded
engines have no planner, so there the check applies MongoDB's documented rule instead, and says so: the
query's filter field leads an index, every returned field is in that index, and ``_id`` is left out.

The read ``statuses_of`` makes is recorded (a :class:`~course.engine.recording.RecordingCollection`; in a graded
run, the server's command log), and the rule is applied to that read, its own filter and projection: a
read that fetches whole documents and cuts them in Python returns the same documents, but the index did
not answer it.  A read the recording cannot see is reported as not checked, never as covered.
"""

from __future__ import annotations

from typing import Any

from course.store.capabilities import Capability
from course.datasets.more_patterns import shop_orders
from course.engine.exercise import Exercise, Incorrect, LearnerCodeError, Unsupported, hidden, visible
from course.lessons.lesson04.common import data, seeded
from course.lessons.lesson06.text import clipped
from course.toolkit.plans import index_keys
from course.engine.recording import RecordingCollection

COVERED_FIELDS = ("status", "total")
CANONICAL_PROJECTION = {"_id": 0, "status": 1, "total": 1}
FILTER_FIELD = "customerId"
INDEXED = (FILTER_FIELD, *COVERED_FIELDS)  #: the fields of the index the statement asks for
REFERENCE_INDEX = [(field, 1) for field in INDEXED]
DOCUMENT_READS = ("find", "find_one", "aggregate")  #: the reads that return documents
_PIPELINE_STAGES = {"$match", "$project", "$unset", "$sort", "$limit", "$skip"}  #: stages the rule can read


def covering_index(collection: Any, filter_field: str = "customerId", fields=COVERED_FIELDS) -> str | None:
    """The name of an index that can cover ``find({filter_field: ...}, fields without _id)``, by the rule."""
    for name, keys in index_keys(collection).items():
        names = [field for field, _ in keys]
        if names and names[0] == filter_field and set(fields) <= set(names):
            return name
    return None


def plan_stages(explain: Any) -> list[str]:
    """Every stage name of an explain document's winning plans (rejected plans left out), classic or SBE,
    of a find or of an aggregate (``$cursor`` stages included)."""
    found: list[str] = []
    todo = [explain]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if isinstance(node.get("stage"), str):
                found.append(node["stage"])
            todo += [value for key, value in node.items() if key != "rejectedPlans"]
        elif isinstance(node, list):
            todo += node
    return found


def _covered(stages: list[str]) -> bool:
    return "FETCH" not in stages and "COLLSCAN" not in stages and any("IXSCAN" in s for s in stages)


def server_plan_is_covered(collection: Any, query: dict, projection: Any = CANONICAL_PROJECTION) -> tuple:
    """``(covered, stages, docs examined)`` from a server's explain of ``find(query, projection)``."""
    explain = collection.find(query, projection).explain()
    stages, todo = [], [explain.get("queryPlanner", {}).get("winningPlan", {})]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if "stage" in node:
                stages.append(node["stage"])
            todo += [node.get(k) for k in ("inputStage", "queryPlan") if node.get(k)]
            todo += list(node.get("inputStages", []))
    examined = explain.get("executionStats", {}).get("totalDocsExamined")
    return "FETCH" not in stages and any("IXSCAN" in s for s in stages), stages, examined


def server_pipeline_is_covered(db: Any, collection: str, pipeline: list) -> tuple:
    """``(covered, stages)`` from a server's explain of ``aggregate(pipeline)`` on ``db[collection]``."""
    explain = db.command({"explain": {"aggregate": collection, "pipeline": pipeline, "cursor": {}},
                          "verbosity": "queryPlanner"})
    stages = plan_stages(explain)
    return _covered(stages), stages


def _filter_fields(query: Any) -> set[str] | None:
    """The fields a filter tests; None when it uses an operator the rule does not read ($expr, $where...)."""
    if not isinstance(query, dict):
        return None
    names: set[str] = set()
    for key, value in query.items():
        if key in ("$and", "$or", "$nor"):
            if not isinstance(value, (list, tuple)):
                return None
            for part in value:
                inner = _filter_fields(part)
                if inner is None:
                    return None
                names |= inner
        elif str(key).startswith("$"):
            return None
        else:
            names.add(str(key))
    return names


def _as_projection(projection: Any) -> dict | None:
    """pymongo's projection spellings as a dict (a list of names includes them); None for none at all."""
    if projection is None:
        return None
    if isinstance(projection, (list, tuple)):
        return {str(name): 1 for name in projection}
    return dict(projection) if isinstance(projection, dict) else {"?": projection}


class _Read:
    """One document read of db.orders as the rule sees it: its filter, its projection, and how it was spelt."""

    def __init__(self, method: str, query: Any, projection: Any, pipeline: list | None = None,
                 unreadable: str = ""):
        self.method, self.query, self.projection = method, query, projection
        self.pipeline, self.unreadable = pipeline, unreadable

    def __str__(self) -> str:
        if self.pipeline is not None:
            return f"aggregate({clipped(self.pipeline, 120)})"
        if self.projection is None:
            return f"{self.method}({clipped(self.query, 60)})"
        return f"{self.method}({clipped(self.query, 60)}, {clipped(self.projection, 80)})"


def _read_of(op: Any) -> _Read:
    """The filter and projection of a recorded find, find_one or aggregate."""
    if op.method != "aggregate":
        return _Read(op.method, op.argument("filter") or {}, _as_projection(op.argument("projection")))
    pipeline = op.argument("pipeline")
    if not isinstance(pipeline, (list, tuple)) or not all(isinstance(s, dict) and len(s) == 1 for s in pipeline):
        return _Read("aggregate", None, None, list(pipeline or []), "a pipeline the rule cannot read")
    pipeline = list(pipeline)
    kinds = [next(iter(stage)) for stage in pipeline]
    others = sorted(set(kinds) - _PIPELINE_STAGES)
    shaping = [stage for stage in pipeline if next(iter(stage)) in ("$project", "$unset")]
    if others or len(shaping) > 1:
        return _Read("aggregate", None, None, pipeline,
                     f"a pipeline with {', '.join(others) or 'several $project or $unset stages'}")
    matches = [stage["$match"] for stage in pipeline if "$match" in stage]
    query = matches[0] if len(matches) == 1 else {"$and": matches} if matches else {}
    projection = None
    if shaping:
        kind, spec = next(iter(shaping[0].items()))
        if kind == "$unset":
            names = [spec] if isinstance(spec, str) else list(spec) if isinstance(spec, (list, tuple)) else []
            projection = {str(name): 0 for name in names}
        else:
            projection = _as_projection(spec)
    return _Read("aggregate", query, projection, pipeline)


def rule_says(read: _Read, judge_filter: bool = True) -> str:
    """"" when MongoDB's covering rule says the index of the statement answers ``read`` alone, else why not.

    With ``judge_filter`` False only the projection is judged (the filter's mistake is the rows' own).
    Raises :class:`Unsupported` for a read the rule cannot judge (a planner could: a server checks it).
    """
    def cannot(what: str) -> Unsupported:
        return Unsupported(reason=f"not checked here: statuses_of reads with {what}, which MongoDB's covering "
                                  "rule (this engine has no planner to ask) cannot judge; a MongoDB server's "
                                  f"explain can. The read: {read}")

    if read.unreadable:
        raise cannot(read.unreadable)
    fields = _filter_fields(read.query) if judge_filter else {FILTER_FIELD}
    if fields is None:
        raise cannot(f"the filter {clipped(read.query, 80)}")
    if FILTER_FIELD not in fields:
        return (f"the read {read} does not filter on {FILTER_FIELD}, so no index finds the customer's orders and "
                "the server reads every document: filter on customerId in the query itself")
    if fields - set(INDEXED):
        return (f"the read {read} also filters on {', '.join(sorted(fields - set(INDEXED)))}, which the index does "
                "not hold, so the server reads each document to test it")
    projection = read.projection
    if not projection:
        return (f"the read {read} returns whole documents: the server fetches every one, whatever your code keeps "
                "of them afterwards: fields cut in Python were fetched all the same")
    if not all(isinstance(v, bool) or (isinstance(v, (int, float)) and v in (0, 1)) for v in projection.values()):
        raise cannot(f"the computed projection {clipped(projection, 80)}")
    included = {k for k, v in projection.items() if v and k != "_id"}
    if not included:
        return (f"the read {read} has an exclusion projection: it returns every field it does not name, so the "
                "server reads each whole document")
    if included - set(INDEXED):
        return (f"the read {read} returns {', '.join(sorted(included - set(INDEXED)))}, which the index does not "
                "hold, so the server fetches the documents")
    if projection.get("_id", 1):
        return (f"the read {read} returns _id (a projection includes it unless it leaves it out by name), which "
                "the index does not hold, so the server fetches every document to read it")
    return ""


class Covered(Exercise):
    id = "07.8"
    title = "Covered query: the index answers alone"
    answers = ("create_covering_index", "statuses_of")
    requirements = {
        "index": "create_covering_index gives db.orders one index that starts with customerId and also holds "
                 "status and total, so a read of those fields by customer needs no document",
        "projection": "statuses_of reads with a projection of status and total only, _id left out (the index "
                      "does not hold it), so that the index can answer alone: the documents it returns hold "
                      "status and total only",
        "rows": "statuses_of(orders, customer_id) returns one document per order of that customer (a list, or the "
                "cursor itself)",
    }
    hints = (
        "create_index([('customerId', 1), ('status', 1), ('total', 1)]).",
        "A projection includes _id unless it says '_id': 0; and the projection goes in the query: fields cut in "
        "Python were read from the documents first.",
        "list(orders.find({'customerId': customer_id}, {'_id': 0, 'status': 1, 'total': 1})).",
    )
    solution_code = """
def create_covering_index(db):
    \"\"\"An index holding every field the read filters on and returns.\"\"\"
    db.orders.create_index([("customerId", 1), ("status", 1), ("total", 1)])


def statuses_of(orders, customer_id):
    \"\"\"status and total of the customer's orders, answered from the index alone.\"\"\"
    return list(orders.find({"customerId": customer_id}, {"_id": 0, "status": 1, "total": 1}))
"""

    def _check_index(self, answer, orders, customer_id):
        db = seeded(self.lab, orders=orders)
        self.call("create_covering_index", answer.create_covering_index, db)
        keys = {name: [f for f, _ in k] for name, k in index_keys(db.orders).items() if name != "_id_"}
        if self.lab.backend.supports(Capability.SERVER_EXPLAIN):
            covered, stages, examined = server_plan_is_covered(db.orders, {"customerId": customer_id})
            if not covered:
                raise Incorrect(f"the server's plan for find({{'customerId': {customer_id}}}, {{'_id': 0, 'status': "
                                f"1, 'total': 1}}) is {' <- '.join(stages)}: it fetches documents (indexes: {keys})")
            return
        if covering_index(db.orders) is None:
            raise Incorrect(f"no index of db.orders starts with customerId and holds status and total (by "
                            f"MongoDB's rule for covered queries; this engine has no planner to ask): its indexes "
                            f"are {list(keys.values()) or 'only _id'}")

    @visible(points=2, checks="index")
    def index_covers(self, answer):
        """An index that starts with customerId and holds status and total"""
        self._check_index(answer, data(shop_orders), 3)

    @hidden(points=1, checks="index")
    def index_on_empty_collection(self, answer):
        """The index is made before any order exists"""
        self._check_index(answer, [], 3)

    def _found(self, answer, customer_id):
        """The learner's index made first (as the notebook runs them), then statuses_of's result and its
        recorded reads of db.orders."""
        orders = data(shop_orders)
        db = seeded(self.lab, orders=orders)
        try:
            self.call("create_covering_index", answer.create_covering_index, db)
        except LearnerCodeError:
            pass  # the index requirement says so; the read is judged on its own
        watched = RecordingCollection(db.orders)
        got = self.call("statuses_of", answer.statuses_of, watched, customer_id)
        return orders, got, watched

    @staticmethod
    def _documents(got) -> list:
        if isinstance(got, (dict, str, bytes)) or not hasattr(got, "__iter__"):
            raise Incorrect(f"statuses_of should return a list of documents; got {clipped(got, 80)}")
        return list(got)

    @staticmethod
    def _rows_right(orders, got, customer_id) -> bool:
        """Whether ``got`` (any iterable) gives the status and total of exactly the customer's orders."""
        want = sorted(((o["status"], o["total"]) for o in orders if o["customerId"] == customer_id), key=repr)
        found = sorted(((d.get("status"), d.get("total")) if isinstance(d, dict) else (None, None) for d in got),
                       key=repr)
        return found == want

    def _check_projection(self, answer, customer_id):
        orders, got, watched = self._found(answer, customer_id)
        got = self._documents(got)
        for doc in got:
            if not isinstance(doc, dict):
                raise Incorrect(f"statuses_of should return documents; one is {clipped(doc, 60)}")
            if set(doc) != set(COVERED_FIELDS):
                extra = sorted(set(doc) - set(COVERED_FIELDS))
                missing = sorted(set(COVERED_FIELDS) - set(doc))
                if not extra:
                    raise Incorrect(f"a document statuses_of returned has fields {sorted(doc)}: it lacks "
                                    f"{', '.join(missing)}")
                how = (": the index does not hold _id, so returning it makes the server fetch each document (a "
                       "projection includes _id unless it leaves it out by name)" if "_id" in extra
                       else ": return status and total only")
                raise Incorrect(f"a document statuses_of returned has fields {sorted(doc)}: {', '.join(extra)} must "
                                f"be left out{how}")
        self._check_read(watched, customer_id, self._rows_right(orders, got, customer_id))

    def _check_read(self, watched, customer_id, rows_right):
        """The covering rule (a server: its planner) applied to the reads statuses_of made.

        When the rows are wrong, a filter that does not find the customer's orders is the rows' mistake: only
        the projection is judged then (on a server, the read's projection with the customer's filter).
        """
        reads = [_read_of(op) for op in watched.ops()
                 if op.kind == "read" and op.method in DOCUMENT_READS]
        if not reads:
            raise Unsupported(reason="not checked: statuses_of returned documents, but no find or aggregate of "
                                     "the collection it was given was seen, so whether the index answers its read "
                                     "alone could not be checked")
        server = self.lab.backend.supports(Capability.SERVER_EXPLAIN)
        if server:
            db = seeded(self.lab, orders=data(shop_orders))
            db.orders.create_index(REFERENCE_INDEX)
        for read in reads:
            if not server:
                why = rule_says(read, judge_filter=rows_right)
                if why:
                    raise Incorrect(why)
                continue
            if read.pipeline is not None:
                pipeline = read.pipeline if rows_right else \
                    [{"$match": {FILTER_FIELD: customer_id}}] + [s for s in read.pipeline if "$match" not in s]
                covered, stages = server_pipeline_is_covered(db, "orders", pipeline)
            else:
                query = read.query if rows_right else {FILTER_FIELD: customer_id}
                covered, stages, _ = server_plan_is_covered(db.orders, query, read.projection)
            if not covered:
                raise Incorrect(f"with the index on {', '.join(INDEXED)}, the server's plan for your read {read} is "
                                f"{' <- '.join(stages)}: it fetches documents: the read must find the orders by "
                                "customerId and return only fields the index holds, _id left out")

    @visible(points=2, checks="projection")
    def only_indexed_fields(self, answer):
        """The documents hold status and total, and no _id"""
        self._check_projection(answer, 3)

    @hidden(points=1, checks="projection")
    def projection_for_another_customer(self, answer):
        """Another customer"""
        self._check_projection(answer, 6)

    def _check_rows(self, answer, customer_id):
        orders, got, _ = self._found(answer, customer_id)
        got = self._documents(got)  # a cursor will do: a graded run receives any iterable as a list
        want = sorted((o["status"], o["total"]) for o in orders if o["customerId"] == customer_id)
        found = sorted(((d.get("status"), d.get("total")) if isinstance(d, dict) else (None, None) for d in got),
                       key=repr)
        if found != sorted(want, key=repr):
            raise Incorrect(f"statuses_of(orders, {customer_id}) returned {len(got)} documents; customer "
                            f"{customer_id} has {len(want)} orders, and each should give its status and total")

    @visible(points=1, checks="rows")
    def one_per_order(self, answer):
        """One document per order of customer 3"""
        self._check_rows(answer, 3)

    @hidden(points=1, checks="rows")
    def customers_without_orders(self, answer):
        """Every customer, and one with no orders: []"""
        for customer_id in range(1, 10):
            self._check_rows(answer, customer_id)
