"""The narrow channel between the grader and the agent in a learner's kernel: plain data only.

Both ends exchange length-prefixed BSON documents over a Unix socket.  BSON
decodes to dicts, lists, strings, numbers and the ``bson`` types, never to an
object with methods the learner wrote, so an answer whose ``__eq__`` always
says yes, or that records the comparisons made on it, cannot cross.  What
plain data cannot say is tagged with a ``"$course"`` key:

* ``{"$course": "handle", "id": 3, "name": "f"}``: a learner function (the
  grader calls it back through the channel);
* ``{"$course": "callback", "id": 2, "name": "sleep"}``: a function of the check's
  (a ``sleep`` or ``log`` handed to the learner's code); calling it sends
  ``{"callback": 2, "args": [...], "kwargs": {...}}`` to the grader, which runs
  it and answers ``{"value": ...}`` or ``{"raised": {...}}``, raised again in
  the learner's code;
* ``{"$course": "collection", "db": ..., "name": ...}`` / ``"database"``: a
  reference to a collection of the checks' database;
* ``"tuple"``, ``"set"``, ``"dict"`` (non-string keys), ``"placeholder"`` (the
  course's ``____``), ``"iterable"`` (a returned cursor or generator: its items
  and its type name, rebuilt as a :class:`Materialised` list that remembers
  it) and ``"opaque"`` (anything else: its type name only).

Frames are capped at :data:`MAX_FRAME` bytes and nesting at :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import select
import socket
import struct
import time
from typing import Any

from course.engine.crossed_values import Materialised, Opaque, opaque  # noqa: F401 (re-exported: the channel makes them)

MAX_FRAME = 48 * 1024 * 1024  #: the largest message either side accepts: room for a check's deliberately oversized (> 16 MiB) argument
MAX_DEPTH = 100  #: the deepest nesting of lists and dicts a value may have
MAX_ITEMS = 200_000  #: the most items a returned iterable (a cursor, a generator) may yield
TAG = "$course"
_HEADER = struct.Struct(">I")


class ChannelError(RuntimeError):
    """The other side sent something that is not a well-formed message, or went away."""


class ChannelTimeout(ChannelError):
    """No answer came before the deadline."""


def _codec():
    from bson.codec_options import CodecOptions

    return CodecOptions(document_class=dict, tz_aware=False)


def send(sock: socket.socket, message: dict) -> None:
    """Send ``message`` (a BSON-encodable dict) as one frame."""
    import bson

    data = bson.encode(message)
    if len(data) > MAX_FRAME:
        raise ChannelError(f"a message of {len(data)} bytes is over the {MAX_FRAME}-byte limit")
    sock.sendall(_HEADER.pack(len(data)) + data)


def _read_exactly(sock: socket.socket, size: int, deadline: float | None) -> bytes:
    chunks, left = [], size
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([sock], [], [], wait)[0]:
                raise ChannelTimeout("no answer in time")
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ChannelError("the other side closed the channel")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(sock: socket.socket, deadline: float | None = None) -> dict:
    """Read one frame and decode it strictly; raise ChannelError if it is malformed or too big."""
    import bson
    from bson.errors import BSONError

    (size,) = _HEADER.unpack(_read_exactly(sock, _HEADER.size, deadline))
    if not 5 <= size <= MAX_FRAME:
        raise ChannelError(f"a frame of {size} bytes is outside the limits")
    data = _read_exactly(sock, size, deadline)
    try:
        message = bson.decode(data, codec_options=_codec())
    except (BSONError, ValueError, TypeError, OverflowError, RecursionError) as error:
        raise ChannelError(f"an undecodable message ({type(error).__name__})") from None
    return message


# ---- values -> plain data (used on both sides) -----------------------------------------

_SCALARS: tuple[type, ...] = (type(None), bool, str, bytes, float, int)


def _bson_scalar_types() -> tuple[type, ...]:
    import datetime
    import re
    import uuid

    from bson import Binary, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp

    return (datetime.datetime, ObjectId, Decimal128, Int64, Regex, Binary, Timestamp, MinKey, MaxKey,
            uuid.UUID, re.Pattern)


class Encoder:
    """Turns values into plain data; ``special(value)`` may return a tagged dict for values it knows."""

    def __init__(self, special=None, materialise: bool = False):
        self.special = special
        self.materialise = materialise  #: turn iterables (cursors, generators) into lists
        self._scalars = _SCALARS + _bson_scalar_types()

    def encode(self, value: Any, depth: int = 0) -> Any:
        """``value`` as plain data (raises ValueError when it is too deep or too long)."""
        if depth > MAX_DEPTH:
            raise ValueError(f"the value is nested more than {MAX_DEPTH} levels deep")
        kind = type(value)
        if kind in self._scalars:
            return value
        if self.special is not None:
            tagged = self.special(value)
            if tagged is not None:
                return tagged
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, int):
            return int.__int__(value)  # an int subclass loses its methods, keeps its value
        if isinstance(value, float):
            return float.__float__(value)
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, bytes):
            return bytes(value)
        if isinstance(value, dict):
            items = list(dict.items(value))
            if all(type(k) is str for k, _ in items) and TAG not in dict.keys(value):
                return {k: self.encode(v, depth + 1) for k, v in items}
            return {TAG: "dict", "keys": [self.encode(k, depth + 1) for k, _ in items],
                    "values": [self.encode(v, depth + 1) for _, v in items]}
        if isinstance(value, list):
            return [self.encode(v, depth + 1) for v in list.__iter__(value)]
        if isinstance(value, tuple):
            return {TAG: "tuple", "items": [self.encode(v, depth + 1) for v in tuple.__iter__(value)]}
        if isinstance(value, (set, frozenset)):
            return {TAG: "set", "items": [self.encode(v, depth + 1) for v in value]}
        if self.materialise and hasattr(value, "__iter__"):
            items = []
            for item in value:
                items.append(self.encode(item, depth + 1))
                if len(items) > MAX_ITEMS:
                    raise ValueError(f"the returned iterable yields more than {MAX_ITEMS} items")
            return {TAG: "iterable", "type": str(type(value).__name__)[:100], "items": items}
        return {TAG: "opaque", "type": str(type(value).__name__)[:100]}


def decode(value: Any, special=None, depth: int = 0) -> Any:
    """Rebuild plain data sent by :class:`Encoder`; ``special(tagged)`` handles the other tags."""
    if depth > MAX_DEPTH + 2:
        raise ChannelError(f"a value nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, list):
        return [decode(v, special, depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    tag = value.get(TAG)
    if tag is None:
        return {k: decode(v, special, depth + 1) for k, v in value.items()}
    if tag == "tuple":
        return tuple(decode(v, special, depth + 1) for v in _items(value, "items"))
    if tag == "set":
        try:
            return set(decode(v, special, depth + 1) for v in _items(value, "items"))
        except TypeError:
            raise ChannelError("a set of unhashable items") from None
    if tag == "dict":
        keys, values = _items(value, "keys"), _items(value, "values")
        if len(keys) != len(values):
            raise ChannelError("a dict whose keys and values do not pair up")
        try:
            return {decode(k, special, depth + 1): decode(v, special, depth + 1) for k, v in zip(keys, values)}
        except TypeError:
            raise ChannelError("a dict with unhashable keys") from None
    if tag == "iterable":
        rebuilt = Materialised(decode(v, special, depth + 1) for v in _items(value, "items"))
        rebuilt.returned_type = str(value.get("type", "iterable"))[:100]
        return rebuilt
    if tag == "opaque":
        return opaque(str(value.get("type", "?"))[:100])
    if tag == "placeholder":
        from course.engine.placeholder import ____

        return ____
    if special is not None:
        rebuilt = special(value)
        if rebuilt is not None:
            return rebuilt
    raise ChannelError(f"an unknown tag {str(tag)[:40]!r}")


def _items(value: dict, key: str) -> list:
    items = value.get(key)
    if not isinstance(items, list):
        raise ChannelError(f"a tagged value without its {key!r} list")
    return items
