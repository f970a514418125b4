"""The report: the JSON shape of the issue, kinds named as the issue names them, HTML escaped, lessons cited right."""

from __future__ import annotations

import json
from pathlib import Path

import course.audit
from course.audit import KINDS
from course.audit.report import LESSON_TITLES, REPAIRED_IN_06, Finding, LessonRef, NotExamined, Report
from course.audit.run import MODULES

ROOT = Path(__file__).resolve().parents[2]
ISSUE_KINDS = ("unbounded_array", "bloated_document", "mixed_types", "missing_version", "version_mix",
               "redundant_index", "unused_index", "too_many_collections", "mixed_kinds", "missing_validator",
               "copy_drift")


def headings(lesson: str) -> set[str]:
    (path,) = (ROOT / "solutions").glob(f"{lesson}-*.ipynb")
    cells = json.loads(path.read_text())["cells"]
    found = set()
    for cell in cells:
        if cell["cell_type"] == "markdown":
            found |= {line.lstrip("#").strip() for line in "".join(cell["source"]).splitlines()
                      if line.startswith("#")}
    return found


def test_the_kinds_are_the_issues():
    assert KINDS == ISSUE_KINDS and set(MODULES) == set(KINDS)
    for kind, module in MODULES.items():
        assert module.__name__ == f"course.audit.{kind}" and module.__doc__


def test_every_fix_cites_sections_that_exist():
    for module in MODULES.values():
        assert module.SEE and module.WHY and module.HOW
        for ref in module.SEE:
            assert ref.section in headings(ref.lesson), f"{module.KIND}: no heading {ref.section!r} in {ref.lesson}"
    for kind, ref in REPAIRED_IN_06.items():
        assert kind in KINDS and ref.section in headings(ref.lesson), f"{kind}: no heading {ref.section!r} in 06"
    for lesson, title in LESSON_TITLES.items():
        assert any(h.endswith(title) for h in headings(lesson)), (lesson, title)


def sample_report() -> Report:
    finding = Finding("copy_drift", "orders", "customer_copy", "medium", {"drifted": 2, "examples": [{"_id": 1}]},
                      "2 copies <b>drifted</b>", "stale <script>", "refresh & index",
                      (LessonRef("02", "Copies need an update path"),))
    return Report("course_x", "mongoeco", 1000, findings=[finding],
                  not_examined=[NotExamined("unused_index", None, "no $indexStats")])


def test_the_json_shape():
    data = json.loads(sample_report().json())
    assert set(data) == {"database", "sampled", "findings"}
    assert set(data["sampled"]) == {"limit", "collections", "not_examined"}
    (finding,) = data["findings"]
    assert set(finding) == {"kind", "collection", "field", "severity", "evidence", "fix"}
    assert finding["fix"] == {"why": "stale <script>", "how": "refresh & index",
                              "see": [{"lesson": "02", "section": "Copies need an update path"},
                                      {"lesson": "06", "section": "Exercise 06.5: refresh the copies"}]}
    assert data["sampled"]["not_examined"] == [{"kind": "unused_index", "collection": None,
                                                "reason": "no $indexStats"}]


def test_the_html_escapes_everything():
    html = sample_report()._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;drifted" in html
    assert "02 · Embed or reference › Copies need an update path" in html


def test_the_text_names_every_part():
    text = str(sample_report())
    for part in ("copy_drift in orders.customer_copy", "found: 2 copies", "costs: stale", "fix: refresh",
                 "see: 02 · Embed or reference", "Could not examine", "unused_index (every collection)"):
        assert part in text


def test_the_package_is_callable(db, backend):
    db.t.insert_many([{"_id": i, "n": i} for i in range(3)])
    report = course.audit(db, backend=backend)
    assert isinstance(report, Report) and report.database == db.name
    assert report.to_json() == course.audit.audit(db, backend=backend).to_json()


def test_the_commands_default_sample_is_the_samplers():
    from course.audit import command, sampler

    assert command.DEFAULT_SAMPLE == sampler.DEFAULT_SAMPLE
