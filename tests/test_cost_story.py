"""Lesson 04's cost story: client-side figures on every backend, claims judged on MongoDB's components."""

from course.cost_story import (
    CI_SIZES, client_costs, claims, client_table, engine_table, engine_timings, seed_storage_note, storage_sizes,
    storage_table,
)
from course.measure import FULL_SIZES
from course.storage_costs import StorageFigures


def test_client_half_is_exact_bytes_and_pymongo_decoding():
    rows = client_costs(CI_SIZES)
    assert [r.reply_bytes for r in rows] == [10_735, 537_995, 2_158_995]  # byte-identical everywhere
    assert all(r.projected_bytes < 200 for r in rows)
    found = claims(rows, None)
    assert all(c.holds for c in found), [str(c) for c in found]
    assert "| 10 KB | 10,735 |" in client_table(rows)


def test_storage_claims_follow_the_figures():
    shape = [StorageFigures("10 KB", 10_735, 20, 28_900, 21_500, 23_500, 0),
             StorageFigures("10 MB", 10_838_995, 3, 10_846_267, 10_839_042, 11_706_407, 11_706_407)]
    found = claims(client_costs({"10 KB": 70, "500 KB": 3_500}), shape)
    assert [c.holds for c in found if c.source == "WiredTiger"] == [True, True, True]
    wrong = [StorageFigures("10 KB", 10_735, 20, 28_900, 21_500, 23_500, 23_000),
             StorageFigures("10 MB", 10_838_995, 3, 1_000, 500, 11_706_407, 11_706_407)]
    assert [c.holds for c in claims(client_costs({"10 KB": 70}), wrong) if c.source == "WiredTiger"] \
        == [False, False, False]
    assert "MongoDB 8.3.11, seed" in storage_table(shape)
    assert "measured on a real MongoDB 8.3.11 server" in seed_storage_note()


def test_engine_timings_are_labelled_as_the_engines(make_lab, backend):
    db = make_lab("04").scratch()
    rows = engine_timings(db.timed, backend.name, runs=1)
    assert [r.label for r in rows] == ["10 KB", "100 KB"] and db.timed.count_documents({}) == 0
    assert f"These are {backend.name}'s own timings" in engine_table(rows)
    assert "not what MongoDB costs" in engine_table(rows)


def test_ci_size_setting():
    assert storage_sizes({}) == FULL_SIZES and storage_sizes({"COURSE_MEASURE_SIZE": "ci"}) == CI_SIZES
