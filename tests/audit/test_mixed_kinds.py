"""mixed_kinds: several shapes in one collection with no discriminator; a kind or version field makes it fine."""

from __future__ import annotations

from tests.audit.conftest import audit_kind, only

KIND = "mixed_kinds"


def payments(with_method=False):
    documents = []
    for i in range(14):
        method = ("card",) * 6 + ("bank",) * 4 + ("voucher",) * 4
        common = {"_id": i, "order_id": i, "amount": 100 * i, "paid_at": i}
        if method[i] == "card":
            details = {"brand": "VISA", "last4": "1234", "expiry": "01/30", "auth": f"A{i}"}
        elif method[i] == "bank":
            details = {"iban": "GB00", "bic": "BANKGB", "reference": f"R{i}"}
        else:
            details = {"code": f"V{i}", "issued_by": "promo"}
        documents.append({**common, **({"method": method[i]} if with_method else {}), **details})
    return documents


def test_three_shapes_without_a_discriminator(db, backend):
    db.payments.insert_many(payments())
    finding = only(audit_kind(db, backend, KIND), KIND, "payments")
    kinds = finding.evidence["kinds"]
    assert [k["documents"] for k in kinds] == [6, 4, 4]
    assert kinds[0]["fields"] == ["auth", "brand", "expiry", "last4"] and kinds[0]["examples"] == [0, 1, 2]
    assert sorted(k["fields"][0] for k in kinds[1:]) == ["bic", "code"]
    assert finding.evidence["common_fields"] == ["amount", "order_id", "paid_at"]


def test_a_discriminator_field_makes_it_the_polymorphic_pattern(db, backend):
    db.payments.insert_many(payments(with_method=True))
    assert audit_kind(db, backend, KIND).findings == []


def test_a_version_field_tells_the_shapes_apart(db, backend):
    old = [{"_id": i, "price": "1.00", "title": "x", "stock": 1} for i in range(5)]
    new = [{"_id": 10 + i, "schema_version": 2, "price_pence": 100, "name": "x", "tags": [], "sku": "A"}
           for i in range(5)]
    db.products.insert_many(old + new)
    assert audit_kind(db, backend, KIND).findings == []


def test_one_shape_with_optional_fields(db, backend):
    db.people.insert_many([{"_id": i, "name": "x", "email": "e", "phone": "p", **({"nick": "n"} if i % 2 else {})}
                           for i in range(20)])
    assert audit_kind(db, backend, KIND).findings == []
