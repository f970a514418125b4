"""Writing the grades: ``gradebook.csv`` and one Markdown feedback file per learner."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from course.grading.runner import Graded
from course.results import Result, Status

COLUMNS = ("learner", "lab", "exercise", "status", "score", "max_score")

_SYMBOL = {
    Status.CORRECT: "✔",
    Status.INCORRECT: "✘",
    Status.NOT_ATTEMPTED: "…",
    Status.ERROR: "⚠",
    Status.UNSUPPORTED: "⊘",
}


def _points(value: float) -> str:
    return f"{value:g}"


def gradebook_rows(graded: list[Graded]) -> list[dict[str, str]]:
    """One row per learner, lab and exercise, sorted in that order."""
    rows = [
        {"learner": g.learner, "lab": g.lab, "exercise": r.exercise_id, "status": r.status.value,
         "score": _points(r.score), "max_score": _points(r.max_score)}
        for g in graded for r in g.results
    ]
    return sorted(rows, key=lambda row: (row["learner"], row["lab"], _exercise_key(row["exercise"])))


def _exercise_key(exercise: str) -> tuple:
    lab, _, number = exercise.partition(".")
    return (lab, int(number) if number.isdigit() else -1, exercise)


def write_gradebook(graded: list[Graded], out: Path) -> Path:
    """Write ``out/gradebook.csv`` with the columns in :data:`COLUMNS`; return its path."""
    out.mkdir(parents=True, exist_ok=True)
    target = out / "gradebook.csv"
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(gradebook_rows(graded))
    return target


def feedback_filename(learner: str) -> str:
    """A safe file name for ``learner``'s feedback."""
    return (re.sub(r"[^\w.-]+", "_", learner).strip("._") or "learner") + ".md"


def _exercise_feedback(result: Result) -> list[str]:
    head = f"- {_SYMBOL[result.status]} **{result.exercise_id}**"
    if result.title:
        head += f" {result.title}"
    head += f": {result.status.value.replace('_', ' ')} ({_points(result.score)}/{_points(result.max_score)})"
    lines = [head]
    if result.message:
        lines.append(f"  - {result.message}")
    for outcome in result.outcomes:
        if outcome.status is Status.CORRECT:
            lines.append(f"  - passed: {outcome.name}")
        elif outcome.status is Status.UNSUPPORTED:
            lines.append(f"  - not checked here: {outcome.name}")
        elif outcome.status is Status.NOT_ATTEMPTED:
            lines.append(f"  - still to do: {outcome.name}")
        elif outcome.message and outcome.message != result.message:
            lines.append(f"  - not passed: {outcome.name}: {outcome.message}")
        else:
            lines.append(f"  - not passed: {outcome.name}")
    number = result.exercise_id.partition(".")[2]
    if result.status in (Status.INCORRECT, Status.ERROR, Status.NOT_ATTEMPTED) and number.isdigit():
        lines.append(f"  - For a hint, run `lab.q{number}.hint()` in the lab.")
    return lines


def feedback_text(learner: str, graded: list[Graded]) -> str:
    """The Markdown feedback for one learner: per lab, per exercise, what passed and what did not."""
    lines = [f"# Feedback for {learner}", ""]
    for g in sorted(graded, key=lambda g: (g.lab, str(g.path))):
        score = sum(r.score for r in g.results)
        total = sum(r.max_score for r in g.results)
        title = f"Lab {g.lab}: {g.lab_title}" if g.lab_title else f"Lab {g.lab}"
        lines += [f"## {title} — {_points(score)}/{_points(total)}", "", f"Notebook: `{g.path.name}`", ""]
        if g.skipped:
            lines += [f"This notebook could not be graded: {g.skipped}", ""]
        for result in g.results:
            if g.skipped and result.exercise_id == "-":
                continue
            lines += _exercise_feedback(result)
        if g.notes:
            lines += ["", "Notes:"] + [f"- {note}" for note in g.notes]
        lines.append("")
    return "\n".join(lines)


def write_feedback(graded: list[Graded], out: Path) -> list[Path]:
    """Write ``out/feedback/<learner>.md`` for every learner; return the paths."""
    folder = out / "feedback"
    folder.mkdir(parents=True, exist_ok=True)
    by_learner: dict[str, list[Graded]] = {}
    for g in graded:
        by_learner.setdefault(g.learner, []).append(g)
    written = []
    for learner, items in sorted(by_learner.items()):
        target = folder / feedback_filename(learner)
        target.write_text(feedback_text(learner, items), encoding="utf-8")
        written.append(target)
    return written
