"""unused_index: from $indexStats where the server counts uses; otherwise the report says it cannot know."""

from __future__ import annotations

import datetime

from course.audit.indexes import IndexInfo
from course.audit.unused_index import unused
from tests.audit.conftest import audit_kind, only

KIND = "unused_index"


def test_reported_where_the_server_counts_uses(db, backend):
    db.t.insert_many([{"_id": i, "a": i, "b": i, "c": i} for i in range(50)])
    db.t.create_index([("a", 1)])
    db.t.create_index([("b", 1)])
    db.t.create_index([("c", 1)], unique=True)
    list(db.t.find({"a": 3}))
    report = audit_kind(db, backend, KIND)
    if backend.name == "server":
        finding = only(report, KIND, "t")
        assert (finding.evidence["index"], finding.evidence["ops"]) == ("b_1", 0)
        assert report.not_examined == []
    else:
        assert report.findings == []
        (blind,) = report.cannot_know(KIND)
        assert blind.collection is None
        assert ("$indexStats" in blind.reason) and backend.name.split("-")[0] in blind.reason


def row(name, ops):
    return {"name": name, "accesses": {"ops": ops, "since": datetime.datetime(2026, 10, 1)}}


def index(name, **options):
    return IndexInfo(name=name, keys=((name.split("_")[0], 1),), unique=options.get("unique", False),
                     sparse=False, partial=None, ttl=options.get("ttl"), collation=None)


def test_the_rule_on_server_statistics():
    indexes = {i.name: i for i in (index("_id_", unique=True), index("a_1"), index("b_1"),
                                   index("email_1", unique=True), index("at_1", ttl=60))}
    rows = [row("_id_", 0), row("a_1", 12), row("b_1", 0), row("email_1", 0), row("at_1", 0)]
    assert [i.name for i, _ in unused(indexes, rows)] == ["b_1"]
    assert unused(indexes, [row("gone_1", 0)]) == []  # a row for an index the listing lacks
