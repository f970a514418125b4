"""Reading a wire command as the server does: its name, the namespaces it names, whether a learner may send it.

The relay (:mod:`course.grading.relay`) judges every command a learner
function sends, and the command log (:mod:`course.grading.commandlog`) turns
the ones it passes into reads and writes for the checks.  Both read commands
through this module, so what the relay lets through is exactly what the
checks see.

* :func:`command_name`: the first key that is not a generic argument
  (``lsid``, ``$db``, ``comment``, ``maxTimeMS``, ...), as the server and
  mongoeco's wire layer find it; a body that puts a generic argument first is
  still judged by its real command.
* :func:`decode_body`: a command body decoded with duplicate keys refused at
  every level (a server reads the first of two ``$db`` keys, Python's decoder
  the last: a message that could be read two ways is never forwarded).
* :func:`namespaces`: every ``(database, collection)`` a command reads or
  writes: its own, ``getMore``'s ``collection``, the inner command of
  ``explain``, both sides of ``renameCollection``, and in pipelines the
  ``$merge``/``$out`` targets and the ``$lookup``/``$graphLookup``/
  ``$unionWith`` sources in both their string and ``{db, coll}`` forms,
  through the sub-pipelines of ``$facet``, ``$lookup`` and ``$unionWith``.
* :func:`judge`: ``""`` when a learner function may send the command on its
  call's databases, else why not.  It is an allow-list: the data commands a
  learner function can need, the driver's handshakes and its session and
  transaction commands, and nothing else (no ``listDatabases``, no fail
  points, no server parameters, no profiler, no ``eval``).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

#: the generic arguments any command may carry (MongoDB's generic_argument list, and what drivers add)
GENERIC_ARGUMENTS = frozenset({
    "$db", "lsid", "txnNumber", "$clusterTime", "$readPreference", "readPreference", "autocommit",
    "startTransaction", "readConcern", "writeConcern", "maxTimeMS", "maxTimeMSOpOnly", "comment", "apiVersion",
    "apiStrict", "apiDeprecationErrors", "$audit", "$client", "$configServerState", "$gleStats",
    "$oplogQueryData", "$replData", "$topologyTime", "$configTime", "databaseVersion", "shardVersion",
    "tracking_info", "coordinator", "help", "clientOperationKey", "mayBypassWriteBlocking", "$queryOptions",
    "$traceCtx", "versionContext", "expectPrefix", "rawData", "$impersonatedUser", "$impersonatedRoles",
    "txnRetryCounter", "requestGossipRoutingCache", "startOrContinueTransaction", "$startTransaction",
})
#: what a driver sends to connect and to end its sessions: no data read or changed (these pass between calls too)
HANDSHAKE = frozenset({"hello", "ismaster", "isMaster", "ping", "buildInfo", "buildinfo", "endSessions",
                       "saslStart", "saslContinue", "getLastError"})
#: a transaction's end: on admin, during a call only (its writes were judged as they were sent)
TRANSACTION_END = frozenset({"commitTransaction", "abortTransaction"})
#: commands on one collection of the call's databases (their value names the collection)
ON_COLLECTION = frozenset({"find", "insert", "update", "delete", "findAndModify", "findandmodify", "count",
                           "distinct", "createIndexes", "listIndexes", "dropIndexes", "create", "drop",
                           "collMod", "collStats", "validate"})
#: commands on a whole database of the call (their value is 1 or the collection, for ``aggregate``)
ON_DATABASE = frozenset({"aggregate", "listCollections", "dbStats", "dropDatabase"})
CURSOR_COMMANDS = frozenset({"getMore", "killCursors"})
#: commands whose replies open a cursor (the relay remembers its id for getMore and killCursors)
OPENS_CURSOR = frozenset({"find", "aggregate", "listCollections", "listIndexes"})
#: pipeline stages that reach beyond the call's databases, or the server itself
CLUSTER_STAGES = frozenset({"$currentOp", "$listLocalSessions", "$listSessions", "$listCatalog",
                            "$listClusterCatalog", "$shardedDataDistribution", "$querySettings",
                            "$planCacheStats", "$backupCursor", "$backupCursorExtend", "$changeStreamSplitLargeEvent",
                            "$_internalSplitPipeline"})
#: stages whose value holds pipelines of their own
_NESTED = ("$facet", "$lookup", "$unionWith")


class DuplicateKey(ValueError):
    """A document names one key twice."""


class _Strict(dict):
    """A dict that refuses a second value for a key (the decoder calls ``__setitem__`` per element)."""

    def __setitem__(self, key: str, value: Any) -> None:
        if key in self:
            raise DuplicateKey(f"the key {key!r} appears twice")
        dict.__setitem__(self, key, value)


def decode_body(raw: bytes) -> dict:
    """Decode a command body; raise :class:`DuplicateKey` when any document in it repeats a key."""
    import bson
    from bson.codec_options import CodecOptions
    from bson.errors import InvalidBSON

    try:
        return dict(bson.decode(raw, codec_options=CodecOptions(document_class=_Strict, tz_aware=False)))
    except InvalidBSON as error:  # the decoder wraps what a nested document's __setitem__ raised
        if isinstance(error.__cause__, DuplicateKey) or "appears twice" in str(error):
            raise DuplicateKey(str(error)) from error
        raise


def command_name(body: dict) -> str:
    """The command a body stands for: its first key that is not a generic argument ("" when none)."""
    for key in body:
        if key not in GENERIC_ARGUMENTS:
            return str(key)
    return ""


def _target(value: Any, database: str, collection_key: str = "coll") -> tuple[str, str] | None:
    """A pipeline stage's target as ``(database, collection)``: a name, or ``{db, coll}``."""
    if isinstance(value, str):
        return database, value
    if isinstance(value, dict):
        name = value.get(collection_key)
        target_db = value.get("db", database)
        return (str(target_db), str(name) if name is not None else "")
    return None


def _stages(pipeline: Any) -> Iterator[tuple[str, Any]]:
    """``(name, value)`` of every stage of ``pipeline``, the stages of its sub-pipelines included."""
    if not isinstance(pipeline, list):
        return
    for stage in pipeline:
        if not isinstance(stage, dict):
            continue
        for name, value in stage.items():
            yield str(name), value
            if name == "$facet" and isinstance(value, dict):
                for branch in value.values():
                    yield from _stages(branch)
            elif name in _NESTED and isinstance(value, dict):
                yield from _stages(value.get("pipeline"))


def pipeline_namespaces(pipeline: Any, database: str) -> Iterator[tuple[str, str]]:
    """Every ``(database, collection)`` the stages of ``pipeline`` read from or write to."""
    for name, value in _stages(pipeline):
        if name == "$merge":
            found = _target(value.get("into") if isinstance(value, dict) else value, database)
        elif name == "$out":
            found = _target(value, database)
        elif name in ("$lookup", "$graphLookup"):
            source = value.get("from") if isinstance(value, dict) else None
            found = _target(source, database) if source is not None else None
        elif name == "$unionWith":
            found = _target(value, database)
            found = found if found and found[1] else None
        else:
            found = None
        if found:
            yield found


def pipeline_reads_and_writes(pipeline: Any, database: str) -> Iterator[tuple[str, tuple[str, str]]]:
    """``("read", namespace)`` for each collection a pipeline's stages read (``$lookup``, ``$graphLookup``,
    ``$unionWith``), ``("write", namespace)`` for each one they write (``$merge``, ``$out``)."""
    for name, value in _stages(pipeline):
        for found in pipeline_namespaces([{name: value}], database):
            yield ("write" if name in ("$merge", "$out") else "read"), found


def pipeline_stages(pipeline: Any) -> Iterator[str]:
    """The name of every stage of ``pipeline``, sub-pipelines included."""
    for name, _ in _stages(pipeline):
        yield name


def namespaces(body: dict, database: str) -> list[tuple[str, str]]:
    """Every ``(database, collection)`` the command ``body`` sent to ``database`` names ("" for a whole database)."""
    name = command_name(body)
    value = body.get(name)
    if name == "explain" and isinstance(value, dict):
        return namespaces(value, database)
    if name == "renameCollection":
        found = []
        for full in (value, body.get("to")):
            text = str(full) if full is not None else ""
            target_db, _, collection = text.partition(".")
            found.append((target_db, collection))
        return found
    if name in CURSOR_COMMANDS:
        collection = body.get("collection") if name == "getMore" else value
        return [(database, str(collection) if collection is not None else "")]
    found = [(database, value if isinstance(value, str) else "")]
    if name in ("create", "collMod"):  # a view: its source and its pipeline's
        if isinstance(body.get("viewOn"), str):
            found.append((database, body["viewOn"]))
        found += pipeline_namespaces(body.get("pipeline"), database)
    if name == "aggregate":
        found += pipeline_namespaces(body.get("pipeline"), database)
    elif name in ("update", "findAndModify", "findandmodify"):
        statements = body.get("updates", []) if name == "update" else [{"u": body.get("update")}]
        for statement in statements if isinstance(statements, list) else []:
            update = statement.get("u") if isinstance(statement, dict) else None
            found += pipeline_namespaces(update, database)  # an update pipeline's stages
    return found


def stages_of(body: dict) -> Iterable[str]:
    """The pipeline stages the command ``body`` runs (an aggregate's, or an explained aggregate's)."""
    name = command_name(body)
    if name == "explain" and isinstance(body.get(name), dict):
        return stages_of(body[name])
    if name == "aggregate":
        return pipeline_stages(body.get("pipeline"))
    return ()


def judge(body: dict, databases: frozenset[str] | set[str]) -> str:
    """``""`` when a learner function may send ``body`` during a call on ``databases``; else why not."""
    name = command_name(body)
    database = body.get("$db")
    if name in HANDSHAKE or name in TRANSACTION_END:
        return ""
    if not isinstance(database, str):
        return f"the checks' relay refused {name!r}: the command names no database"
    if name == "explain":
        inner = body.get(name)
        if not isinstance(inner, dict):
            return "the checks' relay refused 'explain' of something that is not a command"
        inner_name = command_name(inner)
        if inner_name not in ON_COLLECTION | ON_DATABASE or inner_name in ("create", "drop", "createIndexes",
                                                                           "dropIndexes", "collMod"):
            return f"the checks' relay refused the explain of {inner_name!r}"
    elif name == "renameCollection":
        pass
    elif name not in ON_COLLECTION | ON_DATABASE | CURSOR_COMMANDS:
        return f"the checks' relay refused {name!r}: learner functions may use only data commands on " \
               f"the collections a check hands them"
    if name == "aggregate" or name == "explain":
        for stage in stages_of(body):
            if stage in CLUSTER_STAGES:
                return f"the checks' relay refused the stage {stage!r}: it reaches beyond the call's databases"
            if stage == "$changeStream" and _all_changes(body):
                return "the checks' relay refused a change stream over the whole deployment"
    for target_db, collection in namespaces(body, database):
        if target_db not in databases:
            allowed = ", ".join(sorted(databases)) or "none"
            return f"the checks' relay refused {name!r} on database {target_db!r}: only this call's " \
                   f"databases ({allowed}) can be used"
        if collection.startswith("system.") and name not in ("listCollections", "listIndexes"):
            return f"the checks' relay refused {name!r} on the server's own collection {collection!r}"
    return ""


def _all_changes(body: dict) -> bool:
    """True when an aggregate's ``$changeStream`` watches every database (``allChangesForCluster``)."""
    pipeline = body.get("pipeline") if command_name(body) == "aggregate" else \
        (body.get("explain") or {}).get("pipeline")
    for stage in pipeline if isinstance(pipeline, list) else []:
        if isinstance(stage, dict) and isinstance(stage.get("$changeStream"), dict):
            if stage["$changeStream"].get("allChangesForCluster"):
                return True
    return False
