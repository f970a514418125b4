"""Lesson 04's measurement lab: the documents it builds and the shape of cost the lesson claims."""

import bson
import pytest

from course.toolkit import measure
from course.store.capabilities import Capability


def test_events_are_about_155_bytes_and_sizes_match_the_seed():
    per_event = len(bson.encode({"events": [measure.event(1, k) for k in range(1000)]})) / 1000
    assert 145 <= per_event <= 165
    sizes = {label: len(bson.encode(measure.order_with_events(1, n))) for label, n in measure.FULL_SIZES.items()}
    assert 9_000 <= sizes["10 KB"] <= 12_000
    assert 480_000 <= sizes["500 KB"] <= 600_000
    assert 9_500_000 <= sizes["10 MB"] <= 11_500_000


def test_an_order_carries_exactly_the_events_event_describes():
    for order_id in (1, 2, 7, 4096):
        order = measure.order_with_events(order_id, 1200)
        described = {**measure.order_head(order_id), "events": [measure.event(order_id, k) for k in range(1200)]}
        assert order == described
        assert bson.encode(order) == bson.encode(described)


def test_the_server_pipeline_builds_the_python_document(backend):
    if not backend.supports(Capability.PIPELINE_UPDATES):
        pytest.skip(f"{backend.name} has no pipeline updates: the lab builds in Python there")
    collection = backend.client["course_04_scratch"]["pipeline_build"]
    built = measure.build_orders(collection, {"a": 70, "b": 300}, pipeline=True)
    for order in built:
        assert collection.find_one({"_id": order.order_id}) == measure.order_with_events(order.order_id, order.events)
    backend.client.drop_database("course_04_scratch")


def test_measured_shape_holds_on_a_server(backend):
    """On a server the notebook times the server itself; its latency claims hold there."""
    if backend.name != "server":
        pytest.skip("an embedded engine's latencies are not MongoDB's: lesson 04 judges its claims on pymongo's "
                    "BSON and on WiredTiger there (tests/test_cost_story.py, tests/test_storage_costs.py)")
    collection = backend.client["course_04_scratch"]["lab_orders"]
    sizes = {"10 KB": 70, "500 KB": 3_500}
    run = measure.run_lab(collection, backend.name, sizes)
    backend.client.drop_database("course_04_scratch")
    assert [r.label for r in run.rows] == list(sizes)
    small, large = run.rows[0], run.rows[-1]
    assert large.full_ms >= 5 * small.full_ms
    assert all(r.projected_bytes < 200 for r in run.rows)
    assert large.decode_ms >= 20 * small.decode_ms


def test_table_and_chart_label_both_sources():
    rows = [measure.Row("10 KB", 10_000, 0.2, None, 0.1, 0.3, 0.05, 10_000, 34, 30),
            measure.Row("2 MB", 2_000_000, 40.0, None, 10.0, 900.0, 9.0, 2_000_000, 34, 3)]
    text = measure.table(rows)
    assert "(here)" in text and "real server, MongoDB 8.3.11" in text and "50.713" in text
    import matplotlib
    matplotlib.use("Agg")
    figure = measure.chart(rows, "mongoeco")
    assert [a.get_yscale() for a in figure.axes] == ["log", "log"]
    assert "MongoDB 8.3.11" in figure.axes[1].get_title()
