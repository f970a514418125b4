"""Document sizes and the 16 MiB ceiling, on every backend.

A MongoDB server refuses a document whose BSON encoding is larger than
16 MiB (16,777,216 bytes), whether it arrives by an insert or grows there by
an update.  The in-process engines the course runs on do not enforce that
limit, so the course's write helpers enforce it themselves:
:func:`insert_one_checked` refuses an oversized document before writing it,
and :func:`update_one_checked` undoes an update whose result is oversized.
Each raises what a server's client would see for that operation: an insert
of an oversized document is refused by pymongo itself before it is sent
(:class:`pymongo.errors.DocumentTooLarge`); an update that would grow a
document past the limit is refused by the server (:class:`pymongo.errors.WriteError`
with code 17419, "Resulting document after update is larger than 16777216").

Sizes are measured with ``len(bson.encode(doc))``, which works without any
database.  :func:`array_document_size` computes the size a document would
have with ``n`` copies of an element in an array, without building it, so a
lesson can show where the ceiling is without ever allocating 16 MiB.
"""

from __future__ import annotations

from typing import Any, Mapping

import bson
from pymongo.errors import DocumentTooLarge, WriteError

#: The largest BSON document a MongoDB server stores: 16 MiB.
MAX_BSON_SIZE = 16 * 1024 * 1024
#: The server's error code for "the document an update produced is over 16 MiB".
UPDATE_TOO_LARGE = 17419


def bson_size(doc: Mapping[str, Any]) -> int:
    """The number of bytes ``doc`` takes as BSON: what the 16 MiB limit counts."""
    return len(bson.encode(doc))


def check_size(doc: Mapping[str, Any], limit: int = MAX_BSON_SIZE) -> int:
    """Return ``doc``'s BSON size; raise DocumentTooLarge if it is over ``limit``."""
    size = bson_size(doc)
    if size > limit:
        raise DocumentTooLarge(
            f"document _id={doc.get('_id')!r} is {size:,} bytes of BSON; the limit is {limit:,} bytes (16 MiB)"
        )
    return size


def insert_one_checked(collection: Any, doc: dict, limit: int = MAX_BSON_SIZE) -> Any:
    """``collection.insert_one(doc)``, refused with DocumentTooLarge if ``doc`` is over the limit.

    Nothing is written when the document is too large, on every backend.
    """
    check_size(doc, limit)
    return collection.insert_one(doc)


def update_too_large(size: int, limit: int = MAX_BSON_SIZE) -> WriteError:
    """The error a server answers an update with when the updated document would be ``size`` bytes."""
    message = f"Resulting document after update is larger than {limit} (it would be {size:,} bytes)"
    return WriteError(message, UPDATE_TOO_LARGE, {"code": UPDATE_TOO_LARGE, "errmsg": message})


def update_one_checked(collection: Any, filter: Mapping[str, Any], update: Any, *, upsert: bool = False,
                       limit: int = MAX_BSON_SIZE) -> Any:
    """``collection.update_one(filter, update)``, refused as a server refuses it when the result is over the limit.

    Raises :class:`pymongo.errors.WriteError` with code 17419, what a server
    sends back.  The document is read before the update and, if the updated
    document is larger than ``limit``, put back as it was (a document the
    update created by upsert is deleted), so the refused write leaves no
    trace.  A server refuses on its own, with the same error.  The undo is a
    second write: a concurrent reader could glimpse the oversized document in
    between, which a server (which refuses before writing) never shows.
    """
    before = collection.find_one(filter)
    target = dict(filter) if before is None else {"$and": [dict(filter), {"_id": before["_id"]}]}
    result = collection.update_one(target, update, upsert=upsert)
    changed_id = before["_id"] if before is not None else result.upserted_id
    if changed_id is None:
        return result
    after = collection.find_one({"_id": changed_id})
    size = bson_size(after) if after is not None else 0
    if size > limit:
        if before is None:
            collection.delete_one({"_id": changed_id})
        else:
            collection.replace_one({"_id": changed_id}, before)
        raise update_too_large(size, limit)
    return result


def _digits_total(count: int) -> int:
    """Total number of decimal digits in 0, 1, ..., count - 1 (array keys are decimal strings)."""
    total, low, width = 0, 0, 1
    while low < count:
        high = min(count, 10 ** width)
        total += (high - low) * width
        low, width = high, width + 1
    return total


def array_document_size(doc: Mapping[str, Any], field: str, element: Mapping[str, Any], count: int) -> int:
    """The exact BSON size of ``doc`` with top-level ``field`` set to ``count`` copies of ``element``.

    Computed, not built: in BSON an array is a document whose keys are "0",
    "1", ..., so each element costs one type byte, its key's digits, a
    terminating zero and the element's own encoding.
    """
    if not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be a non-negative int, got {count!r}")
    empty = bson_size({**doc, field: []})
    per_element = 1 + 1 + bson_size(element)  # type byte + key terminator + the embedded document
    return empty + count * per_element + _digits_total(count)


def max_array_length(doc: Mapping[str, Any], field: str, element: Mapping[str, Any],
                     limit: int = MAX_BSON_SIZE) -> int:
    """The largest number of copies of ``element`` that ``doc[field]`` can hold under ``limit``."""
    if array_document_size(doc, field, element, 0) > limit:
        return -1
    low, high = 0, 1
    while array_document_size(doc, field, element, high) <= limit:
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        if array_document_size(doc, field, element, middle) <= limit:
            low = middle
        else:
            high = middle
    return low
