"""A model of how MongoDB routes a sharded collection: chunks, shards, inserts and queries.

This is a model of mongos's routing, not a cluster: deterministic, small and inspectable.  What it takes
from MongoDB, as the manual documents it (Sharding > Shard Keys, Chunks, Query Routing):

* a chunk is a contiguous range of shard key values, ``[lower, upper)``, from MinKey to MaxKey;
* a chunk can only be split between two different shard key values, so a chunk whose documents all have
  one key value cannot be split (it becomes a *jumbo* chunk once it is over the chunk size, and the
  balancer cannot move it);
* an insert goes to the chunk whose range holds its key: with a key that only grows (an ObjectId, a
  timestamp), every insert lands in the last chunk, on one shard;
* a query is *targeted* when its filter pins the shard key or a prefix of a compound key (equality,
  ``$in``, or a range on a ranged field), and *broadcast* to every shard otherwise; a hashed field turns
  an equality into one hash value, and a range on it into a broadcast;
* a hashed key is the server's own hash: the first 8 bytes (little-endian) of the MD5 of the BSON
  element's canonical type and value, seed 0 (``BSONElementHasher::hash64`` in ``src/mongo/db/hasher.cpp``),
  so a document falls in the hash range it would on a real cluster.

What is the model's own (labelled "[model]" wherever it is shown): the chunk size is a number of
documents (MongoDB's is 128 MiB of data since 6.0), chunks are cut in key order as soon as they reach that
size, and the balancer's result is contiguous runs of chunks spread evenly over the shards.

One module past 400 lines on purpose: routing, chunk splitting and the balancer share the model's state
(the chunks and their key ranges), and the model is read as one piece against MongoDB's documented rules.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import struct
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from bson import Int64, ObjectId

HASHED = "hashed"
_LONG_MAX, _LONG_MIN = 2**63 - 1, -(2**63)
#: BSON canonical type numbers (``canonicalizeBSONType`` in the server's bsontypes.cpp)
_CANONICAL = {"minkey": -1, "null": 5, "number": 10, "string": 15, "object": 20, "array": 25, "objectid": 35,
              "bool": 40, "date": 45, "maxkey": 127}


class _Bound:
    """MinKey or MaxKey: below or above every value."""

    def __init__(self, name: str, rank: int):
        self.name, self.rank = name, rank

    def __repr__(self) -> str:
        return self.name


MIN_KEY, MAX_KEY = _Bound("MinKey", -1), _Bound("MaxKey", 127)


def _long_for_hash(number: float | int) -> int:
    """``safeNumberLongForHash``: NaN is 0, doubles are truncated toward zero and clamped to a long's range."""
    if isinstance(number, float):
        if math.isnan(number):
            return 0
        if number >= 2.0**63:
            return _LONG_MAX
        if number < -(2.0**63):
            return _LONG_MIN
        return int(number)  # truncates toward zero
    return max(_LONG_MIN, min(_LONG_MAX, int(number)))


def hash64(value: Any) -> int:
    """MongoDB's hash of a shard key value (``BSONElementHasher::hash64``, seed 0), as a signed 64-bit int.

    Supported: int, Int64, float, str, ObjectId, bool, None and datetime (the types the course's data uses).
    """
    md5 = hashlib.md5(struct.pack("<i", 0))  # the seed, an int32, comes first

    def add(canonical: str, payload: bytes) -> None:
        md5.update(struct.pack("<i", _CANONICAL[canonical]))
        md5.update(payload)

    if isinstance(value, bool):
        add("bool", b"\x01" if value else b"\x00")
    elif isinstance(value, (int, Int64, float)):
        add("number", struct.pack("<q", _long_for_hash(value)))
    elif isinstance(value, str):
        raw = value.encode("utf-8") + b"\x00"
        add("string", struct.pack("<i", len(raw)) + raw)
    elif isinstance(value, ObjectId):
        add("objectid", value.binary)
    elif value is None:
        add("null", b"")
    elif isinstance(value, datetime.datetime):
        epoch = datetime.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        millis = (value - epoch) // datetime.timedelta(milliseconds=1)
        add("date", struct.pack("<q", millis))
    else:
        raise TypeError(f"the model hashes ints, longs, doubles, strings, ObjectIds, booleans, null and dates; "
                        f"not {type(value).__name__}")
    return struct.unpack("<q", md5.digest()[:8])[0]


def _order(value: Any) -> tuple:
    """A sort key following BSON's comparison order across the types the model handles."""
    if isinstance(value, _Bound):
        return (value.rank, 0)
    if value is None:
        return (_CANONICAL["null"], 0)
    if isinstance(value, bool):
        return (_CANONICAL["bool"], value)
    if isinstance(value, (int, float, Int64)):
        return (_CANONICAL["number"], value)
    if isinstance(value, str):
        return (_CANONICAL["string"], value)
    if isinstance(value, ObjectId):
        return (_CANONICAL["objectid"], value.binary)
    if isinstance(value, datetime.datetime):
        return (_CANONICAL["date"], value.replace(tzinfo=None))
    raise TypeError(f"the model orders numbers, strings, ObjectIds, booleans, null and dates; not "
                    f"{type(value).__name__}")


def _tuple_order(key: Sequence[Any]) -> tuple:
    return tuple(_order(v) for v in key)


def _get(document: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path; a missing field counts as null (as a shard key does since MongoDB 4.4)."""
    value: Any = document
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


@dataclass(frozen=True)
class ShardKey:
    """A shard key: fields in order, each ranged (1) or hashed ("hashed"); at most one hashed field."""

    fields: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, spec: Any) -> "ShardKey":
        """A shard key from ``{"tenantId": 1, "createdAt": 1}``, a list of pairs, or a field name; a clear
        ValueError for anything MongoDB's shardCollection would refuse."""
        given = spec
        if isinstance(spec, str):
            spec = [(spec, 1)]
        elif isinstance(spec, Mapping):
            spec = list(spec.items())
        if not isinstance(spec, (list, tuple)) or not spec:
            raise ValueError(f"a shard key is a dict such as {{'tenantId': 1, 'createdAt': 1}}; got {given!r:.80}")
        pairs = []
        for pair in spec:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not isinstance(pair[0], str) or not pair[0]:
                raise ValueError(f"each field of a shard key is a name and 1 or 'hashed'; got {pair!r:.60}")
            name, kind = pair
            if kind != HASHED and (isinstance(kind, bool) or kind != 1):
                raise ValueError(f"shard key field {name!r} is {kind!r}: a shard key field is 1 (ranged) or "
                                 "'hashed' (descending fields are not allowed)")
            pairs.append((name, HASHED if kind == HASHED else 1))
        names = [n for n, _ in pairs]
        if len(set(names)) != len(names):
            raise ValueError(f"the shard key names a field twice: {names}")
        if sum(1 for _, k in pairs if k == HASHED) > 1:
            raise ValueError("a shard key has at most one hashed field")
        return cls(tuple(pairs))

    @property
    def names(self) -> tuple[str, ...]:
        """The key's field names, in order."""
        return tuple(n for n, _ in self.fields)

    def value(self, document: Mapping[str, Any]) -> tuple:
        """The document's key: one value per field, the hashed one replaced by its hash."""
        return tuple(hash64(_get(document, n)) if k == HASHED else _get(document, n) for n, k in self.fields)

    def __str__(self) -> str:
        return "{" + ", ".join(f"{n}: {k!r}" if k == HASHED else f"{n}: 1" for n, k in self.fields) + "}"


@dataclass
class Chunk:
    """One chunk: ``[lower, upper)`` in key order, its documents (a count) and its shard."""

    lower: tuple
    upper: tuple
    documents: int
    shard: int = 0
    single_value: bool = False  #: every document in it has the same key: it cannot be split
    inserts: int = 0  #: documents the insert stream added to it

    def holds(self, key: tuple) -> bool:
        """Whether ``key`` falls in this chunk's range."""
        return _tuple_order(self.lower) <= _tuple_order(key) < _tuple_order(self.upper) or \
            (self.upper[0] is MAX_KEY and _tuple_order(self.lower) <= _tuple_order(key))

    def jumbo(self, chunk_docs: int) -> bool:
        """Over the chunk size and impossible to split (MongoDB marks it jumbo; the balancer cannot move it)."""
        return self.single_value and self.documents + self.inserts > chunk_docs


@dataclass
class Cluster:
    """A sharded collection in the model: its key, shards and chunks, and what an insert stream did."""

    key: ShardKey
    shards: int
    chunk_docs: int
    chunks: list[Chunk] = field(default_factory=list)

    def chunk_of(self, key: tuple) -> Chunk:
        """The chunk whose range holds ``key``."""
        for chunk in self.chunks:
            if chunk.holds(key):
                return chunk
        return self.chunks[-1]

    def documents_per_shard(self) -> list[int]:
        """Documents (seeded and inserted) on each shard."""
        counts = [0] * self.shards
        for chunk in self.chunks:
            counts[chunk.shard] += chunk.documents + chunk.inserts
        return counts

    def inserts_per_shard(self) -> list[int]:
        """Documents of the insert stream that landed on each shard."""
        counts = [0] * self.shards
        for chunk in self.chunks:
            counts[chunk.shard] += chunk.inserts
        return counts

    def jumbo_chunks(self) -> list[Chunk]:
        """Chunks over the chunk size that cannot be split."""
        return [c for c in self.chunks if c.jumbo(self.chunk_docs)]

    def insert(self, documents: Iterable[Mapping[str, Any]]) -> list[int]:
        """Route a stream of inserts (chunks do not split meanwhile, as between two balancer rounds); return
        the shard each went to."""
        went = []
        for document in documents:
            chunk = self.chunk_of(self.key.value(document))
            chunk.inserts += 1
            went.append(chunk.shard)
        return went

    def route(self, query: Mapping[str, Any]) -> "Route":
        """Which shards mongos sends ``query`` to, by the documented rules (see :func:`route`)."""
        return route(self, query)

    def table(self) -> str:
        """One line per chunk: range, documents, shard, and whether it is jumbo."""
        lines = [f"shard key {self.key}, {self.shards} shards, chunk size {self.chunk_docs} documents [model]"]
        for number, chunk in enumerate(self.chunks, start=1):
            flag = "  JUMBO: one key value, cannot split" if chunk.jumbo(self.chunk_docs) else ""
            added = f" +{chunk.inserts} inserted" if chunk.inserts else ""
            lines.append(f"  chunk {number:>2} shard {chunk.shard}: {_show(chunk.lower)} .. {_show(chunk.upper)}  "
                         f"{chunk.documents} documents{added}{flag}")
        return "\n".join(lines)


def _show(key: tuple) -> str:
    def one(v: Any) -> str:
        if isinstance(v, datetime.datetime):
            return v.strftime("%Y-%m-%dT%H:%M")
        return repr(v) if not isinstance(v, ObjectId) else f"ObjectId(..{str(v)[-6:]})"

    return "(" + ", ".join(one(v) for v in key) + ")"


def shard(documents: Iterable[Mapping[str, Any]], key: Any, *, shards: int = 3, chunk_docs: int = 100) -> Cluster:
    """Shard ``documents`` on ``key`` in the model: cut chunks in key order, spread them over the shards.

    A chunk is cut once it holds ``chunk_docs`` documents, but only between two different key values: all the
    documents of one value stay in one chunk, however many they are ([model] chunk size in documents).
    """
    shard_key = key if isinstance(key, ShardKey) else ShardKey.of(key)
    if shards < 1 or chunk_docs < 1:
        raise ValueError("a cluster needs at least one shard and a chunk size of at least one document")
    keys = sorted((shard_key.value(d) for d in documents), key=_tuple_order)
    width = len(shard_key.fields)
    groups: list[tuple[tuple, int]] = []  # (key, count), distinct keys in order
    for k in keys:
        if groups and groups[-1][0] == k and _tuple_order(groups[-1][0]) == _tuple_order(k):
            groups[-1] = (k, groups[-1][1] + 1)
        else:
            groups.append((k, 1))
    cuts: list[tuple[tuple, int, bool]] = []  # (first key of the chunk, documents, single value)
    current: list[tuple[tuple, int]] = []
    for group in groups:
        if current and sum(n for _, n in current) + group[1] > chunk_docs:
            cuts.append((current[0][0], sum(n for _, n in current), len(current) == 1))
            current = []
        current.append(group)
    if current:
        cuts.append((current[0][0], sum(n for _, n in current), len(current) == 1))
    low, high = (MIN_KEY,) * width, (MAX_KEY,) * width
    if not cuts:
        cuts = [(low, 0, False)]
    chunks = []
    for number, (first, count, single) in enumerate(cuts):
        lower = low if number == 0 else first
        upper = cuts[number + 1][0] if number + 1 < len(cuts) else high
        chunks.append(Chunk(lower, upper, count, shard=number * shards // len(cuts), single_value=single))
    return Cluster(shard_key, shards, chunk_docs, chunks)


# ---- routing -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Route:
    """Where mongos sends one query: the shards, and whether it is targeted or a broadcast."""

    shards: tuple[int, ...]
    broadcast: bool
    why: str

    @property
    def kind(self) -> str:
        """"targeted" or "broadcast"."""
        return "broadcast" if self.broadcast else "targeted"

    def __str__(self) -> str:
        return f"{self.kind} to shard{'s' if len(self.shards) != 1 else ''} {list(self.shards)}: {self.why}"


_RANGE_OPS = {"$gt", "$gte", "$lt", "$lte"}


def _constraint(condition: Any) -> tuple[str, Any] | None:
    """A filter condition on one field as ("points", values) or ("range", (low, low_inclusive, high,
    high_inclusive)); None when it does not bound the field (``$ne``, ``$regex``, ``$exists``...)."""
    if not isinstance(condition, Mapping) or not condition or not all(str(k).startswith("$") for k in condition):
        return ("points", [condition])  # an equality (a sub-document equality included)
    ops = set(condition)
    if ops == {"$eq"}:
        return ("points", [condition["$eq"]])
    if ops == {"$in"} and isinstance(condition["$in"], (list, tuple)) and condition["$in"]:
        return ("points", list(condition["$in"]))
    if ops <= _RANGE_OPS:
        low = next(((condition[o], o == "$gte") for o in ("$gt", "$gte") if o in condition), (MIN_KEY, True))
        high = next(((condition[o], o == "$lte") for o in ("$lt", "$lte") if o in condition), (MAX_KEY, True))
        return ("range", (low[0], low[1], high[0], high[1]))
    return None


def _field_constraints(query: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
    """The bounding conditions of a filter, by field (top level and ``$and``; an ``$or`` bounds nothing)."""
    found: dict[str, tuple[str, Any]] = {}
    for name, condition in query.items():
        if name == "$and" and isinstance(condition, (list, tuple)):
            for part in condition:
                if isinstance(part, Mapping):
                    found.update(_field_constraints(part))
        elif not str(name).startswith("$"):
            bound = _constraint(condition)
            if bound is not None:
                found[name] = bound
    return found


def route(cluster: Cluster, query: Mapping[str, Any]) -> Route:
    """Which shards mongos sends ``query`` to (MongoDB's rules: the shard key prefix, equality vs range, a
    hashed field turning a range into a broadcast)."""
    every = tuple(range(cluster.shards))
    holding = tuple(sorted({c.shard for c in cluster.chunks}))
    branches = query.get("$or") if isinstance(query, Mapping) else None
    if isinstance(branches, (list, tuple)) and branches and all(isinstance(b, Mapping) for b in branches):
        rest = {k: v for k, v in query.items() if k != "$or"}
        routes = [route(cluster, {"$and": [rest, dict(branch)]}) for branch in branches]
        if any(r.broadcast for r in routes):
            return Route(holding or every, True, "a branch of the $or does not bound the shard key prefix: "
                                                 "mongos asks every shard")
        return Route(tuple(sorted({s for r in routes for s in r.shards})), False,
                     "each branch of the $or bounds the shard key prefix: mongos asks the shards of each branch")
    bounds = _field_constraints(query)
    intervals: list[tuple[tuple, tuple]] = [((), ())]  # per $in combination: lower and upper key prefixes
    used: list[str] = []
    for name, kind in cluster.key.fields:
        bound = bounds.get(name)
        if bound is None:
            break
        if bound[0] == "points":
            values = [hash64(v) if kind == HASHED else v for v in bound[1]]
            intervals = [(lo + (v,), hi + (v,)) for lo, hi in intervals for v in values]
            used.append(name)
            continue
        if kind == HASHED:
            if not used:
                return Route(holding or every, True, f"a range on the hashed field {name} cannot be routed: hashing "
                                                     "scatters neighbouring values, so every shard is asked")
            break
        low, _, high, _ = bound[1]
        intervals = [(lo + (low,), hi + (high,)) for lo, hi in intervals]
        used.append(name)
        break
    if not used:
        first = cluster.key.names[0]
        return Route(holding or every, True, f"the filter does not bound {first}, the first field of the shard key "
                                             f"{cluster.key}: mongos asks every shard")
    width = len(cluster.key.fields)
    hit: set[int] = set()
    for lo, hi in intervals:
        lower = lo + (MIN_KEY,) * (width - len(lo))
        upper = hi + (MAX_KEY,) * (width - len(hi))
        for chunk in cluster.chunks:
            if _tuple_order(chunk.lower) <= _tuple_order(upper) and _tuple_order(lower) < _tuple_order(chunk.upper):
                hit.add(chunk.shard)
    shards = tuple(sorted(hit))
    whole = len(used) == width and all(bounds[n][0] == "points" for n in used)
    how = "equality on the whole shard key" if whole else f"the filter bounds the key prefix {', '.join(used)}"
    return Route(shards, False, f"{how}: only the chunks whose ranges can hold matches are asked")
