"""Lesson 04's pattern explorer, headless: set slider values, read the advice."""

from course.toolkit.explorer import SIZE_LIMIT, PatternExplorer, advise, document_bytes


def test_advice_follows_the_sizes():
    assert advise(20, 150, 10, 0).pattern.startswith("embed")
    assert advise(100, 150, 10, 0.02).pattern.startswith("outlier")
    assert advise(100, 150, 10, 0.4).pattern.startswith("subset or reference")
    assert advise(20_000, 150, 10, 0).pattern.startswith("subset")
    assert advise(20_000, 150, 0.1, 0).pattern.startswith("bucket")
    assert advise(200_000, 150, 10, 0).pattern.startswith("reference")
    assert advise(20, 150, 100, 0).computed and not advise(20, 150, 1, 0).computed
    assert advise(200_000, 150, 1, 0).headroom == SIZE_LIMIT - document_bytes(200_000, 150) < 0


def test_moving_a_slider_changes_the_output():
    explorer = PatternExplorer()
    first = explorer.output.value
    assert "pattern: embed" in first and "headroom to 16 MiB" in first
    explorer.items.value = 70_000
    assert explorer.output.value != first and "subset" in explorer.output.value
    explorer.reads_per_write.value = 0.1
    assert "bucket" in explorer.output.value
    explorer.items.value = 100
    explorer.outlier_share.value = 0.05
    assert "outlier" in explorer.output.value
    explorer.bytes_per_item.value = 5_000
    assert "outlier" in explorer.output.value


def test_widgets_have_stable_classes_and_descriptions():
    explorer = PatternExplorer()
    assert "course-explorer" in explorer.widget._dom_classes
    assert "course-explorer-output" in explorer.output._dom_classes
    sliders = [explorer.items, explorer.bytes_per_item, explorer.reads_per_write, explorer.outlier_share]
    assert [s.description for s in sliders] == ["items per parent", "bytes per item", "reads per write",
                                                "share of outliers"]
    assert all("course-explorer-slider" in s._dom_classes for s in sliders)
    assert "course-explorer-items" in explorer.items._dom_classes


def test_size_labels_say_how_far_past_the_limit():
    from course.toolkit.explorer import size_label

    assert "67.6x the 16 MiB limit" in size_label(1_134_000_400)
    assert "over 1 MiB" in size_label(2_000_000) and "limit" not in size_label(2_000_000)
    assert size_label(10_000) == ""


def test_no_outliers_means_no_outlier_size():
    """At 0% outliers the advice names no outlier document (it once said "67.6x the 16 MiB limit")."""
    text = advise(70_000, 150, 10, 0).text()
    assert "outliers: none" in text and "limit: it cannot be stored" not in text
    assert "% of the limit used" in text
    some = advise(70_000, 150, 10, 0.02).text()
    assert "2% of parents" in some and "67.6x the 16 MiB limit" in some
    assert "over the 16 MiB limit by" in advise(200_000, 150, 10, 0).text()
