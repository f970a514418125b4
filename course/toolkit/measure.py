"""Lesson 04's measurement lab: the orders it builds, and what a large document costs on a real server.

The documents (:func:`order_with_events`) are shared by every backend.  The
timings here (:func:`run_lab`) are a MongoDB server's, run when the learner
set ``MONGODB_URI``; on an embedded engine the lesson tells the cost story
with MongoDB's own components instead (:mod:`course.toolkit.cost_story`).

Orders carry an ``events`` array of ~153-byte elements.  Three sizes are built
(about 10 KB, 500 KB and, at full size, 10 MB of BSON) and four operations are
timed on each: a full ``find_one``, the same fetch without decoding (raw BSON,
where the backend can return it), a projection of one small field, and an
``$inc`` of a counter.  Decoding (``bson.decode`` of the document's bytes) and
the bytes a reply carries are measured separately.

Every figure is a median of repeated runs after a warm-up.  Nothing here is
deterministic except the documents and their byte counts.
"""

from __future__ import annotations

import datetime
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import bson

#: Event types, cycled through by sequence number.
EVENT_TYPES = ("CREATED", "PAID", "PICKED", "PACKED", "SHIPPED")
ORDER_CREATED = datetime.datetime(2026, 10, 1, 8, 0, 0)

#: Elements per size, as the real-server lab used them (70 / 3,500 / 70,000 events).
FULL_SIZES = {"10 KB": 70, "500 KB": 3_500, "10 MB": 70_000}

#: The real-server lab (MongoDB 8.3.11, mongosh 2.12.0, round 2), keyed like FULL_SIZES.
SEED_FIGURES = {
    "full_ms": (0.151, 2.146, 50.713),
    "raw_ms": (0.104, 0.273, 3.801),
    "projection_ms": (0.100, 0.157, 0.482),
    "inc_ms": (0.127, 0.181, 1.442),
    "reply_bytes": (10_916, 542_189, 10_920_281),
    "projected_bytes": (137, 138, 137),
}
#: What the real-server lab measured that an embedded engine cannot show.
SEED_SERVER_ONLY = {
    "cache bytes for one 10.9 MB document": 11_793_715,
    "bytes read into cache by a projection of that document (cold)": 10_919_983,
    "bytes written at the next checkpoint after one $inc (10.9 MB document)": 10_920_698,
    "bytes written at the next checkpoint after one $inc (10.8 KB document)": 108_294,
    "cold projection of the 10.9 MB document, ms": 6.4,
    "cold full (raw) read of the 10.9 MB document, ms": 16.6,
    "decoding share of the 50.7 ms full read in mongosh, ms": 47,
}


# ---- the documents ---------------------------------------------------------------
def event(order_id: int, k: int) -> dict:
    """Event ``k`` of order ``order_id``: fixed-width fields, so every backend builds the same bytes."""
    return {
        "seq": k,
        "at": ORDER_CREATED + datetime.timedelta(seconds=k),
        "type": EVENT_TYPES[k % 5],
        "by": f"staff-{100 + (k * 37 + order_id) % 900}",
        "note": f"Handling note for the order, parcel code {1_000_000 + (k * 7919 + order_id * 104729) % 1_000_000}"
                ", Thu Duc warehouse, shelf B",
    }


def order_head(order_id: int) -> dict:
    """An order without its events: the small fields every listing reads."""
    return {"_id": order_id, "tenantId": f"t{order_id % 5}", "status": "SHIPPED", "views": 0,
            "total": 550_000, "createdAt": ORDER_CREATED}


def order_with_events(order_id: int, n_events: int) -> dict:
    """A whole order built in Python, ``n_events`` events included."""
    return {**order_head(order_id), "events": [event(order_id, k) for k in range(n_events)]}


def events_pipeline(n_events: int) -> list[dict]:
    """The update pipeline that builds the same ``events`` array on the server (no client-side array)."""
    def digits(expr: Any, base: int) -> dict:
        return {"$toString": {"$add": [base, expr]}}

    k, oid = "$$k", "$_id"
    return [{"$set": {"events": {"$map": {
        "input": {"$range": [0, n_events]}, "as": "k",
        "in": {
            "seq": k,
            "at": {"$dateAdd": {"startDate": "$createdAt", "unit": "second", "amount": k}},
            "type": {"$arrayElemAt": [list(EVENT_TYPES), {"$mod": [k, 5]}]},
            "by": {"$concat": ["staff-", digits({"$mod": [{"$add": [{"$multiply": [k, 37]}, oid]}, 900]}, 100)]},
            "note": {"$concat": [
                "Handling note for the order, parcel code ",
                digits({"$mod": [{"$add": [{"$multiply": [k, 7919]}, {"$multiply": [oid, 104729]}]}, 1_000_000]},
                       1_000_000),
                ", Thu Duc warehouse, shelf B"]},
        }}}}}]


@dataclass
class Built:
    """One built order: its size label, id, element count, BSON bytes and how long the build took."""

    label: str
    order_id: int
    events: int
    bytes: int
    seconds: float
    method: str


def build_orders(collection: Any, sizes: dict[str, int], *, pipeline: bool) -> list[Built]:
    """Insert one order per size into ``collection`` (emptied first); return what was built.

    ``pipeline=True`` inserts the small head and grows ``events`` server-side with
    :func:`events_pipeline`; otherwise the whole document is built in Python and inserted.
    """
    collection.delete_many({})
    built = []
    for order_id, (label, n) in enumerate(sizes.items(), start=1):
        started = time.perf_counter()
        if pipeline:
            collection.insert_one(order_head(order_id))
            collection.update_one({"_id": order_id}, events_pipeline(n))
            method = "update pipeline on the server"
        else:
            collection.insert_one(order_with_events(order_id, n))
            method = "built in Python, one insert_one"
        seconds = time.perf_counter() - started
        size = len(bson.encode(collection.find_one({"_id": order_id})))
        built.append(Built(label, order_id, n, size, seconds, method))
    return built


# ---- the measurements ------------------------------------------------------------
def median_ms(operation: Callable[[], Any], runs: int, warmup: int = 1) -> float:
    """Median wall time of ``operation`` in milliseconds, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        operation()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        operation()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def raw_collection(collection: Any) -> Any | None:
    """``collection`` returning undecoded ``RawBSONDocument`` replies, or None when the backend cannot."""
    from bson.codec_options import CodecOptions
    from bson.raw_bson import RawBSONDocument

    try:
        raw = collection.with_options(codec_options=CodecOptions(document_class=RawBSONDocument))
        reply = raw.find_one({})
    except (TypeError, NotImplementedError, AttributeError):
        return None
    return raw if isinstance(reply, RawBSONDocument) else None


@dataclass
class Row:
    """The measured figures of one size."""

    label: str
    bytes: int
    full_ms: float
    raw_ms: float | None
    projection_ms: float
    inc_ms: float
    decode_ms: float
    reply_bytes: int
    projected_bytes: int
    runs: int


def runs_for(n_bytes: int, backend_name: str) -> int:
    """How many timed runs a size gets: many for small documents, few for large ones on embedded engines."""
    if backend_name == "server":
        return 400 if n_bytes < 100_000 else 200 if n_bytes < 2_000_000 else 40
    return 30 if n_bytes < 100_000 else 5 if n_bytes < 1_000_000 else 3


def measure(collection: Any, built: list[Built], backend_name: str,
            runs: Callable[[int, str], int] = runs_for) -> list[Row]:
    """Time the four operations and the decoding on every built order; return one Row per size."""
    raw = raw_collection(collection)
    rows = []
    for order in built:
        query = {"_id": order.order_id}
        n = runs(order.bytes, backend_name)
        full_ms = median_ms(lambda: collection.find_one(query), n)
        raw_ms = median_ms(lambda: raw.find_one(query), n) if raw is not None else None
        projection_ms = median_ms(lambda: collection.find_one(query, {"status": 1}), n)
        inc_ms = median_ms(lambda: collection.update_one(query, {"$inc": {"views": 1}}), n)
        reply = collection.find_one(query)
        encoded = bson.encode(reply)
        decode_ms = median_ms(lambda: bson.decode(encoded), n)
        projected = collection.find_one(query, {"status": 1})
        rows.append(Row(order.label, order.bytes, full_ms, raw_ms, projection_ms, inc_ms, decode_ms,
                        len(encoded), len(bson.encode(projected)), n))
    return rows


# ---- reading the results ---------------------------------------------------------
def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def table(rows: list[Row]) -> str:
    """A Markdown table of the measured figures beside the real-server ones (matched by position)."""
    lines = ["| size | full find_one ms | raw fetch ms | decode ms | projection ms | $inc ms | reply bytes "
             "| projected bytes | runs |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row.label} (here) | {_ms(row.full_ms)} | {_ms(row.raw_ms)} | {_ms(row.decode_ms)} "
                     f"| {_ms(row.projection_ms)} | {_ms(row.inc_ms)} | {row.reply_bytes:,} "
                     f"| {row.projected_bytes:,} | {row.runs} |")
    for i, label in enumerate(FULL_SIZES):
        s = SEED_FIGURES
        lines.append(f"| {label} (real server, MongoDB 8.3.11) | {s['full_ms'][i]:.3f} | {s['raw_ms'][i]:.3f} "
                     f"| ~{s['full_ms'][i] - s['raw_ms'][i]:.3f} (full - raw) | {s['projection_ms'][i]:.3f} "
                     f"| {s['inc_ms'][i]:.3f} | {s['reply_bytes'][i]:,} | {s['projected_bytes'][i]:,} | "
                     f"{(400, 200, 40)[i]} |")
    return "\n".join(lines)


@dataclass
class Claim:
    """One statement of the lesson and whether this backend's measurements bear it out."""

    text: str
    holds: bool
    measured: str

    def __str__(self) -> str:
        return f"{'✓' if self.holds else '✗'} {self.text} (measured: {self.measured})"


def claims(rows: list[Row]) -> list[Claim]:
    """The lesson's claims about size and cost, each checked against ``rows`` (smallest first)."""
    small, large = rows[0], rows[-1]
    found = [
        Claim("a full read of the largest document costs at least 20x the smallest",
              large.full_ms >= 20 * small.full_ms, f"{large.full_ms / small.full_ms:.0f}x"),
        Claim("a reply carries the whole document: bytes grow with the document",
              large.reply_bytes >= 100 * small.reply_bytes,
              f"{small.reply_bytes:,} -> {large.reply_bytes:,} bytes"),
        Claim("a projection of one field returns under 200 bytes at every size",
              all(r.projected_bytes < 200 for r in rows),
              ", ".join(f"{r.projected_bytes}" for r in rows) + " bytes"),
        Claim("a projection of the largest document is cheaper than reading it whole",
              large.projection_ms * 2 <= large.full_ms,
              f"{large.projection_ms:.2f} vs {large.full_ms:.2f} ms"),
        Claim("an $inc of one counter costs more on the largest document than on the smallest",
              large.inc_ms >= 5 * small.inc_ms, f"{large.inc_ms / small.inc_ms:.0f}x"),
        Claim("decoding the largest document's BSON costs at least 20x the smallest's",
              large.decode_ms >= 20 * small.decode_ms, f"{large.decode_ms / small.decode_ms:.0f}x"),
    ]
    if large.raw_ms is not None:
        found.append(Claim("decoding is the larger share of a full read of the largest document",
                           large.full_ms - large.raw_ms > large.raw_ms,
                           f"raw fetch {large.raw_ms:.2f} ms, full read {large.full_ms:.2f} ms"))
    else:
        found.append(Claim("decoding is the larger share of this backend's full read of the largest document",
                           large.decode_ms > large.full_ms / 2,
                           f"decode {large.decode_ms:.2f} ms of a {large.full_ms:.2f} ms find_one, "
                           "which decodes no BSON on this in-process backend"))
    return found


def chart(rows: list[Row], backend_name: str):
    """A log-scale matplotlib figure: measured milliseconds per operation beside the real server's."""
    import matplotlib.pyplot as plt

    fig, (here, seed) = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    series = [("full find_one", "full_ms"), ("raw fetch", "raw_ms"), ("projection", "projection_ms"),
              ("$inc", "inc_ms"), ("decode", "decode_ms")]
    for name, attribute in series:
        values = [getattr(r, attribute) for r in rows]
        if all(v is not None for v in values):
            here.plot([r.label for r in rows], values, marker="o", label=name)
    for name, key in series[:4]:
        seed.plot(list(FULL_SIZES), SEED_FIGURES[key], marker="o", label=name)
    here.set_title(f"measured here ({backend_name})")
    seed.set_title("real server, MongoDB 8.3.11 (seed lab)")
    for axis in (here, seed):
        axis.set_yscale("log")
        axis.set_xlabel("document size")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    here.set_ylabel("median ms (log scale)")
    fig.tight_layout()
    return fig


# ---- a real server only ------------------------------------------------------------
def network_bytes_per_read(db: Any, read: Callable[[], Any], times: int = 10) -> float:
    """Bytes the server sent per ``read``: the delta of serverStatus network.bytesOut (real server only)."""
    def bytes_out() -> int:
        return db.client.admin.command("serverStatus")["network"]["bytesOut"]

    baseline_start = bytes_out()
    baseline = bytes_out() - baseline_start  # one serverStatus reply
    start = bytes_out()
    for _ in range(times):
        read()
    return (bytes_out() - start - baseline) / times


def cache_statistics(db: Any, name: str) -> dict[str, int]:
    """A few WiredTiger cache counters of collection ``name`` (real server only)."""
    cache = db.command({"collStats": name}).get("wiredTiger", {}).get("cache", {})
    wanted = ("bytes currently in the cache", "bytes read into cache", "bytes written from cache",
              "tracked dirty bytes in the cache")
    return {k: cache[k] for k in wanted if k in cache}


@dataclass
class LabRun:
    """Everything one run of the lab produced."""

    backend: str
    built: list[Built]
    rows: list[Row]
    seconds: float
    extra: dict = field(default_factory=dict)


def run_lab(collection: Any, backend_name: str, sizes: dict[str, int]) -> LabRun:
    """Build the orders and measure them; server-side builds on a real server, Python builds elsewhere."""
    started = time.perf_counter()
    built = build_orders(collection, sizes, pipeline=backend_name == "server")
    rows = measure(collection, built, backend_name)
    return LabRun(backend_name, built, rows, time.perf_counter() - started)
