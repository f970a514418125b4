"""Fixtures for the audit's tests: a fresh course database on every backend, and the audit of one kind."""

from __future__ import annotations

import pytest

from course.audit import audit

DATABASE = "course_audit_test"


@pytest.fixture
def db(backend):
    """An empty ``course_audit_test`` database on the current backend, dropped afterwards."""
    backend.client.drop_database(DATABASE)
    yield backend.client[DATABASE]
    backend.client.drop_database(DATABASE)


def audit_kind(db, backend, kind, **options):
    """The audit of ``db`` for one ``kind`` only."""
    return audit(db, backend=backend, kinds=[kind], **options)


def only(report, kind, collection=None):
    """The one finding of ``kind`` (in ``collection``); fails when there are none or several."""
    found = report.of_kind(kind, collection)
    assert len(found) == 1, [f.summary for f in report.findings]
    return found[0]


def contents(db) -> dict:
    """Every collection's documents (in _id order) and index definitions: what auditing must not change."""
    state = {}
    for name in sorted(db.list_collection_names()):
        documents = sorted(db[name].find({}), key=lambda d: repr(d["_id"]))
        indexes = {k: sorted((str(a), repr(b)) for a, b in v.items()) for k, v in db[name].index_information().items()}
        state[name] = (documents, indexes)
    return state
