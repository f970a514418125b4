"""Reading a database for the audit: which backend it is, and a bounded sample of each collection.

* A collection of at most ``limit`` documents is read whole, in ``_id`` order
  (``method`` "all"): its counts are exact.
* On a server a larger one is sampled with ``$sample`` (``{"$sample": {"size":
  limit}}``, fewer when ``collStats`` says its documents are large, so that a
  sample stays under :data:`SAMPLE_BYTES`).
* On the embedded engines (and wherever ``$sample`` fails: mongoeco refuses
  ``$sample`` over 50,000 documents) the sample is a seeded pick: :data:`SEED`
  picks ``limit`` positions in natural order; every ``_id`` is read and the
  picked documents are read one by one by ``_id`` (on mongomock, which has no
  index behind ``find_one``, one pass over the documents keeps the picked
  ones).  Same data, same sample, so the audit of an embedded database is
  deterministic.

Everything goes through :class:`course.audit.readonly.ReadOnlyDatabase`.
"""

from __future__ import annotations

import random
from typing import Any, Iterable

from pymongo.errors import OperationFailure, PyMongoError

from course.audit.readonly import ReadOnlyCollection, ReadOnlyDatabase
from course.audit.snapshot import CollectionSnapshot, DatabaseSnapshot

#: Documents read per collection unless ``--sample`` says otherwise.
DEFAULT_SAMPLE = 1000
#: The seed of the ``_id`` pick on embedded engines.
SEED = 6
#: On a server, the sample is made smaller when its documents would add up to more than this.
SAMPLE_BYTES = 256 * 1024 * 1024
SERVERS = ("server", "mongoeco-wire")
ALL, SAMPLE, PICK = "all", "$sample", "seeded pick"

_NO_OPTIONS = {"mongomock": "mongomock has no listCollections, so collection options (validators) are unknown"}
_NO_INDEX_STATS = {
    "mongomock": "mongomock has no $indexStats",
    "mongoeco": "mongoeco's $indexStats never counts an index's uses (ops stays 0), so an unused index "
                "cannot be told from a used one",
}
_NO_INDEX_STATS["mongoeco-wire"] = _NO_INDEX_STATS["mongoeco"]


def backend_name(db: Any) -> str:
    """Which backend ``db`` belongs to: "mongomock", "mongoeco", or through pymongo "mongoeco-wire" or "server"."""
    module = type(db).__module__
    if module.startswith("mongomock"):
        return "mongomock"
    if module.startswith("mongoeco"):
        return "mongoeco"
    try:
        info = ReadOnlyDatabase(db).admin_command("buildInfo")
    except PyMongoError:
        return "server"
    return "mongoeco-wire" if info.get("gitVersion") == "mongoeco" else "server"


def collection_names(rodb: ReadOnlyDatabase, backend: str) -> tuple[list[str], dict[str, dict] | None, list[str]]:
    """(collections to audit, their options or None when unknown, views left out)."""
    if backend == "mongomock":
        names = sorted(n for n in rodb.list_collection_names() if not n.startswith("system."))
        return names, None, []
    options, views = {}, []
    for info in rodb.list_collections():
        name = info["name"]
        if name.startswith("system."):
            continue
        if info.get("type", "collection") == "view":
            views.append(name)
            continue
        options[name] = dict(info.get("options") or {})
    return sorted(options), options, sorted(views)


def _seeded_pick(collection: ReadOnlyCollection, documents: int, limit: int, backend: str) -> list[dict]:
    """``limit`` documents at positions :data:`SEED` picks in natural order (all when there are fewer)."""
    if backend == "mongomock":  # no index behind find_one: one pass over the documents instead
        wanted = set(random.Random(SEED).sample(range(documents), min(limit, documents)))
        return [d for position, d in enumerate(collection.find({})) if position in wanted]
    ids = [d["_id"] for d in collection.find({}, {"_id": 1})]
    if len(ids) <= limit:
        picked = ids
    else:
        positions = sorted(random.Random(SEED).sample(range(len(ids)), limit))
        picked = [ids[p] for p in positions]
    found = (collection.find_one({"_id": _id}) for _id in picked)  # by _id: mongoeco scans for each $in value
    return [d for d in found if d is not None]


def _server_statistics(rodb: ReadOnlyDatabase, name: str) -> dict:
    try:
        return dict(rodb.command("collStats", name))
    except (OperationFailure, PyMongoError, NotImplementedError, TypeError):
        return {}


def read_sample(collection: ReadOnlyCollection, documents: int, limit: int, backend: str,
                average_bytes: float | None = None) -> tuple[list[dict], str]:
    """(the documents read, how they were chosen): all of them, ``$sample``, or a seeded ``_id`` pick."""
    if documents <= limit:
        return list(collection.find({}).sort("_id", 1)), ALL
    if backend in SERVERS:
        size = limit
        if average_bytes:
            size = max(1, min(limit, int(SAMPLE_BYTES // max(average_bytes, 1))))
        try:
            return list(collection.aggregate([{"$sample": {"size": size}}], allowDiskUse=True)), SAMPLE
        except (OperationFailure, NotImplementedError):
            pass  # mongoeco over the wire refuses $sample past its materialisation budget
    return _seeded_pick(collection, documents, limit, backend), PICK


def _index_stats(collection: ReadOnlyCollection, backend: str) -> tuple[list[dict] | None, str]:
    if backend in _NO_INDEX_STATS:
        return None, _NO_INDEX_STATS[backend]
    try:
        return list(collection.aggregate([{"$indexStats": {}}])), ""
    except OperationFailure as error:
        if error.code == 13:
            return None, "not authorised to run $indexStats (it needs the indexStats privilege)"
        return None, f"$indexStats failed: {error}"


def _projection(fields: Iterable[str] | None) -> dict | None:
    """A projection of these top-level fields, or None (the whole document) when a name would be read as a path."""
    if fields is None:
        return None
    names = sorted(set(fields) - {"_id"})
    if not names or any("." in name or name.startswith("$") for name in names):
        return None
    return {name: 1 for name in names}


def lookup_by_ids(rodb: ReadOnlyDatabase, backend: str):
    """A function ``(collection, ids) -> {_id: document}``: ``$in`` batches, or one ``find_one`` per id on mongoeco."""

    def lookup(name: str, ids: Iterable[Any], fields: Iterable[str] | None = None) -> dict:
        """``{_id: document}`` for those of ``ids`` found in collection ``name`` (only ``fields``, if given)."""
        wanted = list(dict.fromkeys(ids))
        collection = rodb[name]
        projection = _projection(fields)
        found: dict = {}
        if backend != "mongoeco" and backend != "mongoeco-wire":
            for start in range(0, len(wanted), 500):
                for document in collection.find({"_id": {"$in": wanted[start:start + 500]}}, projection):
                    found[document["_id"]] = document
            return found
        for _id in wanted:  # mongoeco scans the whole collection for each $in value: one find_one each
            document = collection.find_one({"_id": _id}, projection)
            if document is not None:
                found[_id] = document
        return found

    return lookup


def snapshot(db: Any, *, limit: int = DEFAULT_SAMPLE, backend: str | None = None,
             collections: Iterable[str] | None = None) -> tuple[DatabaseSnapshot, list[str]]:
    """Read ``db`` for the audit; return the snapshot and the views it left out."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"the sample size must be a positive whole number, got {limit!r}")
    backend = backend or backend_name(db)
    rodb = ReadOnlyDatabase(db)
    names, options, views = collection_names(rodb, backend)
    if collections is not None:
        wanted = list(collections)
        unknown = [n for n in wanted if n not in names]
        if unknown:
            raise ValueError(f"database {db.name} has no collection {', '.join(unknown)}")
        names = [n for n in names if n in wanted]
    result = DatabaseSnapshot(name=db.name, backend=backend, limit=limit,
                              options_reason=_NO_OPTIONS.get(backend, ""), lookup=lookup_by_ids(rodb, backend))
    for name in names:
        collection = rodb[name]
        statistics = _server_statistics(rodb, name) if backend == "server" else {}
        documents = (collection.estimated_document_count() if backend == "server"
                     else collection.count_documents({}))
        sample, method = read_sample(collection, documents, limit, backend, statistics.get("avgObjSize"))
        stats, reason = _index_stats(collection, backend)
        sizes = statistics.get("indexSizes")
        result.collections[name] = CollectionSnapshot(
            name=name, documents=max(documents, len(sample)), sample=sample, method=method,
            indexes=collection.index_information(), options=None if options is None else options.get(name, {}),
            index_stats=stats, index_stats_reason=reason,
            index_sizes={k: int(v) for k, v in sizes.items()} if isinstance(sizes, dict) else None)
    return result, views
