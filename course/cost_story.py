"""Lesson 04, part 1: what a large document costs, told with figures that are MongoDB's own.

Two halves, each measured where it is real:

* **the client's half** (:func:`client_costs`): the bytes a reply carries (the
  document's BSON size, exact on every backend: a server adds only its reply
  envelope) and pymongo's own time to decode the whole document against a
  one-field projection of it;
* **the server's half** (:mod:`course.storage_costs`): WiredTiger, MongoDB's
  storage engine, storing the orders as MongoDB stores documents: bytes written
  at the checkpoint after a 4-byte change, bytes a cold one-field read brings
  into the cache, whether a neighbour shares the page.

An embedded engine's own latencies are shown only labelled as that engine's
(:func:`engine_timings`), never as what MongoDB costs, and no claim is judged
on them.  On a real server (``MONGODB_URI``) :func:`course.measure.run_lab`
measures the server itself, as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import bson

from course.measure import FULL_SIZES, SEED_FIGURES, SEED_SERVER_ONLY, median_ms, order_with_events
from course.storage_costs import StorageFigures

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


def engine_timings(collection: Any, engine: str, sizes: dict[str, int] = ENGINE_SIZES,
                   runs: int = 5) -> list[EngineTiming]:
    """Time find_one, a projection and an ``$inc`` on ``collection`` (emptied first) with small orders."""
    collection.delete_many({})
    rows = []
    for order_id, (label, events) in enumerate(sizes.items(), start=1):
        collection.insert_one(order_with_events(order_id, events))
        query = {"_id": order_id}
        rows.append(EngineTiming(
            label, engine, median_ms(lambda: collection.find_one(query), runs),
            median_ms(lambda: collection.find_one(query, {"status": 1}), runs),
            median_ms(lambda: collection.update_one(query, {"$inc": {"views": 1}}), runs), runs))
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
    lines = ["| size | reply bytes | projected reply bytes | decode whole, ms | decode projection, ms "
             "| seed server's reply bytes |", "|---|---|---|---|---|---|"]
    seed = dict(zip(FULL_SIZES, SEED_FIGURES["reply_bytes"]))
    for row in rows:
        lines.append(f"| {row.label} | {row.reply_bytes:,} | {row.projected_bytes:,} | {row.decode_ms:.3f} "
                     f"| {row.projected_decode_ms:.4f} | {f'{seed[row.label]:,}' if row.label in seed else '-'} |")
    return "\n".join(lines)


def storage_table(rows: list[StorageFigures]) -> str:
    """Markdown: WiredTiger's figures per size, beside the seed's MongoDB 8 server figures."""
    lines = ["| size | document bytes | written at the checkpoint after a 4-byte change "
             "| read into the cache for one field (cold) | held in the cache | the next document adds |",
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


def engine_table(rows: list[EngineTiming]) -> str:
    """Markdown: an embedded engine's own latencies, labelled so nobody reads them as MongoDB's."""
    if not rows:
        return ""
    engine = rows[0].engine
    lines = [f"| size | {engine} find_one ms | {engine} projection ms | {engine} $inc ms | runs |",
             "|---|---|---|---|---|"]
    lines += [f"| {r.label} | {r.find_ms:.3f} | {r.projection_ms:.3f} | {r.inc_ms:.3f} | {r.runs} |" for r in rows]
    lines.append("")
    lines.append(f"*These are {engine}'s own timings, an in-process engine written in Python: they show how that "
                 "engine behaves, not what MongoDB costs (the seed's MongoDB 8.3.11 server measured "
                 "0.13 ms for an `$inc` at 10 KB and 1.44 ms at 10 MB).*")
    return "\n".join(lines)
