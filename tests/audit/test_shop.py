"""The legacy shop reports every kind with its numbers, its clean copy reports nothing, and auditing writes nothing."""

from __future__ import annotations

import pytest

from course.audit import KINDS, audit
from course.store.capabilities import Capability
from course.datasets.legacy_shop import legacy_shop, load_shop, shop_reads
from tests.audit.conftest import contents, only

_SEEDED: dict = {}


def seeded(backend, clean):
    """The shop seeded once per backend and test session (seeding 20,000 embedded reviews takes seconds)."""
    key = (backend.name, clean)
    if key not in _SEEDED:
        name = f"course_audit_shop_{'clean' if clean else 'legacy'}"
        db = backend.client[name]
        load_shop(db, legacy_shop(clean), validators=backend.supports(Capability.VALIDATORS))
        shop_reads(db, clean=clean)
        _SEEDED[key] = (backend.client, db)
    return _SEEDED[key][1]


@pytest.fixture(scope="module", autouse=True)
def _drop_shops():
    yield
    for client, db in _SEEDED.values():
        client.drop_database(db.name)
    _SEEDED.clear()


def expected_kinds(backend) -> set[str]:
    kinds = set(KINDS)
    if backend.name != "server":
        kinds.discard("unused_index")  # only a server counts index uses
    if not backend.supports(Capability.VALIDATORS):
        kinds.discard("missing_validator")
    return kinds


def test_the_legacy_shop_reports_every_kind(backend):
    report = audit(seeded(backend, clean=False), backend=backend)
    assert report.kinds() == expected_kinds(backend)
    for kind in set(KINDS) - expected_kinds(backend):
        assert report.cannot_know(kind), f"{kind}: the report must say why it was not examined"
    assert all(e.method == "all" for e in report.examined)  # every collection fits the default sample


def test_the_legacy_shops_numbers(backend):
    report = audit(seeded(backend, clean=False), backend=backend)
    orders = only(report, "unbounded_array", "customers").evidence
    assert orders["grows_with_age"] and orders["long_tail"] and orders["largest"] >= 500
    reviews = only(report, "unbounded_array", "products").evidence
    assert (reviews["largest"], reviews["largest_id"]) == (20_000, 1)
    bloated = only(report, "bloated_document", "products").evidence
    assert bloated["bloated"] == 1 and bloated["largest"][0]["_id"] == 1
    assert bloated["largest"][0]["fields"][0]["field"] == "reviews"
    views = [f for f in report.of_kind("mixed_types", "products") if f.field == "views"][0]
    assert views.evidence["types"] == {"int": 199, "long": 1} and views.evidence["examples"] == {"long": [7]}
    phones = [f for f in report.of_kind("mixed_types", "customers") if f.field == "phone"][0]
    assert phones.evidence["types"] == {"long": 30, "string": 270}
    assert only(report, "missing_version", "orders").evidence["missing"] == 120
    assert only(report, "version_mix", "orders").evidence["versions"] == {"1": 280, "2": 200, "missing": 120}
    redundant = only(report, "redundant_index", "orders").evidence
    assert (redundant["index"], redundant["covered_by"]) == ("customer_id_1", "customer_id_1_placed_at_-1")
    tenants = only(report, "too_many_collections").evidence
    assert tenants["collections"] == [f"carts_{t}" for t in ("acme", "globex", "hooli", "initech", "umbrella")]
    assert [k["documents"] for k in only(report, "mixed_kinds", "payments").evidence["kinds"]] == [150, 75, 75]
    drift = only(report, "copy_drift", "orders").evidence
    assert (drift["copies"], drift["drifted"], drift["fields"]) == (600, 51, {"name": 51})
    if backend.supports(Capability.VALIDATORS):
        assert [f.collection for f in report.of_kind("missing_validator")] == ["suppliers"]
    if backend.name == "server":
        assert "supplier_id_1" in {f.evidence["index"] for f in report.of_kind("unused_index", "products")}


def test_the_clean_copy_reports_nothing(backend):
    report = audit(seeded(backend, clean=True), backend=backend)
    assert report.findings == [], [f.summary for f in report.findings]


@pytest.mark.parametrize("clean", [False, True], ids=["legacy", "clean"])
def test_auditing_changes_nothing(backend, clean):
    db = seeded(backend, clean)
    before = contents(db)
    audit(db, backend=backend)
    audit(db, backend=backend, sample=50)  # sampled collections too
    assert contents(db) == before


def test_the_applications_reads_work_on_both_shapes(backend):
    legacy, clean = shop_reads(seeded(backend, False)), shop_reads(seeded(backend, True), clean=True)
    for reads in (legacy, clean):
        assert reads["customer_by_email"] is not None and len(reads["category_page"]) == 10
        assert reads["cart"] is not None and reads["payments_of_order"]
    assert clean["review_page"]["count"] == 100


def test_the_legacy_report_renders(backend):
    report = audit(seeded(backend, clean=False), backend=backend)
    html, text = report._repr_html_(), str(report)
    for finding in report.findings:
        assert f"<code>{finding.kind}</code>" in html and f"{finding.kind} in {finding.where}" in text
