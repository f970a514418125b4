"""Wrappers that record what learner code does through a collection or a database.

Checks use them to see *how* learner code touched the data (one ``$set`` or a
whole-document replacement; a read then a write, which is not atomic; whether
it read a collection at all), not only what the data looks like afterwards.

A wrapper can also inject a race: ``race=callable`` runs once, just before the
first write that follows a read through the wrapper, as a competing client
would between the learner's read and its write.  A single guarded update is
untouched by it; a read-modify-write acts on stale data and shows it.

The log has one entry point, :meth:`RecordingCollection.record`: calls made
through the wrapper in this process feed it, and a grader that runs learner
code elsewhere feeds it from the server side (commands as the server saw
them), so assertions read the same log either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

WRITE_METHODS = frozenset({
    "insert_one", "insert_many", "update_one", "update_many", "replace_one",
    "delete_one", "delete_many", "find_one_and_update", "find_one_and_replace",
    "find_one_and_delete", "bulk_write",
})
READ_METHODS = frozenset({
    "find", "find_one", "aggregate", "count_documents", "distinct", "estimated_document_count",
})
_POSITIONAL = {  # method -> names of its leading positional parameters, as pymongo declares them
    "update_one": ("filter", "update", "upsert"), "update_many": ("filter", "update", "upsert"),
    "replace_one": ("filter", "replacement", "upsert"),
    "find_one_and_update": ("filter", "update"), "find_one_and_replace": ("filter", "replacement"),
    "delete_one": ("filter",), "delete_many": ("filter",), "find_one_and_delete": ("filter",),
    "insert_one": ("document",), "insert_many": ("documents",), "bulk_write": ("requests",),
    "find": ("filter", "projection"), "find_one": ("filter", "projection"),
    "aggregate": ("pipeline",), "count_documents": ("filter",), "distinct": ("key", "filter"),
}


@dataclass(frozen=True)
class Op:
    """One call through a recording wrapper: its kind ("read" or "write"), collection and arguments."""

    kind: str
    collection: str
    method: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def argument(self, name: str, default: Any = None) -> Any:
        """The argument ``name`` (``filter``, ``update``, ``upsert``...), positional or keyword."""
        if name in self.kwargs:
            return self.kwargs[name]
        names = _POSITIONAL.get(self.method, ())
        if name in names and names.index(name) < len(self.args):
            return self.args[names.index(name)]
        return default


@dataclass(frozen=True)
class Write:
    """A write normalised across spellings: ``update_one``, ``find_one_and_update``, a ``bulk_write`` operation."""

    collection: str
    method: str  #: "update_one", "update_many", "replace_one", "insert_one", "delete_one", ...
    filter: Any = None
    update: Any = None  #: the update document or pipeline (the replacement for replace_one)
    upsert: bool = False
    document: Any = None  #: inserted document(s)
    via: str = ""  #: the method actually called when it was not ``method`` itself


_BULK_KINDS = {  # pymongo operation class -> (normalised method, attribute holding the update)
    "UpdateOne": "update_one", "UpdateMany": "update_many", "ReplaceOne": "replace_one",
    "InsertOne": "insert_one", "DeleteOne": "delete_one", "DeleteMany": "delete_many",
}


def _bulk_operation(collection: str, operation: Any) -> Write:
    """One pymongo bulk operation (UpdateOne, InsertOne, ...) as a :class:`Write`."""
    kind = _BULK_KINDS.get(type(operation).__name__, type(operation).__name__)
    document = getattr(operation, "_doc", None)
    return Write(collection, kind, getattr(operation, "_filter", None), document if kind != "insert_one" else None,
                 bool(getattr(operation, "_upsert", False)), document if kind == "insert_one" else None,
                 "bulk_write")


def normalise(op: Op) -> list[Write]:
    """The writes ``op`` made, as :class:`Write` records (several for ``bulk_write``, none for a read)."""
    if op.kind != "write":
        return []
    if op.method == "bulk_write":
        return [_bulk_operation(op.collection, o) for o in (op.argument("requests") or [])]
    if op.method == "find_one_and_update":
        return [Write(op.collection, "update_one", op.argument("filter"), op.argument("update"),
                      bool(op.argument("upsert", False)), via="find_one_and_update")]
    if op.method in ("find_one_and_replace", "replace_one"):
        return [Write(op.collection, "replace_one", op.argument("filter"), op.argument("replacement"),
                      bool(op.argument("upsert", False)), via="" if op.method == "replace_one" else op.method)]
    if op.method == "find_one_and_delete":
        return [Write(op.collection, "delete_one", op.argument("filter"), via=op.method)]
    if op.method in ("insert_one", "insert_many"):
        return [Write(op.collection, op.method, document=op.argument("document", op.argument("documents")))]
    return [Write(op.collection, op.method, op.argument("filter"), op.argument("update"),
                  bool(op.argument("upsert", False)))]


def _kind_of(method: str, args: tuple, kwargs: dict, default: str) -> str:
    """An ``aggregate`` ending in ``$merge`` or ``$out`` writes; every other read method reads."""
    if method == "aggregate":
        pipeline = kwargs.get("pipeline", args[0] if args else None)
        if isinstance(pipeline, (list, tuple)) and pipeline and isinstance(pipeline[-1], dict) \
                and {"$merge", "$out"} & set(pipeline[-1]):
            return "write"
    return default


class _Log:
    """The ordered log of a wrapper (shared by a database's collections) and its race callback."""

    def __init__(self, race: Callable[[], None] | None):
        self.ops: list[Op] = []
        self.race = race
        self.raced = False

    def record(self, op: Op) -> None:
        if op.kind == "write" and self.race is not None and not self.raced \
                and any(o.kind == "read" for o in self.ops):
            self.raced = True
            self.race()
        self.ops.append(op)


class _Recorder:
    """What both wrappers offer to assertions: the log, normalised writes and read-modify-write."""

    _log: _Log

    def ops(self) -> list[Op]:
        """Every read and write call so far, in order."""
        return list(self._log.ops)

    def updates(self) -> list[Write]:
        """Every write so far, normalised (``bulk_write`` expanded, ``find_one_and_update`` as an update)."""
        return [write for op in self._log.ops for write in normalise(op)]

    def read_then_write(self) -> bool:
        """True when a write to a collection followed a read of the same collection (a read-modify-write)."""
        read: set[str] = set()
        for op in self._log.ops:
            if op.kind == "read":
                read.add(op.collection)
            elif op.collection in read:
                return True
        return False

    @property
    def raced(self) -> bool:
        """Whether the race callback ran (a write followed a read)."""
        return self._log.raced


class RecordingCollection(_Recorder):
    """Wraps a collection; every read and write method call is logged, then passed through."""

    def __init__(self, collection: Any, *, race: Callable[[], None] | None = None, _log: _Log | None = None):
        self._collection = collection
        self._log = _log or _Log(race)

    @property
    def wrapped(self) -> Any:
        """The collection this wrapper passes calls to."""
        return self._collection

    def record(self, kind: str, method: str, args: tuple = (), kwargs: dict | None = None) -> None:
        """Log one call (``kind`` "read" or "write"); runs the race first when it is due."""
        self._log.record(Op(kind, self._collection.name, method, tuple(args), dict(kwargs or {})))

    def writes(self) -> list[tuple[str, tuple]]:
        """The write calls made through this collection, as (method name, positional args)."""
        return [(o.method, o.args + tuple(o.kwargs[k] for k in ("filter", "update") if k in o.kwargs))
                for o in self._log.ops if o.kind == "write" and o.collection == self._collection.name]

    def reads(self) -> list[str]:
        """The names of the read methods called through this collection, in order."""
        return [o.method for o in self._log.ops if o.kind == "read" and o.collection == self._collection.name]

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._collection, name)
        kind = "read" if name in READ_METHODS else "write" if name in WRITE_METHODS else None
        if kind is None:
            return target

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.record(_kind_of(name, args, kwargs, kind), name, args, kwargs)
            return target(*args, **kwargs)

        return recorded

    def __getitem__(self, name: str) -> Any:
        return self._collection[name]

    def __iter__(self) -> Iterator:
        raise TypeError("a collection is not iterable: use find()")


class RecordingDatabase(_Recorder):
    """A database whose collections (``db.orders``, ``db["orders"]``) record the calls made through them."""

    def __init__(self, db: Any, *, race: Callable[[], None] | None = None):
        self._db = db
        self._log = _Log(race)
        self._collections: dict[str, RecordingCollection] = {}

    @property
    def wrapped(self) -> Any:
        """The database this wrapper passes calls to."""
        return self._db

    def collection(self, name: str) -> RecordingCollection:
        """The recording wrapper of collection ``name``."""
        if name not in self._collections:
            self._collections[name] = RecordingCollection(self._db[name], _log=self._log)
        return self._collections[name]

    def get_collection(self, name: str, *args: Any, **kwargs: Any) -> RecordingCollection:
        """pymongo's ``db.get_collection(name)``, recorded like ``db[name]``."""
        return self.collection(name)

    def writes(self) -> list[tuple[str, str, tuple]]:
        """Every write so far, as (collection name, method name, positional args)."""
        return [(o.collection, o.method, o.args + tuple(o.kwargs[k] for k in ("filter", "update") if k in o.kwargs))
                for o in self._log.ops if o.kind == "write"]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or hasattr(type(self._db), name):
            return getattr(self._db, name)
        return self.collection(name)

    def __getitem__(self, name: str) -> RecordingCollection:
        return self.collection(name)
