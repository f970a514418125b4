"""unbounded_array: a long tail or growth with age is reported with its numbers; bounded and capped arrays are not."""

from __future__ import annotations

import datetime

from course.audit.unbounded_array import MIN_LARGEST
from tests.audit.conftest import audit_kind, only

KIND = "unbounded_array"
NOW = datetime.datetime(2026, 10, 1)


def growing(n=60):
    """Customer i joined 30*i days before NOW and has 5*i orders: length grows with age."""
    return [{"_id": i, "since": NOW - datetime.timedelta(days=30 * i),
             "orders": [{"n": k} for k in range(5 * i)]} for i in range(1, n + 1)]


def test_an_array_that_grows_with_age(db, backend):
    db.customers.insert_many(growing())
    finding = only(audit_kind(db, backend, KIND), KIND, "customers")
    evidence = finding.evidence
    assert (finding.field, evidence["largest"], evidence["largest_id"]) == ("orders", 300, 60)
    assert (evidence["p50"], evidence["p99"], evidence["with_array"], evidence["examined"]) == (150, 300, 60, 60)
    assert evidence["grows_with_age"] is True and evidence["long_tail"] is False
    assert evidence["age_field"] == "since" and evidence["correlation"] == 1.0
    age_years = (59 * 30) / 365.25  # the largest is 59 * 30 days older than the newest customer
    assert evidence["growth_per_year"] == round(300 / age_years, 1)
    projected = evidence["projected_in_5_years"]
    assert projected["elements"] == round(300 + 300 / age_years * 5)
    assert projected["bytes"] > evidence["largest_document_bytes"] and evidence["years_to_16_mib"] > 5
    assert finding.severity == "medium"


def test_a_long_tail_without_dates(db, backend):
    documents = [{"_id": i, "reviews": ["ok", "fine"]} for i in range(1, 51)]
    documents[6]["reviews"] = [f"review {k}" for k in range(5000)]
    db.products.insert_many(documents)
    evidence = only(audit_kind(db, backend, KIND), KIND, "products").evidence
    assert (evidence["largest"], evidence["largest_id"], evidence["p50"]) == (5000, 7, 2)
    assert evidence["long_tail"] is True and evidence["grows_with_age"] is False
    assert evidence["age_field"] is None and evidence["growth_per_year"] is None
    assert evidence["years_to_16_mib"] is None


def test_nested_arrays_are_measured_by_their_path(db, backend):
    documents = [{"_id": i, "stats": {"visits": [1, 2]}} for i in range(1, 41)]
    documents[0]["stats"]["visits"] = list(range(MIN_LARGEST * 3))
    db.pages.insert_many(documents)
    assert only(audit_kind(db, backend, KIND), KIND, "pages").field == "stats.visits"


def test_bounded_arrays_are_not_reported(db, backend):
    db.orders.insert_many([{"_id": i, "lines": list(range(i % 11))} for i in range(200)])
    small = [{"_id": i, "since": NOW - datetime.timedelta(days=i), "tags": list(range(i))} for i in range(1, 100)]
    db.small.insert_many(small)  # grows with age, but never reaches MIN_LARGEST
    assert audit_kind(db, backend, KIND).findings == []


def test_a_capped_array_is_not_reported(db, backend):
    capped = [{"_id": i, "followers": list(range(250 if i < 5 else i))} for i in range(100)]
    db.products.insert_many(capped)  # five documents stop at exactly 250: the cap of an outlier pattern
    assert audit_kind(db, backend, KIND).findings == []
