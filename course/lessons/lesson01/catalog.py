"""Lab 01's check catalog: a smaller copy of the lab's catalog, generated once, seeded with one insert_many."""

from __future__ import annotations

import functools
from typing import Any

from course.datasets.catalog import catalog_products
from course.engine.recording import RecordingCollection

SEED = 7  #: the lab's seed, and the checks' too
CHECK_PRODUCTS = 300  #: a smaller catalog for the behavioural checks


@functools.cache
def check_catalog() -> tuple[dict, ...]:
    """The check catalog, generated once (callers copy before inserting)."""
    return tuple(catalog_products(n=CHECK_PRODUCTS, seed=SEED))


def seeded_products(lab) -> Any:
    """A fresh scratch ``products`` collection holding the check catalog (one insert_many)."""
    products = lab.scratch().products
    products.insert_many([dict(p) for p in check_catalog()])
    return products


class SharedCatalog:
    """The check catalog for read-only checks: seeded once, seeded again only when it may have changed.

    Every wrapper handed out records its calls; a write through any of them, or a collection that
    no longer holds the whole catalog (another check emptied the scratch database), re-seeds it.
    """

    NAME = "search_products"

    def __init__(self) -> None:
        self.collection: Any = None
        self.handed_out: list[RecordingCollection] = []

    def get(self, lab) -> RecordingCollection:
        """A recording wrapper of a scratch collection that holds exactly the check catalog."""
        dirty = any(op.kind == "write" for wrapper in self.handed_out for op in wrapper.ops())
        if self.collection is None or dirty or self.collection.estimated_document_count() != len(check_catalog()):
            self.collection = lab.scratch()[self.NAME]
            self.collection.insert_many([dict(p) for p in check_catalog()])
            self.handed_out = []
        wrapper = RecordingCollection(self.collection)
        self.handed_out.append(wrapper)
        return wrapper
