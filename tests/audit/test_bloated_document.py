"""bloated_document: documents far above the median (or near 16 MiB) with the fields that make them large."""

from __future__ import annotations

import bson

from course.audit.bloated_document import LARGE, NEAR_CEILING
from tests.audit.conftest import audit_kind, only

KIND = "bloated_document"


def small(n=30):
    return [{"_id": i, "name": f"product {i:03d}", "price": 100 + i} for i in range(n)]


def test_a_document_far_above_the_median(db, backend):
    big = {"_id": 99, "name": "bestseller", "price": 5, "blob": "x" * (LARGE + 500_000)}
    db.products.insert_many(small() + [big])
    finding = only(audit_kind(db, backend, KIND), KIND, "products")
    evidence = finding.evidence
    middle = sorted(len(bson.encode(d)) for d in small() + [big])[15]  # nearest-rank median of 31
    assert (evidence["bloated"], evidence["median_bytes"], evidence["examined"]) == (1, middle, 31)
    largest = evidence["largest"][0]
    assert (largest["_id"], largest["bytes"]) == (99, len(bson.encode(big)))
    assert largest["fields"][0]["field"] == "blob" and largest["fields"][0]["share"] > 0.99
    assert len(largest["fields"]) == 1  # one field is already more than half the bytes
    assert finding.field == "blob" and finding.severity == "medium"


def test_a_document_near_the_ceiling_is_high(db, backend):
    db.files.insert_many(small(5) + [{"_id": 7, "scan": b"\x00" * (NEAR_CEILING + 1000)}])
    finding = only(audit_kind(db, backend, KIND), KIND, "files")
    assert finding.severity == "high" and finding.evidence["largest"][0]["ceiling_share"] >= 0.5


def test_fields_listed_until_they_make_up_most_of_the_bytes(db, backend):
    big = {"_id": 500, "a": "a" * 700_000, "b": "b" * 600_000, "c": "c" * 10}
    db.things.insert_many(small() + [big])
    fields = only(audit_kind(db, backend, KIND), KIND, "things").evidence["largest"][0]["fields"]
    assert [f["field"] for f in fields] == ["a"]  # 700,000 of about 1,300,000 bytes: already most
    db.things.delete_one({"_id": 500})
    db.things.insert_one({"_id": 500, "a": "a" * 600_000, "b": "b" * 500_000, "c": "c" * 500_000})
    fields = only(audit_kind(db, backend, KIND), KIND, "things").evidence["largest"][0]["fields"]
    assert [f["field"] for f in fields] == ["a", "b"]


def test_documents_of_ordinary_sizes_are_not_reported(db, backend):
    db.products.insert_many(small() + [{"_id": 50, "text": "y" * 60_000}])  # 200x the median, but 60 KB
    db.uniform.insert_many([{"_id": i, "blob": "z" * (LARGE + 10)} for i in range(3)])  # large, but all alike
    assert audit_kind(db, backend, KIND).findings == []
