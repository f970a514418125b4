"""What each backend can and cannot do, declared once (its quirks, absorbed, in :mod:`course.store.quirks`).

Every exercise names the capabilities it needs; on a backend that lacks one,
the exercise reports "needs <capability>" instead of a verdict.  This module
is the only place that knows which backend lacks what.
"""

from __future__ import annotations

from enum import Enum


class Capability(str, Enum):
    """A database feature that some exercise relies on."""

    VALIDATORS = "validators"
    PIPELINE_UPDATES = "pipeline updates"
    TYPE_QUERIES = "$type queries"
    JSON_SCHEMA_QUERIES = "$jsonSchema queries"
    SERVER_EXPLAIN = "server explain plans"
    COLLMOD = "collMod"
    TRANSACTIONS = "transactions"
    SERVER_STATISTICS = "collStats/serverStatus"
    BSON_SIZE_OPERATOR = "$bsonSize"
    SIZE_LIMIT = "16 MiB limit enforced by the server"
    PARTIAL_INDEXES = "partial indexes"
    VALIDATION_ERROR_AND_LOG = "validationAction errorAndLog (MongoDB 8.1)"
    GRAPH_LOOKUP = "$graphLookup"
    MISSING_FIELD_EXPRESSIONS = "aggregation expressions over missing fields"
    COLLATION = "collation"
    CHANGE_STREAMS = "change streams"
    TIME_SERIES = "time series collections"

    def __str__(self) -> str:
        return self.value


ALL = frozenset(Capability)

#: Capabilities each backend lacks, with the reason shown to learners.
MISSING: dict[str, dict[Capability, str]] = {
    "server": {},
    "mongoeco": {
        Capability.SERVER_EXPLAIN: "explain() has no queryPlanner/winningPlan; "
        "the course shows a simulated plan instead",
        Capability.COLLMOD: "collMod is not supported; validators are set at create_collection",
        Capability.SIZE_LIMIT: "documents over 16 MiB are accepted; "
        "measure a document with len(bson.encode(doc))",
        Capability.VALIDATION_ERROR_AND_LOG: "validationAction must be 'error' or 'warn' "
        "(errorAndLog is new in MongoDB 8.1)",
        Capability.GRAPH_LOOKUP: "the $graphLookup stage is refused (Unsupported aggregation stage)",
    },
    "mongoeco-wire": {},  # same engine as "mongoeco": filled in below
    "mongomock": {
        Capability.VALIDATORS: "$jsonSchema validators raise NotImplementedError",
        Capability.PIPELINE_UPDATES: "updates with an aggregation pipeline are not implemented",
        Capability.TYPE_QUERIES: "$type cannot tell int from long",
        Capability.JSON_SCHEMA_QUERIES: "the $jsonSchema query operator is not implemented",
        Capability.SERVER_EXPLAIN: "cursors have no explain()",
        Capability.COLLMOD: "collMod is not supported",
        Capability.TRANSACTIONS: "there are no sessions",
        Capability.SERVER_STATISTICS: "collStats, dbStats and serverStatus are not implemented",
        Capability.BSON_SIZE_OPERATOR: "$bsonSize is not implemented",
        Capability.SIZE_LIMIT: "documents over 16 MiB are accepted",
        Capability.PARTIAL_INDEXES: "create_indexes drops partialFilterExpression, "
        "so a partial index silently becomes a full one",
        Capability.VALIDATION_ERROR_AND_LOG: "there are no validators at all",
        Capability.MISSING_FIELD_EXPRESSIONS: "an aggregation expression that reads a missing field, or "
        "$arrayElemAt past an array's end, raises KeyError (a server gives missing/null), and $type is not "
        "an expression",
        Capability.COLLATION: "find() ignores collation= (a case-insensitive query matches case-sensitively) and "
        "create_index drops an index's collation",
        Capability.CHANGE_STREAMS: "collections have no watch()",
        Capability.TIME_SERIES: "create_collection(..., timeseries=...) raises NotImplementedError",
    },
}


MISSING["mongoeco-wire"] = {**MISSING["mongoeco"],
                            Capability.CHANGE_STREAMS: "its wire server refuses the $changeStream stage "
                            "(in-process, watch() works)"}


def capabilities_of(backend_name: str) -> frozenset[Capability]:
    """Return the capabilities the named backend has."""
    return ALL - MISSING[backend_name].keys()


def missing_reasons(backend_name: str) -> dict[Capability, str]:
    """Return the capabilities the named backend lacks, each with its reason."""
    return dict(MISSING[backend_name])
