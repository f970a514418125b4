"""Lesson 04's cost story: client-side figures on every backend, claims judged on MongoDB's components."""

from course.toolkit.cost_story import (
    CI_SIZES, client_costs, claims, client_table, engine_table, engine_timings, seed_storage_note, storage_sizes,
    storage_table,
)
from course.toolkit.measure import FULL_SIZES
from course.toolkit.storage_costs import StorageFigures


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


def test_engine_table_says_only_what_its_rows_show():
    from course.toolkit.cost_story import EngineTiming, engine_note

    rows = [EngineTiming("10 KB", "mongoeco", 0.25, 0.30, 8.0, 15, 10_735),
            EngineTiming("100 KB", "mongoeco", 2.0, 0.75, 130.0, 15, 108_235)]
    table = engine_table(rows)
    assert "| 10 KB (mongoeco) | 10,735 |" in table and "mongoeco find_one, ms" in table
    assert "| 10 KB (MongoDB 8.3.11 server, seed) |" in table and "10 MB" not in table
    assert "no gain from the projection" in engine_note(rows[0])  # slower: never shown as a saving
    assert "took 0.750 ms against 2.000 ms" in engine_note(rows[1])


def test_cost_plot_draws_read_and_update_bytes_on_log_scales():
    import matplotlib

    matplotlib.use("Agg")
    client = client_costs({"10 KB": 70, "500 KB": 3_500})
    shape = [StorageFigures("10 KB", 10_735, 20, 28_900, 21_500, 23_500, 0),
             StorageFigures("500 KB", 537_995, 3, 545_333, 538_042, 581_327, 581_328)]
    from course.toolkit.cost_story import cost_plot

    for storage, source in ((shape, "WiredTiger here"), (None, "MongoDB 8.3.11 server, seed")):
        fig = cost_plot(client, storage)
        read, update = fig.axes
        assert read.get_xscale() == update.get_xscale() == read.get_yscale() == "log"
        labels = [line.get_label() for axis in fig.axes for line in axis.get_lines()]
        assert any(source in label and "checkpoint" in label for label in labels), labels
        assert any("uncompressed" in label for label in labels)
        checkpoint = update.get_lines()[1].get_ydata()
        assert list(checkpoint) == ([28_900, 545_333] if storage else [108_294, 10_920_698])
        assert "bytes" in read.get_xlabel() and "bytes" in read.get_ylabel()
