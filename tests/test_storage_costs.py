"""Lesson 04's server-side costs on WiredTiger, MongoDB's storage engine: the shape the lesson teaches."""

import datetime
import os
import re

import bson
import pytest
from bson import Binary, Decimal128, Int64, ObjectId, Regex, Timestamp

from course.toolkit.measure import FULL_SIZES, order_with_events
from course.toolkit.storage_costs import available, measure_storage, top_level_field

REQUIRED = os.environ.get("COURSE_REQUIRE_WIREDTIGER") == "1"  # set by .ci/run, which always builds it


@pytest.fixture(scope="module")
def figures():
    ok, why = available()
    if not ok:
        if REQUIRED:
            pytest.fail(f"COURSE_REQUIRE_WIREDTIGER=1 but {why}")
        pytest.skip(why)
    return {f.label: f for f in measure_storage(FULL_SIZES)}


def test_a_small_change_rewrites_the_whole_large_document(figures):
    largest = figures["10 MB"]
    assert largest.document_bytes > 10_000_000
    assert largest.checkpoint_bytes >= 0.9 * largest.document_bytes, largest


def test_a_small_document_shares_its_page_with_its_neighbours(figures):
    small, largest = figures["10 KB"], figures["10 MB"]
    assert small.neighbour_shares_page, small
    assert small.checkpoint_bytes > small.document_bytes  # the whole page is written, not the document
    assert small.checkpoint_bytes < 20 * small.document_bytes, small
    assert not largest.neighbour_shares_page, largest


def test_one_field_of_a_cold_document_reads_it_all_into_the_cache(figures):
    for label in ("500 KB", "10 MB"):
        size = figures[label]
        assert size.cold_read_bytes >= 0.95 * size.document_bytes, size
        assert size.cold_cache_bytes >= size.document_bytes, size


def test_one_top_level_field_is_read_past_every_kind_of_element_before_it(monkeypatch):
    before = {"double": 1.5, "string": "héllo", "document": {"a": [1, {"b": 2}]}, "array": [1, "x", None],
              "oid": ObjectId("65a1b2c3d4e5f60718293a4b"), "bool": True,
              "date": datetime.datetime(2024, 1, 2, 3, 4, 5), "null": None, "int32": 7,
              "timestamp": Timestamp(5, 6), "int64": Int64(1 << 40), "decimal": Decimal128("1.25")}
    decoded = []  # the lengths of what bson decodes: only the one element, never the whole document
    real_decode = bson.decode
    monkeypatch.setattr(bson, "decode", lambda data, *a, **k: decoded.append(len(data)) or real_decode(data, *a, **k))
    for name, value in before.items():
        raw = bson.encode({"_id": 1, name: value, "status": "SHIPPED", "events": [{"seq": k} for k in range(50)]})
        assert top_level_field(raw, "status") == "SHIPPED", name
        assert top_level_field(raw, name) == value, name
        assert max(decoded) < 100, (name, decoded)
        decoded.clear()
    for odd in (Binary(b"\x00\x01"), Regex("^a", re.I)):  # kinds it does not step over: bson reads them
        assert top_level_field(bson.encode({"x": odd, "status": "NEW"}), "status") == "NEW"
    with pytest.raises(KeyError):
        top_level_field(bson.encode({"_id": 1, "statuses": "x"}), "status")


def test_the_field_read_is_the_orders_status_at_every_size():
    for events in FULL_SIZES.values():
        raw = bson.encode(order_with_events(2, events))
        assert top_level_field(raw, "status") == "SHIPPED"
        assert top_level_field(raw, "events")[-1]["seq"] == events - 1
