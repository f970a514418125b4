"""What a document costs inside WiredTiger, MongoDB's storage engine, measured in this process.

MongoDB keeps each collection in a WiredTiger table whose keys are record ids
and whose values are the documents' BSON bytes; it creates those tables with
the configuration in :data:`MONGODB_TABLE_CONFIG`.  This module stores lesson
04's orders the same way (``pip install -e '.[storage]'`` provides the
``wiredtiger`` bindings) and reads WiredTiger's own statistics cursors, as the
seed lab read ``collStats``' ``wiredTiger.cache`` section:

* bytes written from the cache at the checkpoint after a 4-byte change (WiredTiger's
  ``cache_bytes_write``: uncompressed page bytes, before block compression; the change is a
  ``cursor.modify``, which is what ``$inc`` of an int32 amounts to);
* bytes read into the cache, and bytes then in the cache, when one field of a
  cold document is wanted (WiredTiger has no fields: the value comes whole);
* whether the next document was already in the cache (it shares the page).

These are the server-side half of the cost of a large document.  They are
byte counts, not timings, and they depend only on the documents and on
WiredTiger's version.  The PyPI build has no snappy extension, so the tables
are uncompressed; compression changes the bytes on disk, not the bytes that
pass through the cache.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Mapping

import bson

from course.toolkit.measure import order_with_events

#: How mongod creates a collection's table (WiredTiger's defaults for MongoDB), snappy left out.
MONGODB_TABLE_CONFIG = ("key_format=q,value_format=u,internal_page_max=4KB,leaf_page_max=32KB,"
                        "leaf_value_max=64MB,memory_page_max=10m,split_pct=90")
CONNECTION_CONFIG = "cache_size=512MB,statistics=(all),log=(enabled=false)"
#: Documents stored per size: enough neighbours for the page question, few for the largest.
DOCUMENTS_PER_SIZE = {"small": 20, "medium": 8, "large": 3}
SMALL_CHANGE = b"\x01\x00\x00\x00"  #: the new int32 value of ``views``: a 4-byte change


def available() -> tuple[bool, str]:
    """``(True, version)`` when the ``wiredtiger`` bindings import, else ``(False, why and what to do)``: still
    being built (by make lab, in the background, N s so far), a failed build, or swig missing."""
    import importlib

    importlib.invalidate_caches()  # a build that finished since this kernel started is found
    try:
        import wiredtiger
    except ImportError:
        from course.setup.storage_build import not_ready_reason

        return False, not_ready_reason()
    return True, wiredtiger.wiredtiger_version()[0]


@dataclass(frozen=True)
class StorageFigures:
    """WiredTiger's figures for one document size."""

    label: str
    document_bytes: int  #: the BSON size of one document
    documents: int  #: documents stored in the table
    checkpoint_bytes: int  #: written from the cache (uncompressed) at the checkpoint after one 4-byte change
    cold_read_bytes: int  #: read into the cache to get one field of a cold document
    cold_cache_bytes: int  #: then held in the cache for it
    neighbour_cache_bytes: int  #: added to the cache by then reading the next document

    @property
    def checkpoint_share(self) -> float:
        """Bytes written at the checkpoint per byte of the changed document."""
        return self.checkpoint_bytes / self.document_bytes

    @property
    def neighbour_shares_page(self) -> bool:
        """True when the next document came into the cache with the first (same page)."""
        return self.neighbour_cache_bytes < self.document_bytes // 10


#: BSON element types of fixed width (bytes after the name) that may come before the field wanted
_FIXED_WIDTH = {0x01: 8, 0x07: 12, 0x08: 1, 0x09: 8, 0x0A: 0, 0x10: 4, 0x11: 8, 0x12: 8, 0x13: 16}


def top_level_field(raw: bytes, name: str):
    """The value of the top-level field ``name`` of the BSON document ``raw``, or KeyError.

    Only the elements before it are stepped over, by their lengths: the application wants one field,
    and decoding the whole 10 MB value (``RawBSONDocument`` inflates every top-level element, 70,000
    events included) would cost it more than WiredTiger's read does.
    """
    wanted, position, end = name.encode(), 4, len(raw) - 1
    while position < end:
        kind, name_end = raw[position], raw.index(b"\x00", position + 1)
        key, start = raw[position + 1:name_end], name_end + 1
        if kind in _FIXED_WIDTH:
            stop = start + _FIXED_WIDTH[kind]
        elif kind in (0x02, 0x0D, 0x0E):  # string, code, symbol: int32 length, bytes, NUL
            stop = start + 4 + int.from_bytes(raw[start:start + 4], "little")
        elif kind in (0x03, 0x04):  # document, array: int32 total length
            stop = start + int.from_bytes(raw[start:start + 4], "little")
        else:  # binary, regex, ...: let bson read the rest of the document
            return bson.decode(raw)[name]
        if key == wanted:
            element = bytes([kind]) + key + b"\x00" + raw[start:stop]
            return bson.decode((len(element) + 5).to_bytes(4, "little") + element + b"\x00")[name]
        position = stop
    raise KeyError(name)


def _statistic(session, key: int) -> int:
    cursor = session.open_cursor("statistics:", None, None)
    try:
        return int(cursor[key][2])
    finally:
        cursor.close()


@contextmanager
def _connection(home: str, create: bool = False) -> Iterator:
    import wiredtiger

    connection = wiredtiger.wiredtiger_open(home, ("create," if create else "") + CONNECTION_CONFIG)
    try:
        yield connection
    finally:
        connection.close()


def _table(label: str) -> str:
    return "table:orders_" + "".join(ch for ch in label if ch.isalnum())


def _store(home: str, sizes: Mapping[str, int], counts: Mapping[str, int]) -> dict[str, int]:
    """Write each size's documents into its own table; return one document's BSON size per label.

    The documents of one size are order 1 under record ids (and ``_id`` values) 1, 2, ...: the figures
    depend only on the bytes' sizes, which are the same for every order (its fields are fixed-width),
    and the 10 MB order's 70,000 events are built once instead of three times.
    """
    document_bytes = {}
    with _connection(home, create=True) as connection:
        session = connection.open_session()
        for label, events in sizes.items():
            session.create(_table(label), MONGODB_TABLE_CONFIG)
            cursor = session.open_cursor(_table(label))
            order = order_with_events(1, events)
            for record_id in range(1, counts[label] + 1):
                cursor[record_id] = bson.encode({**order, "_id": record_id})
            document_bytes[label] = len(cursor[1])
            cursor.close()
        session.checkpoint()
    return document_bytes


def _checkpoint_after_small_change(home: str, label: str) -> int:
    """Change 4 bytes of document 2 (its ``views`` counter), checkpoint, return the bytes written."""
    import wiredtiger

    with _connection(home) as connection:
        session = connection.open_session()
        cursor = session.open_cursor(_table(label))
        value = cursor[2]
        offset = value.index(b"\x10views\x00") + len(b"\x10views\x00")  # int32 element "views"
        before = _statistic(session, wiredtiger.stat.conn.cache_bytes_write)
        session.begin_transaction()
        cursor.set_key(2)
        cursor.modify([wiredtiger.Modify(SMALL_CHANGE, offset, len(SMALL_CHANGE))])
        session.commit_transaction()
        cursor.close()
        session.checkpoint()
        return _statistic(session, wiredtiger.stat.conn.cache_bytes_write) - before


def _cold_reads(home: str, label: str) -> tuple[int, int, int]:
    """From a cold cache: (bytes read in, bytes held) for one field of document 1, then held for document 2."""
    import wiredtiger

    stat = wiredtiger.stat.conn
    with _connection(home) as connection:  # a fresh connection starts with an empty cache
        session = connection.open_session()
        cursor = session.open_cursor(_table(label))
        held, read = _statistic(session, stat.cache_bytes_inuse), _statistic(session, stat.cache_bytes_read)
        top_level_field(cursor[1], "status")  # one field: WiredTiger hands over the whole value
        held_one, read_one = _statistic(session, stat.cache_bytes_inuse), _statistic(session, stat.cache_bytes_read)
        top_level_field(cursor[2], "status")
        held_two = _statistic(session, stat.cache_bytes_inuse)
        cursor.close()
    return read_one - read, held_one - held, held_two - held_one


def measure_storage(sizes: Mapping[str, int], counts: Mapping[str, int] | None = None,
                    home: str | None = None) -> list[StorageFigures]:
    """Store orders of each size (label -> events per order) in WiredTiger and measure each size.

    ``counts`` (label -> documents) defaults to 20 / 8 / 3 for the smallest, middle and largest sizes.
    ``home`` is a scratch directory (a temporary one, removed afterwards, when not given).
    """
    ok, why = available()
    if not ok:
        raise RuntimeError(why)
    labels = list(sizes)
    default = [DOCUMENTS_PER_SIZE["small"]] + [DOCUMENTS_PER_SIZE["medium"]] * (len(labels) - 2) \
        + [DOCUMENTS_PER_SIZE["large"]]
    counts = dict(counts or dict(zip(labels, default[:len(labels)] if len(labels) > 1 else [3])))
    scratch = home or tempfile.mkdtemp(prefix="course-wiredtiger-")
    try:
        document_bytes = _store(scratch, sizes, counts)
        figures = []
        for label in labels:
            checkpoint = _checkpoint_after_small_change(scratch, label)
            read, held, neighbour = _cold_reads(scratch, label)
            figures.append(StorageFigures(label, document_bytes[label], counts[label], checkpoint,
                                          read, held, neighbour))
        return figures
    finally:
        if home is None:
            shutil.rmtree(scratch, ignore_errors=True)
