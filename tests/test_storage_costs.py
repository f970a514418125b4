"""Lesson 04's server-side costs on WiredTiger, MongoDB's storage engine: the shape the lesson teaches."""

import os

import pytest

from course.measure import FULL_SIZES
from course.storage_costs import available, measure_storage

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
