"""missing_validator: documents that agree on a shape and no $jsonSchema; its suggestion is a working validator."""

from __future__ import annotations

from course.store.capabilities import Capability
from tests.audit.conftest import audit_kind, only

KIND = "missing_validator"


def suppliers():
    return [{"_id": i, "name": f"s{i}", "lead_days": i, "active": bool(i % 2)} for i in range(1, 11)]


def test_agreeing_documents_without_a_validator(db, backend):
    db.suppliers.insert_many(suppliers())
    report = audit_kind(db, backend, KIND)
    if not backend.supports(Capability.VALIDATORS):
        assert report.findings == []
        assert "validators" in report.cannot_know(KIND)[0].reason
        return
    finding = only(report, KIND, "suppliers")
    assert finding.evidence["required"] == ["_id", "active", "lead_days", "name"]
    assert finding.evidence["types"] == {"_id": "int", "active": "bool", "lead_days": "int", "name": "string"}
    # the suggestion is a validator these documents pass, and then nothing is reported
    db.create_collection("suppliers_validated", validator=finding.evidence["suggested_validator"])
    db.suppliers_validated.insert_many(suppliers())
    assert audit_kind(db, backend, KIND, collections=["suppliers_validated"]).findings == []


def test_documents_that_disagree_are_not_reported(db, backend):
    db.mixed.insert_many([{"_id": i, "n": i if i % 2 else str(i)} for i in range(10)])
    db.versions.insert_many([{"_id": i, "schema_version": 1 + i % 2, "n": i} for i in range(10)])
    db.few.insert_many([{"_id": i, "n": i} for i in range(3)])
    assert audit_kind(db, backend, KIND).findings == []


def test_a_collection_with_a_validator_is_not_reported(db, backend):
    if not backend.supports(Capability.VALIDATORS):
        return
    db.create_collection("checked", validator={"$jsonSchema": {"bsonType": "object", "required": ["name"]}})
    db.checked.insert_many(suppliers())
    assert audit_kind(db, backend, KIND).findings == []
