"""The server-side command log: wire commands, decoded into the calls a recording wrapper logs.

The relay (:mod:`course.grading.relay`) sees the commands the learner's code
sent, read by :mod:`course.grading.wire_commands` as the server reads them (so a
generic argument put first hides no read from the log); :func:`operations` turns one command into ``(kind, collection, method,
args, kwargs)`` tuples in pymongo's terms (``update`` with one statement is
``update_one``, ``findAndModify`` is ``find_one_and_update``, an ``aggregate``
that counts is ``count_documents``), and :class:`CommandLog` feeds them to the
:class:`~course.engine.recording.RecordingCollection` / ``RecordingDatabase`` that
the check passed for that collection, so assertion code reads the same log in
graded runs as in ``check()``.
"""

from __future__ import annotations

import threading
from typing import Any

from course.grading.wire_commands import command_name, pipeline_reads_and_writes

Operation = tuple[str, str, str, tuple, dict]  #: (kind, collection, method, args, kwargs)
_READ_COMMANDS = {"find": "find", "count": "count_documents", "distinct": "distinct",
                  "listIndexes": "index_information"}


def _is_count(pipeline: Any) -> bool:
    if not isinstance(pipeline, list) or not pipeline:
        return False
    last = pipeline[-1]
    return isinstance(last, dict) and list(last) == ["$group"] and last["$group"].get("_id") == 1 \
        and list(last["$group"].get("n", {})) == ["$sum"]


def operations(body: dict, sequences: dict[str, list[dict]]) -> list[Operation]:
    """The reads and writes one command stands for (empty for commands that are neither)."""
    command = command_name(body)
    target = body.get(command)
    name = target if isinstance(target, str) else ""
    if command in _READ_COMMANDS:
        if command == "find":
            kwargs = {k: body[k] for k in ("projection", "sort", "limit", "skip", "collation", "hint") if k in body}
            return [("read", name, "find", (body.get("filter", {}),), kwargs)]
        if command == "distinct":
            return [("read", name, "distinct", (body.get("key"), body.get("query", {})), {})]
        return [("read", name, _READ_COMMANDS[command], (body.get("query", {}),), {})]
    if command == "aggregate":
        pipeline = body.get("pipeline", [])
        if _is_count(pipeline):
            first = pipeline[0] if pipeline else {}
            return [("read", name, "count_documents", (first.get("$match", {}),), {})]
        writes = any(isinstance(stage, dict) and ("$out" in stage or "$merge" in stage) for stage in pipeline)
        found = [("write" if writes else "read", name, "aggregate", (pipeline,), {})] if name else []
        # what its stages read ($lookup, $unionWith...) is a read of those collections too, and so on
        database = str(body.get("$db", ""))
        found += [(kind, collection, "aggregate", (pipeline,), {})
                  for kind, (db, collection) in pipeline_reads_and_writes(pipeline, database)
                  if db == database and collection and collection != name]
        return found
    if command == "insert":
        documents = body.get("documents", sequences.get("documents", []))
        method = "insert_one" if len(documents) == 1 else "insert_many"
        return [("write", name, method, ((documents[0] if len(documents) == 1 else documents),), {})]
    if command == "update":
        found = []
        for statement in body.get("updates", sequences.get("updates", [])):
            update = statement.get("u", {})
            replacement = isinstance(update, dict) and not any(str(k).startswith("$") for k in update)
            method = "replace_one" if replacement else ("update_many" if statement.get("multi") else "update_one")
            found.append(("write", name, method, (statement.get("q", {}), update),
                          {"upsert": bool(statement.get("upsert", False))}))
        return found
    if command == "delete":
        return [("write", name, "delete_one" if statement.get("limit", 0) == 1 else "delete_many",
                 (statement.get("q", {}),), {})
                for statement in body.get("deletes", sequences.get("deletes", []))]
    if command in ("findAndModify", "findandmodify"):
        query = body.get("query", {})
        if body.get("remove"):
            return [("write", name, "find_one_and_delete", (query,), {})]
        update = body.get("update", {})
        replacement = isinstance(update, dict) and not any(str(k).startswith("$") for k in update)
        method = "find_one_and_replace" if replacement else "find_one_and_update"
        return [("write", name, method, (query, update), {"upsert": bool(body.get("upsert", False))})]
    if command == "createIndexes":
        return [("write", name, "create_indexes", (body.get("indexes", []),), {})]
    if command in ("dropIndexes", "drop", "create", "collMod"):
        return [("write", name, command, (), {})]
    return []


class CommandLog:
    """Routes the relay's commands to the recording wrappers of one call, by database and collection."""

    def __init__(self) -> None:
        self._collections: dict[tuple[str, str], Any] = {}
        self._databases: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.seen: list[tuple[str, Operation]] = []  #: every operation of the call, with its database

    def watch_collection(self, database: str, name: str, wrapper: Any) -> None:
        """Feed what is done to ``database.name`` to ``wrapper`` (a RecordingCollection)."""
        self._collections[(database, name)] = wrapper

    def watch_database(self, database: str, wrapper: Any) -> None:
        """Feed what is done to any collection of ``database`` to ``wrapper`` (a RecordingDatabase)."""
        self._databases[database] = wrapper

    def __call__(self, database: str, body: dict, sequences: dict[str, list[dict]]) -> None:
        """The relay's observer: log the command, run a race callback if one is due, then let it through."""
        for operation in operations(body, sequences):
            with self._lock:
                self.seen.append((database, operation))
            wrapper = self._collections.get((database, operation[1]))
            if wrapper is None and database in self._databases:
                wrapper = self._databases[database].collection(operation[1])
            if wrapper is not None:
                feed(wrapper, operation)


def feed(wrapper: Any, operation: Operation) -> None:
    """Log ``operation`` on a RecordingCollection as if the learner's code had called it in this process."""
    kind, _, method, args, kwargs = operation
    record = getattr(wrapper, "record", None)
    if callable(record):
        record(kind, method, args, kwargs)
        return
    if kind == "read":  # the recording module before it took server-side logs
        wrapper._reads.append(method)
    else:
        wrapper._writes.append((method, tuple(args)))
