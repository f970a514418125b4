"""Lesson 05's modules: the legacy orders, the audit, the migration simulator and its view."""

from html import escape

import pytest

from course.store.capabilities import Capability
from course.datasets.migration import (INT32_MAX, NO_PHONE_IDS, OVERFLOW_ID, SMALL_LONG_ID, legacy_orders,
                                       seed_orders)
from course.toolkit.migration_audit import (CensusUnsupported, expected_census, format_census, group_census,
                                    type_census)
from course.toolkit.migration_sim import (NOT_MIGRATED, careful_batches, migrate_ids, naive_batches, new_field_lookup,
                                  simulate, v2_only_reader)
from course.toolkit.migration_view import SimulationView


@pytest.fixture
def lab(make_lab):
    return make_lab("05")


def seeded(lab, name="orders", n=120):
    collection = lab.scratch()[name]
    seed_orders(collection, legacy_orders(n=n))
    return collection


def tolerant_reader(orders, order_id):
    doc = orders.find_one({"_id": order_id})
    if doc is None or doc.get("schema_version") == 2:
        return doc
    customer = dict(doc["customer"])
    phone = customer.pop("phone", None)
    return {**doc, "schema_version": 2, "customer": {**customer, "phones": [] if phone is None else [phone]}}


def both_places_lookup(orders, phone):
    query = {"$or": [{"customer.phone": phone}, {"customer.phones": phone}]}
    return [tolerant_reader(orders, d["_id"]) for d in orders.find(query, {"_id": 1})]


def test_legacy_orders_are_deterministic_and_mixed():
    orders = legacy_orders()
    assert orders == legacy_orders()
    assert len(orders) == 240 and orders != legacy_orders(seed=6)
    versions = {o.get("schema_version", 1) for o in orders}
    assert versions == {1, 2}
    assert orders[OVERFLOW_ID - 1]["views"] == INT32_MAX
    assert all("phone" not in orders[i - 1]["customer"] for i in NO_PHONE_IDS)
    with pytest.raises(ValueError):
        legacy_orders(n=3)


def test_seeding_overflows_the_counter_into_a_long(lab):
    orders = seeded(lab)
    assert orders.find_one({"_id": OVERFLOW_ID})["views"] == INT32_MAX + 1
    if lab.backend.supports(Capability.TYPE_QUERIES):
        assert {d["_id"] for d in orders.find({"views": {"$type": "long"}})} == {OVERFLOW_ID, SMALL_LONG_ID}


def test_type_census(lab):
    orders = seeded(lab)
    if not lab.backend.supports(Capability.TYPE_QUERIES):
        with pytest.raises(CensusUnsupported, match="cannot tell int from long"):
            type_census(orders, lab.backend)
        return
    census = type_census(orders, lab.backend)
    assert census == expected_census(orders.find({}))
    assert sum(n for key, n in census.items() if key[3] == "long") == 2
    assert sum(census.values()) == 120
    table = format_census(census)
    assert table.splitlines()[0].split() == ["version", "customer.phone", "customer.phones", "views", "orders"]
    assert "long" in table


def test_group_census_finds_both_longs_where_types_are_told_apart(lab):
    """mongoeco's $type expression calls a small Int64 an int; the course absorbs that, so $group agrees."""
    if not lab.backend.supports(Capability.TYPE_QUERIES):
        pytest.skip("no $type census here")
    orders = seeded(lab)
    longs = sum(n for key, n in group_census(orders).items() if key[3] == "long")
    assert longs == 2  # orders 6 (the $inc overflow) and 9 (Int64(12)), as on a server
    assert group_census(orders) == type_census(orders, lab.backend)


def test_migrate_ids_is_idempotent(lab):
    orders = seeded(lab)
    before = {d["_id"]: d for d in orders.find({})}
    v1 = [i for i, d in before.items() if "schema_version" not in d]
    assert migrate_ids(orders, lab.backend, v1) == len(v1)
    after = list(orders.find({}).sort("_id", 1))
    assert migrate_ids(orders, lab.backend, v1) == 0
    assert list(orders.find({}).sort("_id", 1)) == after
    assert orders.count_documents(NOT_MIGRATED) == 0
    assert all(orders.find_one({"_id": i})["customer"]["phones"] == [] for i in NO_PHONE_IDS)
    assert orders.find_one({"_id": 1})["customer"]["phones"] == [before[1]["customer"]["phone"]]


def _run(lab, name, reader, lookup, job, **kwargs):
    return simulate(seeded(lab, name, n=120), lab.backend, reader=reader, lookup=lookup, migration=job(lab.backend),
                    seed=2, label=name, **kwargs)


def test_careful_migration_has_no_anomaly_and_naive_has_some(lab):
    careful = _run(lab, "careful", tolerant_reader, both_places_lookup, careful_batches)
    assert careful.anomalies == []
    assert careful.snapshots[-1].v1 == 0
    assert any(s.event == "job interrupted" for s in careful.snapshots)
    assert any("restarting" in line for line in careful.log)
    naive = _run(lab, "naive", v2_only_reader, new_field_lookup, naive_batches)
    assert {"missed", "wrong shape", "wrong data"} <= set(naive.kinds())
    lazy_only = _run(lab, "lazy", tolerant_reader, new_field_lookup, careful_batches)
    assert set(lazy_only.kinds()) == {"missed"}


def test_simulation_is_deterministic(lab):
    first = _run(lab, "a", v2_only_reader, new_field_lookup, careful_batches)
    second = _run(lab, "b", v2_only_reader, new_field_lookup, careful_batches)
    assert first.table() == second.table()
    assert first.summary().split(":", 1)[1] == second.summary().split(":", 1)[1]
    assert first.anomalies == second.anomalies


def test_simulation_records_failures_and_a_failing_job(lab):
    def broken_reader(orders, order_id):
        raise KeyError("phones")

    def broken_job(orders, **kwargs):
        raise RuntimeError("no pipeline")

    result = simulate(seeded(lab, n=60), lab.backend, reader=broken_reader, lookup=both_places_lookup,
                      migration=broken_job, final_operations=30, interrupt_at=None)
    assert "failed" in result.kinds()
    assert any("job failed" in line for line in result.log)


def test_view_text_and_widgets_change(lab):
    careful = _run(lab, "careful", tolerant_reader, both_places_lookup, careful_batches)
    naive = _run(lab, "naive", v2_only_reader, new_field_lookup, naive_batches)
    view = SimulationView(careful, naive)
    assert view.text_at(0) != view.text_at(view.steps - 1)
    assert "anomalies so far: 0" in view.text_at(view.steps - 1)
    box = view.widget
    slider, button = box.children[0].children
    text = box.children[1]
    assert (slider.description, button.description) == ("pause", "next pause")
    shown = text.value
    button.click()
    assert slider.value == 1 and text.value != shown
    slider.value = view.steps - 1
    assert text.value == f"<pre>{escape(view.text_at(view.steps - 1))}</pre>"
    with pytest.raises(ValueError):
        SimulationView()
