"""``course audit``: audit a database from the command line (the parser lives in :mod:`course.cli`).

    course audit --demo                         # seed the legacy shop into the embedded engine, audit it
    course audit --uri mongodb://127.0.0.1:27017/?directConnection=true --db shop --json
    MONGODB_URI=... course audit --db shop --sample 500

Exit codes: 0 no findings, 1 findings (or the database could not be reached),
2 usage error.  The audit only reads; ``--demo`` writes only the course's own
``course_06_demo`` database.
"""

from __future__ import annotations

import argparse
import os
import sys

DEFAULT_SAMPLE = 1000  # course.audit.sampler.DEFAULT_SAMPLE, kept here so the parser loads nothing heavy


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``course audit``."""
    parser.add_argument("--uri", default=None, metavar="URI",
                        help="the server to audit (default: MONGODB_URI; loopback hosts only unless "
                             "COURSE_ALLOW_REMOTE=1)")
    parser.add_argument("--db", default=None, metavar="NAME",
                        help="the database to audit (default: the URI's database)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--sample", type=int, default=DEFAULT_SAMPLE, metavar="N",
                        help=f"documents read per collection at most; larger ones are sampled "
                             f"(default: {DEFAULT_SAMPLE})")
    parser.add_argument("--demo", action="store_true",
                        help="seed lesson 06's legacy shop into course_06_demo (embedded engine unless "
                             "--uri is given) and audit it")


def _database_in(uri: str) -> str | None:
    from pymongo.uri_parser import parse_uri

    if uri.startswith("mongodb+srv://"):
        return None
    try:
        return parse_uri(uri).get("database")
    except Exception:  # open_server reports a malformed URI with the reason
        return None


def _open(args: argparse.Namespace):
    """The backend to audit: ``--uri``, else whatever the environment chooses (as ``start_lab`` does)."""
    from course.store.backends import open_backend, open_server, remote_allowed, server_timeout_ms

    if args.uri:
        return open_server(args.uri, allow_remote=remote_allowed(os.environ),
                           timeout_ms=server_timeout_ms(os.environ))
    return open_backend()


def run(args: argparse.Namespace) -> int:
    """Run ``course audit`` with parsed ``args``; return the exit code."""
    from course.audit.run import audit
    from course.store.backends import BackendError

    if args.sample < 1:
        print("course audit: --sample must be a positive number of documents", file=sys.stderr)
        return 2
    uri = args.uri or os.environ.get("MONGODB_URI", "").strip()
    if args.demo and args.db:
        print("course audit: --demo audits course_06_demo; leave out --db", file=sys.stderr)
        return 2
    name = args.db or (_database_in(uri) if uri else None)
    if not args.demo and not uri:
        print("course audit: the embedded engine starts empty in every process, so there is nothing to "
              "audit: use --demo for lesson 06's legacy shop, or --uri (or MONGODB_URI) for a server",
              file=sys.stderr)
        return 2
    if not args.demo and not name:
        print("course audit: name the database with --db (or in the URI, mongodb://host/NAME)", file=sys.stderr)
        return 2
    try:
        backend = _open(args)
    except BackendError as error:
        print(f"course audit: {error}", file=sys.stderr)
        return 1
    if args.demo:
        from course.audit.demo import seed_demo

        db = seed_demo(backend.client, backend.name)
    else:
        db = backend.client[name]
    report = audit(db, sample=args.sample, backend=backend.name)
    print(report.json() if args.json else str(report))
    return 1 if report.findings else 0
