"""Lesson 04, part 1: what a large document costs, told with figures that are MongoDB's own.

Two halves, each measured where it is real:

* **the client's half** (:func:`client_costs`): the bytes a reply carries (the
  document's BSON size, exact on every backend: a server adds only its reply
  envelope) and pymongo's own time to decode the whole document against a
  one-field projection of it;
* **the server's half** (:mod:`course.toolkit.storage_costs`): WiredTiger, MongoDB's
  storage engine, storing the orders as MongoDB stores documents: bytes written
  at the checkpoint after a 4-byte change, bytes a cold one-field read brings
  into the cache, whether a neighbour shares the page.

An embedded engine's own latencies are shown only labelled as that engine's
(:func:`engine_timings`), never as what MongoDB costs, and no claim is judged
on them.  On a real server (``MONGODB_URI``) :func:`course.toolkit.measure.run_lab`
measures the server itself, as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import bson

from course.toolkit.measure import FULL_SIZES, SEED_FIGURES, SEED_SERVER_ONLY, median_ms, order_with_events
from course.toolkit.storage_costs import StorageFigures

#: Sizes an embedded engine's own timings use: small, so the lab stays quick (they teach nothing about MongoDB).
ENGINE_SIZES = {"10 KB": 70, "100 KB": 700}
#: CI's smaller storage run (COURSE_MEASURE_SIZE=ci): the same shape, a 2 MB largest document.
CI_SIZES = {"10 KB": 70, "500 KB": 3_500, "2 MB": 14_000}
SIZE_VARIABLE = "COURSE_MEASURE_SIZE"


def storage_sizes(env: dict | None = None) -> dict[str, int]:
    """The sizes the storage figures use: the seed's three (10 KB, 500 KB, 10 MB), or CI's smaller set."""
    env = os.environ if env is None else env
    return dict(CI_SIZES if env.get(SIZE_VARIABLE) == "ci" else FULL_SIZES)


@dataclass(frozen=True)
class ClientCost:
    """The client's half of one size: reply bytes and pymongo's decode time, whole and projected."""

    label: str
    reply_bytes: int
    projected_bytes: int
    decode_ms: float
    projected_decode_ms: float
    runs: int


def client_costs(sizes: dict[str, int]) -> list[ClientCost]:
    """Encode each size's order as a reply would carry it and time pymongo's decoding of it."""
    rows = []
    for order_id, (label, events) in enumerate(sizes.items(), start=1):
        document = order_with_events(order_id, events)
        whole = bson.encode(document)
        projected = bson.encode({"_id": document["_id"], "status": document["status"]})
        runs = 30 if len(whole) < 100_000 else 7 if len(whole) < 1_000_000 else 3
        rows.append(ClientCost(label, len(whole), len(projected), median_ms(lambda: bson.decode(whole), runs),
                               median_ms(lambda: bson.decode(projected), runs), runs))
    return rows


@dataclass(frozen=True)
class EngineTiming:
    """An embedded engine's own median latencies for one size: labelled as that engine's, never MongoDB's."""

    label: str
    engine: str
    find_ms: float
    projection_ms: float
    inc_ms: float
    runs: int
    document_bytes: int = 0


def engine_timings(collection: Any, engine: str, sizes: dict[str, int] = ENGINE_SIZES,
                   runs: int = 15) -> list[EngineTiming]:
    """Time find_one, a projection and an ``$inc`` on ``collection`` (emptied first) with small orders."""
    collection.delete_many({})
    rows = []
    for order_id, (label, events) in enumerate(sizes.items(), start=1):
        document = order_with_events(order_id, events)
        collection.insert_one(document)
        query = {"_id": order_id}
        rows.append(EngineTiming(
            label, engine, median_ms(lambda: collection.find_one(query), runs, warmup=3),
            median_ms(lambda: collection.find_one(query, {"status": 1}), runs, warmup=3),
            median_ms(lambda: collection.update_one(query, {"$inc": {"views": 1}}), runs), runs,
            len(bson.encode(document))))
    collection.delete_many({})
    return rows


@dataclass(frozen=True)
class Claim:
    """One statement of the lesson, the component that measured it, and whether it held."""

    text: str
    holds: bool
    measured: str
    source: str

    def __str__(self) -> str:
        return f"{'✓' if self.holds else '✗'} {self.text} ({self.source}: {self.measured})"


def claims(client: list[ClientCost], storage: list[StorageFigures] | None) -> list[Claim]:
    """The lesson's claims, each judged on MongoDB's own components (pymongo's BSON, WiredTiger)."""
    small, large = client[0], client[-1]
    found = [
        Claim("a reply carries the whole document: its bytes grow with the document",
              large.reply_bytes >= 100 * small.reply_bytes,
              f"{small.reply_bytes:,} -> {large.reply_bytes:,} bytes", "BSON sizes, exact"),
        Claim("a projection of one field replies with under 200 bytes at every size",
              all(r.projected_bytes < 200 for r in client),
              ", ".join(f"{r.projected_bytes}" for r in client) + " bytes", "BSON sizes, exact"),
        Claim("decoding the largest document costs the client at least 20x the smallest",
              large.decode_ms >= 20 * small.decode_ms, f"{large.decode_ms / small.decode_ms:.0f}x",
              "pymongo's bson.decode"),
        Claim("decoding a projection of the largest document costs a tiny fraction of decoding it whole",
              large.projected_decode_ms * 100 <= large.decode_ms,
              f"{large.projected_decode_ms:.4f} vs {large.decode_ms:.2f} ms", "pymongo's bson.decode"),
    ]
    if storage:
        big, little = storage[-1], storage[0]
        found += [
            Claim("a 4-byte change to the largest document rewrites all of it at the next checkpoint",
                  big.checkpoint_bytes >= 0.9 * big.document_bytes,
                  f"{big.checkpoint_bytes:,} bytes written for a {big.document_bytes:,}-byte document",
                  "WiredTiger"),
            Claim("a small document shares its page: its neighbour is already in the cache",
                  little.neighbour_shares_page,
                  f"next document added {little.neighbour_cache_bytes:,} bytes to the cache", "WiredTiger"),
            Claim("one field of a cold large document brings the whole document into the cache",
                  big.cold_read_bytes >= 0.95 * big.document_bytes,
                  f"{big.cold_read_bytes:,} bytes read in for one field", "WiredTiger"),
        ]
    return found


def client_table(rows: list[ClientCost]) -> str:
    """Markdown: reply bytes and decode times here, beside the seed server's reply bytes."""
    lines = ["| size | reply, bytes | projected reply, bytes | pymongo decode whole, ms (here) "
             "| pymongo decode projection, ms (here) | seed server's reply, bytes |", "|---|---|---|---|---|---|"]
    seed = dict(zip(FULL_SIZES, SEED_FIGURES["reply_bytes"]))
    for row in rows:
        lines.append(f"| {row.label} | {row.reply_bytes:,} | {row.projected_bytes:,} | {row.decode_ms:.3f} "
                     f"| {row.projected_decode_ms:.4f} | {f'{seed[row.label]:,}' if row.label in seed else '-'} |")
    return "\n".join(lines)


def storage_table(rows: list[StorageFigures]) -> str:
    """Markdown: WiredTiger's figures per size, beside the seed's MongoDB 8 server figures."""
    lines = ["| size | document, bytes | written from the cache at the next checkpoint after a 4-byte change, "
             "bytes (uncompressed) | read into the cache for one field (cold), bytes | held in the cache, bytes "
             "| the next document adds, bytes |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row.label} (WiredTiger here) | {row.document_bytes:,} | {row.checkpoint_bytes:,} "
                     f"| {row.cold_read_bytes:,} | {row.cold_cache_bytes:,} | {row.neighbour_cache_bytes:,} |")
    lines.append("| 10.8 KB (MongoDB 8.3.11, seed) | 10,916 | 108,294 | 108,230 | 117,087 | 0 |")
    lines.append("| 10.9 MB (MongoDB 8.3.11, seed) | 10,920,281 | 10,920,698 | 10,919,983 | 11,793,703 | - |")
    return "\n".join(lines)


def seed_storage_note() -> str:
    """Markdown for a lab without WiredTiger: the seed's server figures, labelled as such."""
    lines = ["WiredTiger is not installed here, so these are the seed's figures, **measured on a real "
             "MongoDB 8.3.11 server** (not here):", ""]
    lines += [f"- {what}: {value:,}" for what, value in SEED_SERVER_ONLY.items()]
    return "\n".join(lines)


def engine_note(row: EngineTiming) -> str:
    """What one size's timings say, and only what they say: a projection faster, or no faster within noise."""
    if row.projection_ms < 0.8 * row.find_ms:
        return (f"at {row.label} {row.engine}'s projection took {row.projection_ms:.3f} ms against "
                f"{row.find_ms:.3f} ms for the whole document")
    return (f"at {row.label} {row.engine} measured no gain from the projection ({row.projection_ms:.3f} against "
            f"{row.find_ms:.3f} ms): at this size the difference is within its timing noise")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def engine_table(rows: list[EngineTiming]) -> str:
    """Markdown: an embedded engine's own latencies, labelled so nobody reads them as MongoDB's."""
    if not rows:
        return ""
    engine = rows[0].engine
    seed = {label: i for i, label in enumerate(FULL_SIZES)}
    lines = [f"| size | document, bytes | {engine} find_one, ms | {engine} projection of one field, ms "
             f"| {engine} $inc, ms | runs (median of) |", "|---|---|---|---|---|---|"]
    lines += [f"| {r.label} ({engine}) | {r.document_bytes:,} | {r.find_ms:.3f} | {r.projection_ms:.3f} "
              f"| {r.inc_ms:.3f} | {r.runs} |" for r in rows]
    for r in rows:  # the seed's server at the same sizes only (it measured 10 KB, 500 KB and 10 MB)
        if r.label in seed:
            i = seed[r.label]
            lines.append(f"| {r.label} (MongoDB 8.3.11 server, seed) | {SEED_FIGURES['reply_bytes'][i]:,} "
                         f"| {SEED_FIGURES['full_ms'][i]:.3f} | {SEED_FIGURES['projection_ms'][i]:.3f} "
                         f"| {SEED_FIGURES['inc_ms'][i]:.3f} | - |")
    lines.append("")
    lines.append(f"*These are {engine}'s own timings, an in-process engine written in Python: they show how that "
                 "engine behaves, not what MongoDB costs; the seed's server rows are there for comparison at the "
                 "same size (it measured no 100 KB document). " + _sentence("; ".join(engine_note(r) for r in rows)) + "*")
    return "\n".join(lines)


def _series(storage: list[StorageFigures] | None, client: list[ClientCost]):
    """(source, rows) for the cost plot: WiredTiger here when measured, else the seed's server figures."""
    if storage:
        return "WiredTiger here", [(r.document_bytes, r.cold_read_bytes, r.checkpoint_bytes) for r in storage]
    return "MongoDB 8.3.11 server, seed", [(10_916, 108_230, 108_294), (10_920_281, 10_919_983, 10_920_698)]


def cost_plot(client: list[ClientCost], storage: list[StorageFigures] | None):
    """A log-log matplotlib figure: document size against the bytes a read and a 4-byte update cost."""
    import matplotlib.pyplot as plt

    source, server = _series(storage, client)
    fig, (read, update) = plt.subplots(1, 2, figsize=(12, 4.8), sharex=True, sharey=True)
    sizes = [r.reply_bytes for r in client]
    read.plot(sizes, sizes, marker="o", label="full read: reply bytes\n(BSON, exact)")
    read.plot(sizes, [r.projected_bytes for r in client], marker="o",
              label="projection of one field: reply bytes\n(BSON, exact)")
    read.plot([s[0] for s in server], [s[1] for s in server], marker="s", linestyle="--",
              label=f"one field of a cold document:\nbytes read into the cache ({source})")
    read.set_title("a read: what it carries,\nand what it brings into the cache", fontsize=10)
    update.plot(sizes, [4] * len(sizes), marker="o", label="bytes the $inc changes\n(an int32)")
    update.plot([s[0] for s in server], [s[2] for s in server], marker="s", linestyle="--",
                label=f"bytes written from the cache at the\nnext checkpoint ({source}, uncompressed)")
    update.set_title("a 4-byte update: what it changes,\nand what the next checkpoint writes", fontsize=10)
    for axis in (read, update):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("document size, bytes (log scale)")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8, loc="center right")
    read.set_ylabel("bytes (log scale)")
    fig.tight_layout()
    return fig
