"""version_mix: several schema versions alive, with counts per version."""

from __future__ import annotations

from tests.audit.conftest import audit_kind, only

KIND = "version_mix"


def test_counts_per_version(db, backend):
    versions = [1] * 5 + [2] * 3 + [3] * 2
    db.orders.insert_many([{"_id": i, "schema_version": v} for i, v in enumerate(versions)] + [{"_id": 99}])
    finding = only(audit_kind(db, backend, KIND), KIND, "orders")
    assert finding.field == "schema_version"
    assert finding.evidence["versions"] == {"1": 5, "2": 3, "3": 2, "missing": 1}
    assert finding.evidence["newest"] == "3" and finding.evidence["examples"]["1"] == [0, 1, 2, 3, 4]


def test_versions_sort_as_numbers(db, backend):
    db.docs.insert_many([{"_id": i, "schemaVersion": v} for i, v in enumerate([2, 10, 10])])
    assert only(audit_kind(db, backend, KIND), KIND, "docs").evidence["newest"] == "10"


def test_one_version_is_not_a_mix(db, backend):
    db.orders.insert_many([{"_id": i, "schema_version": 2} for i in range(10)] + [{"_id": 50}])
    db.plain.insert_many([{"_id": i} for i in range(3)])
    assert audit_kind(db, backend, KIND).findings == []
