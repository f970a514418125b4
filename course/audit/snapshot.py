"""What the audit read from a database, handed to every finding module.

The finding modules never touch the database: they decide from a
:class:`DatabaseSnapshot` (samples of documents, index definitions, options,
index statistics where the server keeps them), which :mod:`course.audit.sampler`
reads through the read-only view.  That keeps each module a small pure
function of what was read, testable with hand-made snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from course.store.capabilities import Capability, capabilities_of


@dataclass
class CollectionSnapshot:
    """One collection as the audit read it."""

    name: str
    documents: int  #: documents in the collection
    sample: list[dict]  #: the documents read (all of them when ``method`` is "all")
    method: str  #: how ``sample`` was drawn
    indexes: dict[str, dict]  #: ``index_information()``
    options: dict | None = None  #: ``listCollections`` options (the validator), None when unknown
    index_stats: list[dict] | None = None  #: ``$indexStats`` rows, None when unknown
    index_stats_reason: str = ""  #: why ``index_stats`` is None
    index_sizes: dict[str, int] | None = None  #: bytes per index (``collStats``), None when unknown

    @property
    def complete(self) -> bool:
        """True when every document was read (counts are exact, not a sample's)."""
        return self.method == "all"

    @property
    def validator(self) -> dict | None:
        """The collection's validator, or None (also when unknown: see ``options``)."""
        return (self.options or {}).get("validator")


@dataclass
class DatabaseSnapshot:
    """Every collection of one database as the audit read it, and what the backend can tell."""

    name: str
    backend: str  #: "server", "mongoeco-wire", "mongoeco" or "mongomock"
    limit: int
    collections: dict[str, CollectionSnapshot] = field(default_factory=dict)
    options_reason: str = ""  #: why collection options are unknown ("" when known)
    #: (collection, _ids, fields) -> {_id: document}
    lookup: Callable[[str, Iterable[Any], Iterable[str] | None], dict] | None = None

    def supports(self, capability: Capability) -> bool:
        """True when the audited backend has ``capability``."""
        return capability in capabilities_of(self.backend)

    def documents_by_id(self, collection: str, ids: Iterable[Any], fields: Iterable[str] | None = None) -> dict:
        """``{_id: document}`` for those of ``ids`` found in ``collection`` (read-only).

        With ``fields``, each document holds only those top-level fields (and ``_id``).
        """
        if self.lookup is None:
            return {}
        return self.lookup(collection, ids, fields)
