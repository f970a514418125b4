"""missing_version: documents without a version field beside documents with one."""

from __future__ import annotations

from tests.audit.conftest import audit_kind, only

KIND = "missing_version"


def test_documents_without_the_version_others_have(db, backend):
    db.orders.insert_many([{"_id": i, "total": i, **({"schema_version": 1} if i > 4 else {})} for i in range(1, 15)])
    finding = only(audit_kind(db, backend, KIND), KIND, "orders")
    assert finding.field == "schema_version"
    evidence = finding.evidence
    assert (evidence["missing"], evidence["with_version"], evidence["examined"]) == (4, 10, 14)
    assert evidence["examples"] == [1, 2, 3, 4]


def test_the_camel_case_spelling(db, backend):
    db.legacy.insert_many([{"_id": i, "schemaVersion": 2} for i in range(5)] + [{"_id": 10}, {"_id": 11}])
    finding = only(audit_kind(db, backend, KIND), KIND, "legacy")
    assert finding.field == "schemaVersion" and finding.evidence["missing"] == 2


def test_every_document_versioned_or_none_is_not_reported(db, backend):
    db.versioned.insert_many([{"_id": i, "schema_version": 1 + i % 2} for i in range(10)])
    db.unversioned.insert_many([{"_id": i, "name": "x"} for i in range(10)])
    assert audit_kind(db, backend, KIND).findings == []
