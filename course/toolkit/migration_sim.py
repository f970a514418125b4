"""A deterministic simulator of a live migration: application traffic interleaved with a batch job.

The application reads orders by ``_id``, looks orders up by phone number,
writes new orders (the old application version writes version 1, the new one
version 2), adds phone numbers and increments counters.  The migration is a
batch job with the signature learners write in lesson 05::

    migrate(orders, batch_size=50, pause=0.05, sleep=time.sleep, log=print)

The simulator passes its own ``sleep``: every pause between two batches is
when the application runs a few operations.  It can interrupt the job at a
pause (as a deploy or a crash would) and restart it.  Every read is checked
against the truth the simulator keeps in Python; each one that raised, came
back in the wrong shape, or missed an order that exists is recorded as an
:class:`Anomaly`.  Same seed, same data, same operations: same result.

Only logic lives here; :mod:`course.toolkit.migration_view` draws the result.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from course.store.capabilities import Capability
from course.datasets.migration import VERSION_FIELD, phone_of

#: The filter of every document still in version 1.
NOT_MIGRATED = {VERSION_FIELD: {"$exists": False}}
#: Version 1 -> 2 in one atomic update pipeline; an order with no phone gets an empty list.
TO_V2 = [
    {"$set": {
        VERSION_FIELD: 2,
        "customer.phones": {"$cond": [{"$eq": [{"$type": "$customer.phone"}, "missing"]},
                                      [], ["$customer.phone"]]},
    }},
    {"$unset": "customer.phone"},
]
#: The pipeline the naive job uses: no version filter goes with it, so a re-run overwrites phones with [null].
NAIVE_TO_V2 = [{"$set": {VERSION_FIELD: 2, "customer.phones": ["$customer.phone"]}}, {"$unset": "customer.phone"}]


class Interrupted(Exception):
    """The simulator stopped the job at a pause, as a crash or a deploy would."""


def migrate_ids(orders: Any, backend: Any, ids: Iterable[Any]) -> int:
    """Move the given orders to version 2 if they are still version 1; return how many changed.

    Uses the update pipeline where the backend has one.  Elsewhere (mongomock)
    it does the equivalent without a pipeline: read each version 1 order, then
    one conditional ``update_one`` filtered on the version, so it stays idempotent.
    """
    ids = list(ids)
    if backend.supports(Capability.PIPELINE_UPDATES):
        return orders.update_many({"_id": {"$in": ids}, **NOT_MIGRATED}, TO_V2).modified_count
    changed = 0
    for doc in orders.find({"_id": {"$in": ids}, **NOT_MIGRATED}):
        phone = doc.get("customer", {}).get("phone")
        update = {"$set": {VERSION_FIELD: 2, "customer.phones": [] if phone is None else [phone]},
                  "$unset": {"customer.phone": ""}}
        changed += orders.update_one({"_id": doc["_id"], **NOT_MIGRATED}, update).modified_count
    return changed


def careful_batches(backend: Any) -> Callable[..., int]:
    """The simulator's idempotent batch job: select version 1 ids, migrate them, pause, repeat."""

    def migrate(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        moved = 0
        while True:
            ids = [d["_id"] for d in orders.find(NOT_MIGRATED, {"_id": 1}).sort("_id", 1).limit(batch_size)]
            if not ids:
                return moved
            moved += migrate_ids(orders, backend, ids)
            log(f"batch of {len(ids)}: {moved} migrated so far")
            if sleep is not None:
                sleep(pause)

    return migrate


def naive_batches(backend: Any) -> Callable[..., int]:
    """A job that walks every order by position and rewrites it without a version filter (wrong)."""

    def migrate(orders, batch_size=50, pause=0.05, sleep=None, log=print):
        ids = [d["_id"] for d in orders.find({}, {"_id": 1}).sort("_id", 1)]
        for start in range(0, len(ids), batch_size):
            chunk = ids[start:start + batch_size]
            if backend.supports(Capability.PIPELINE_UPDATES):
                orders.update_many({"_id": {"$in": chunk}}, NAIVE_TO_V2)
            else:  # the same mistake without a pipeline
                for doc in orders.find({"_id": {"$in": chunk}}):
                    update = {"$set": {VERSION_FIELD: 2, "customer.phones": [doc["customer"].get("phone")]},
                              "$unset": {"customer.phone": ""}}
                    orders.update_one({"_id": doc["_id"]}, update)
            log(f"rows {start}-{start + len(chunk) - 1} rewritten")
            if sleep is not None:
                sleep(pause)
        return len(ids)

    return migrate


def v2_only_reader(orders: Any, order_id: Any) -> dict | None:
    """A reader written for version 2 only: returns the stored document as it is (wrong during a migration)."""
    return orders.find_one({"_id": order_id})


def new_field_lookup(orders: Any, phone: str) -> list[dict]:
    """A phone lookup on the new field only (wrong during a migration: it misses version 1 orders)."""
    return list(orders.find({"customer.phones": phone}))


# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Anomaly:
    """One read that went wrong."""

    pause: int
    operation: str
    kind: str  #: "failed", "wrong shape", "wrong data" or "missed"
    detail: str

    def __str__(self) -> str:
        return f"pause {self.pause}: {self.operation}: {self.kind}: {self.detail}"


@dataclass(frozen=True)
class Snapshot:
    """The collection and the anomaly count after one pause of the job."""

    pause: int
    v1: int
    v2: int
    anomalies: int
    event: str = ""


@dataclass
class SimulationResult:
    """Everything one run recorded, in order."""

    label: str
    snapshots: list[Snapshot] = field(default_factory=list)
    anomalies: list[Anomaly] = field(default_factory=list)
    operations: Counter = field(default_factory=Counter)
    log: list[str] = field(default_factory=list)

    def kinds(self) -> dict[str, int]:
        """Anomalies counted by kind."""
        return dict(sorted(Counter(a.kind for a in self.anomalies).items()))

    def summary(self) -> str:
        """One line: operations run, the final counts and the anomalies by kind."""
        last = self.snapshots[-1]
        kinds = ", ".join(f"{n} {k}" for k, n in self.kinds().items()) or "none"
        return (f"{self.label}: {sum(self.operations.values())} application operations, "
                f"{len(self.snapshots) - 2} pauses; at the end v1={last.v1} v2={last.v2}; anomalies: {kinds}")

    def table(self) -> str:
        """A fixed-width table of every snapshot."""
        lines = [f"{'pause':>5}  {'v1':>4}  {'v2':>4}  {'anomalies':>9}  event"]
        lines += [f"{s.pause:>5}  {s.v1:>4}  {s.v2:>4}  {s.anomalies:>9}  {s.event}".rstrip() for s in self.snapshots]
        return "\n".join(lines)


class _Run:
    """The state of one simulation (private: use :func:`simulate`)."""

    def __init__(self, orders, backend, reader, lookup, seed, ops_per_pause, old_app_pauses, label):
        self.orders, self.backend = orders, backend
        self.reader, self.lookup = reader, lookup
        self.rng = random.Random(seed)
        self.ops_per_pause, self.old_app_pauses = ops_per_pause, old_app_pauses
        self.result = SimulationResult(label)
        self.pause = 0
        self.truth: dict[Any, list[str]] = {}
        for doc in orders.find({}, {"customer": 1}).sort("_id", 1):
            customer = doc.get("customer", {})
            phones = customer.get("phones")
            if phones is None:
                phones = [customer["phone"]] if "phone" in customer else []
            self.truth[doc["_id"]] = list(phones)
        self.next_id = max(self.truth, default=0) + 1

    # ---- bookkeeping ----
    def snapshot(self, event: str = "") -> None:
        v1 = self.orders.count_documents(NOT_MIGRATED)
        v2 = self.orders.count_documents({VERSION_FIELD: 2})
        self.result.snapshots.append(Snapshot(self.pause, v1, v2, len(self.result.anomalies), event))

    def anomaly(self, operation: str, kind: str, detail: str) -> None:
        self.result.anomalies.append(Anomaly(self.pause, operation, kind, detail))

    # ---- application operations ----
    def traffic(self, operations: int) -> None:
        for _ in range(operations):
            roll = self.rng.random()
            old_app_running = self.pause < self.old_app_pauses
            if roll < 0.35:
                self.read(self.rng.choice(sorted(self.truth)))
            elif roll < 0.65:
                phones = sorted({p for ps in self.truth.values() for p in ps})
                self.find(self.rng.choice(phones))
            elif roll < 0.75:
                self.insert(version=1 if old_app_running else 2)
            elif roll < 0.82:
                self.insert(version=2)
            elif roll < 0.90:
                self.add_phone(self.rng.choice(sorted(self.truth)))
            else:
                order_id = self.rng.choice(sorted(self.truth))
                self.result.operations["increment views"] += 1
                self.orders.update_one({"_id": order_id}, {"$inc": {"views": 1}})

    def read(self, order_id: Any) -> None:
        self.result.operations["read by _id"] += 1
        operation = f"read order {order_id}"
        try:
            doc = self.reader(self.orders, order_id)
        except Exception as error:
            return self.anomaly(operation, "failed", f"{type(error).__name__}: {error}"[:120])
        if doc is None:
            return self.anomaly(operation, "missed", "the order exists but the reader returned None")
        phones = doc.get("customer", {}).get("phones") if isinstance(doc, dict) else None
        if not isinstance(phones, list):
            return self.anomaly(operation, "wrong shape", "no customer.phones list in what the reader returned")
        if phones != self.truth[order_id]:
            self.anomaly(operation, "wrong data", f"phones {phones!r}, expected {self.truth[order_id]!r}")

    def find(self, phone: str) -> None:
        self.result.operations["lookup by phone"] += 1
        operation = f"lookup {phone}"
        expected = {i for i, phones in self.truth.items() if phone in phones}
        try:
            found = list(self.lookup(self.orders, phone))
        except Exception as error:
            return self.anomaly(operation, "failed", f"{type(error).__name__}: {error}"[:120])
        if not all(isinstance(d, dict) and isinstance(d.get("customer", {}).get("phones"), list) for d in found):
            return self.anomaly(operation, "wrong shape", "an order without a customer.phones list")
        ids = {d.get("_id") for d in found}
        if expected - ids:
            return self.anomaly(operation, "missed", f"{len(expected - ids)} of {len(expected)} orders not found")
        if ids - expected:
            self.anomaly(operation, "wrong data", f"{len(ids - expected)} orders without that phone")

    def insert(self, version: int) -> None:
        order_id, customer_id = self.next_id, self.rng.randint(1, 60)
        self.next_id += 1
        customer: dict[str, Any] = {"_id": customer_id, "name": f"Customer {customer_id}"}
        doc: dict[str, Any] = {"_id": order_id, "tenantId": f"t{customer_id % 5}"}
        if version == 1:
            customer["phone"] = phone_of(customer_id)
            self.result.operations["new order, old app (v1)"] += 1
        else:
            doc[VERSION_FIELD] = 2
            customer["phones"] = [phone_of(customer_id)]
            self.result.operations["new order, new app (v2)"] += 1
        doc.update(customer=customer, total_pence=self.rng.randrange(500, 90_000, 5), views=0)
        self.orders.insert_one(doc)
        self.truth[order_id] = [phone_of(customer_id)]

    def add_phone(self, order_id: Any) -> None:
        """The new application adds a phone: it migrates the order on write, then pushes."""
        self.result.operations["add a phone (new app)"] += 1
        phone = phone_of(1000 + self.next_id + len(self.result.snapshots))
        migrate_ids(self.orders, self.backend, [order_id])
        self.orders.update_one({"_id": order_id, VERSION_FIELD: 2}, {"$push": {"customer.phones": phone}})
        self.truth[order_id] = self.truth[order_id] + [phone]

    # ---- the job's pauses ----
    def sleep_factory(self, interrupt_at: int | None) -> Callable[[float], None]:
        def sleep(_seconds: float = 0.0) -> None:
            self.pause += 1
            self.traffic(self.ops_per_pause)
            stop = interrupt_at is not None and self.pause == interrupt_at
            self.snapshot("job interrupted" if stop else "")
            if stop:
                raise Interrupted(f"stopped at pause {self.pause}")

        return sleep


def simulate(orders: Any, backend: Any, *, reader: Callable, lookup: Callable, migration: Callable,
             seed: int = 1, batch_size: int = 25, ops_per_pause: int = 8, interrupt_at: int | None = 3,
             old_app_pauses: int = 4, final_operations: int = 24, label: str = "run") -> SimulationResult:
    """Run ``migration`` on ``orders`` while the application works; return what happened.

    The job is interrupted at pause ``interrupt_at`` (None: never) and
    restarted once.  The old application writes version 1 orders during the
    first ``old_app_pauses`` pauses.  After the job, ``final_operations`` more
    operations run.  An error raised by the job itself ends the job and is
    recorded as an event.
    """
    run = _Run(orders, backend, reader, lookup, seed, ops_per_pause, old_app_pauses, label)
    run.snapshot("start")
    log = run.result.log.append
    attempts = [interrupt_at, None]
    for attempt, stop_at in enumerate(attempts):
        try:
            migration(orders, batch_size=batch_size, pause=0.01, sleep=run.sleep_factory(stop_at), log=log)
        except Interrupted:
            log(f"job interrupted at pause {run.pause}; restarting it")
            continue
        except Exception as error:
            log(f"job failed: {type(error).__name__}: {error}"[:160])
            run.snapshot("job failed")
        break
    run.snapshot("job finished")
    run.traffic(final_operations)
    run.snapshot("end")
    return run.result
