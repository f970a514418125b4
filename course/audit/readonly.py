"""A read-only view of a database: the only way the audit reaches one.

The audit needs the read privileges ``listCollections``, ``listIndexes``,
``find``, ``aggregate`` (for ``$sample``, ``$indexStats`` and ``$collStats``)
and ``collStats``.  :class:`ReadOnlyDatabase` offers exactly those calls and
nothing that writes, so no bug in a finding module can change the database it
audits: a pipeline ending in ``$out`` or ``$merge`` is refused, and so is any
command but the statistics and metadata it reads.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

#: Commands the audit may run: statistics and metadata only.
READ_COMMANDS = frozenset({"collStats", "buildInfo", "ping", "listCollections"})


class WriteRefused(RuntimeError):
    """The audit was about to write: it never does."""


class ReadOnlyCollection:
    """The read calls of one collection."""

    def __init__(self, collection: Any):
        self._collection = collection
        self.name: str = collection.name

    def find(self, filter: Mapping | None = None, projection: Any = None, **kwargs) -> Any:
        """``find`` as the driver has it."""
        return self._collection.find(dict(filter or {}), projection, **kwargs)

    def find_one(self, filter: Mapping | None = None, projection: Any = None) -> Any:
        """``find_one`` as the driver has it."""
        return self._collection.find_one(dict(filter or {}), projection)

    def count_documents(self, filter: Mapping | None = None) -> int:
        """``count_documents`` as the driver has it."""
        return self._collection.count_documents(dict(filter or {}))

    def estimated_document_count(self) -> int:
        """``estimated_document_count`` (from the collection's metadata, on a server)."""
        return self._collection.estimated_document_count()

    def aggregate(self, pipeline: Iterable[Mapping], **kwargs) -> Any:
        """``aggregate``, refusing a pipeline that writes (``$out``, ``$merge``)."""
        pipeline = list(pipeline)
        for stage in pipeline:
            if set(stage) & {"$out", "$merge"}:
                raise WriteRefused(f"the audit never writes: refusing a pipeline with {sorted(stage)[0]}")
        return self._collection.aggregate(pipeline, **kwargs)

    def index_information(self) -> dict:
        """``index_information`` (from ``listIndexes``)."""
        return self._collection.index_information()


class ReadOnlyDatabase:
    """The read calls of one database."""

    def __init__(self, db: Any):
        self._db = db
        self.name: str = db.name

    def __getitem__(self, name: str) -> ReadOnlyCollection:
        return ReadOnlyCollection(self._db[name])

    def list_collection_names(self) -> list[str]:
        """``list_collection_names``."""
        return list(self._db.list_collection_names())

    def list_collections(self) -> list[dict]:
        """``list_collections``: names, types (collection or view) and options (the validator)."""
        return list(self._db.list_collections())

    def command(self, name: str, value: Any = 1) -> dict:
        """Run one of :data:`READ_COMMANDS`."""
        if name not in READ_COMMANDS:
            raise WriteRefused(f"the audit only runs {', '.join(sorted(READ_COMMANDS))}, not {name}")
        return self._db.command({name: value})

    def admin_command(self, name: str) -> dict:
        """Run one of :data:`READ_COMMANDS` on the ``admin`` database (``buildInfo``)."""
        if name not in READ_COMMANDS:
            raise WriteRefused(f"the audit only runs {', '.join(sorted(READ_COMMANDS))}, not {name}")
        return self._db.client.admin.command(name)
