"""Benchmark: ``course audit`` of a 100,000-document collection on the embedded default, with the default sample.

Not a timed test (seeding 100,000 documents into an embedded engine takes a
minute): run it by hand and copy the figure into the issue note.

    python tests/benchmarks/audit_100k.py                 # mongoeco (the default), 100,000 documents
    python tests/benchmarks/audit_100k.py --backend mongomock --documents 20000

The collection is lesson 06's kind of data: customers with a short embedded
order list, a schema version (two alive), a counter, two indexes one of which
is a prefix of the other.  Only the audit is timed.  Exit status 1 when it
took longer than ``--limit`` seconds (default 10).
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

DATABASE = "course_audit_benchmark"
NOW = datetime.datetime(2026, 10, 1)


def documents(n: int, seed: int = 6):
    """``n`` seeded customer documents."""
    rng = random.Random(seed)
    for customer_id in range(1, n + 1):
        yield {"_id": customer_id, "schema_version": 1 + (customer_id % 3 == 0), "name": f"Customer {customer_id}",
               "email": f"customer{customer_id}@example.com",
               "since": NOW - datetime.timedelta(days=rng.randint(1, 3000)), "visits": rng.randint(0, 5000),
               "recent_orders": [{"order_no": k, "total_pence": rng.randrange(299, 9999)}
                                 for k in range(rng.randint(0, 5))]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("mongoeco", "mongomock"), default=None,
                        help="embedded backend (default: the course's default, mongoeco)")
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--limit", type=float, default=10.0, help="seconds the audit may take (default 10)")
    args = parser.parse_args(argv)
    if args.backend:
        os.environ["COURSE_BACKEND"] = args.backend
    os.environ.pop("MONGODB_URI", None)

    from course.audit import DEFAULT_SAMPLE, audit
    from course.store.backends import open_backend

    backend = open_backend()
    client = backend.client
    client.drop_database(DATABASE)
    db = client[DATABASE]
    started = time.perf_counter()
    batch = []
    for document in documents(args.documents):
        batch.append(document)
        if len(batch) == 1000:
            db.customers.insert_many(batch)
            batch = []
    if batch:
        db.customers.insert_many(batch)
    db.customers.create_index([("email", 1)])
    db.customers.create_index([("email", 1), ("since", -1)])
    seeded = time.perf_counter() - started

    started = time.perf_counter()
    report = audit(db, backend=backend)
    seconds = time.perf_counter() - started
    client.drop_database(DATABASE)

    (examined,) = report.examined
    print(f"backend: {backend.description}")
    print(f"seeded {args.documents:,} documents in {seeded:.1f} s")
    print(f"audit of {examined.documents:,} documents, default sample {DEFAULT_SAMPLE:,} "
          f"({examined.examined:,} examined, {examined.method}): {seconds:.2f} s (limit {args.limit:g} s)")
    print(f"findings: {', '.join(sorted(f'{f.kind} {f.where}' for f in report.findings)) or 'none'}")
    return 0 if seconds <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
