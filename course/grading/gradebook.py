"""Writing the grades: ``gradebook.csv`` and one Markdown feedback file per learner."""

from __future__ import annotations

import csv
import html
import io
import re
from collections import Counter
from pathlib import Path

from course.grading.runner import Graded
from course.engine.results import Result, Status

BASE_COLUMNS = ("learner", "lab", "exercise", "status", "score", "max_score")
#: The gradebook's columns: the base ones (stable), then the notebook and the one-line verdict.
COLUMNS = BASE_COLUMNS + ("notebook", "message")
TOTAL_COLUMNS = ("learner", "score", "max_score", "percent", "exercises", "correct", "errors", "notebooks",
                 "review")

_SYMBOL = {
    Status.CORRECT: "✔",
    Status.INCORRECT: "✘",
    Status.NOT_ATTEMPTED: "…",
    Status.ERROR: "⚠",
    Status.UNSUPPORTED: "⊘",
    Status.PARTLY_CHECKED: "◐",
}


def _points(value: float) -> str:
    return f"{value:g}"


def gradebook_rows(graded: list[Graded]) -> list[dict[str, str]]:
    """One row per learner, lab and exercise, sorted in that order."""
    rows = [
        {"learner": g.learner, "lab": g.lab, "exercise": r.exercise_id, "status": r.status.value,
         "score": _points(r.score), "max_score": _points(r.max_score), "notebook": g.path.name,
         "message": " ".join(r.message.split())}
        for g in graded for r in g.results
    ]
    return sorted(rows, key=lambda row: (row["learner"], row["lab"], _exercise_key(row["exercise"])))


def _exercise_key(exercise: str) -> tuple:
    lab, _, number = exercise.partition(".")
    return (lab, int(number) if number.isdigit() else -1, exercise)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "|", "%")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def spreadsheet_safe(value: str) -> str:
    """``value`` as a CSV cell no spreadsheet runs as a formula.

    A cell starting (after any spaces) with ``=``, ``+``, ``-``, ``@``, a tab,
    a line break, ``|`` or ``%`` gets a leading ``'`` (the OWASP rule for CSV
    injection); numbers and the lone ``-`` the grader writes for "no lab" stay
    as they are.
    """
    text = str(value)
    stripped = text.lstrip(" ")
    if not stripped.startswith(_FORMULA_START) or text == "-" or _NUMBER.fullmatch(text):
        return text
    return "'" + text


def _csv(columns: tuple[str, ...], rows: list[dict[str, str]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: spreadsheet_safe(value) for key, value in row.items()} for row in rows)
    return buffer.getvalue()


def write_gradebook(graded: list[Graded], out: Path) -> Path:
    """Write ``out/gradebook.csv`` with the columns in :data:`COLUMNS` (atomically); return its path."""
    from course.grading.store import atomic_write

    return atomic_write(Path(out) / "gradebook.csv", _csv(COLUMNS, gradebook_rows(graded)))


def totals_rows(graded: list[Graded]) -> list[dict[str, str]]:
    """One row per learner: total score over every notebook, counts, and whether to review it."""
    by_learner: dict[str, list[Graded]] = {}
    for g in graded:
        by_learner.setdefault(g.learner, []).append(g)
    rows = []
    for learner, items in sorted(by_learner.items()):
        results = [r for g in items for r in g.results]
        score, total = sum(r.score for r in results), sum(r.max_score for r in results)
        rows.append({
            "learner": learner, "score": _points(score), "max_score": _points(total),
            "percent": f"{100 * score / total:.1f}" if total else "0.0",
            "exercises": str(sum(1 for r in results if r.exercise_id != "-")),
            "correct": str(sum(1 for r in results if r.status is Status.CORRECT)),
            "errors": str(sum(1 for r in results if r.status is Status.ERROR)),
            "notebooks": " ".join(sorted(g.path.name for g in items)),
            "review": "yes" if any(g.flags for g in items) else "",
        })
    return rows


def feedback_filename(learner: str, suffix: str = ".md") -> str:
    """A safe, unique file name for ``learner``'s feedback."""
    from course.grading.store import safe_name

    return safe_name(learner) + suffix  # "a b" and "a_b" get different files


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
        if g.flags:
            lines += ["", "The grader also noticed (your instructor will look at this):"]
            lines += [f"- {flag}" for flag in g.flags]
        lines.append("")
    return "\n".join(lines)


_PAGE_STYLE = ("body{font-family:system-ui,sans-serif;max-width:52em;margin:2em auto;padding:0 1em;"
               "line-height:1.5;color:#1f2328}h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em}"
               "ul.course-details{margin:0.2em 0 0.8em 1.2em;padding-left:1em}"
               "code{background:rgba(127,127,127,0.15);padding:0 0.2em;border-radius:3px}")


def feedback_html(learner: str, graded: list[Graded]) -> str:
    """The same feedback as :func:`feedback_text`, as a standalone HTML page with the labs' result boxes."""
    from course.engine.results import prose_html

    body = [f"<h1>Feedback for {html.escape(learner)}</h1>"]
    for g in sorted(graded, key=lambda g: (g.lab, str(g.path))):
        score = sum(r.score for r in g.results)
        total = sum(r.max_score for r in g.results)
        title = f"Lab {g.lab}: {g.lab_title}" if g.lab_title else f"Lab {g.lab}"
        body.append(f"<h2>{html.escape(title)} — {_points(score)}/{_points(total)}</h2>")
        body.append(f"<p>Notebook: <code>{html.escape(g.path.name)}</code></p>")
        if g.skipped:
            body.append(f"<p>This notebook could not be graded: {prose_html(g.skipped)}</p>")
        for result in g.results:
            if g.skipped and result.exercise_id == "-":
                continue
            title = f" {result.title}" if result.title else ""
            body.append(f"<h3>{html.escape(result.exercise_id + title)} — {_points(result.score)}/"
                        f"{_points(result.max_score)}</h3>")
            body.append(result._repr_html_())
            details = [line.strip()[2:] for line in _exercise_feedback(result)[1:]
                       if line.strip()[2:] != result.message]
            if details:
                items = "".join(f"<li>{_inline(detail)}</li>" for detail in details)
                body.append(f'<ul class="course-details">{items}</ul>')
        for heading, entries in (("Notes:", g.notes),
                                 ("The grader also noticed (your instructor will look at this):", g.flags)):
            if entries:
                body.append(f"<p>{heading}</p><ul>" + "".join(f"<li>{_inline(e)}</li>" for e in entries) + "</ul>")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>Feedback for {html.escape(learner)}</title><style>{_PAGE_STYLE}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _inline(text: str) -> str:
    """One feedback line as HTML: escaped, `code` and $operators as code."""
    from course.engine.results import prose_html

    parts = re.split(r"`(.+?)`", text)
    return "".join(f"<code>{html.escape(part)}</code>" if i % 2 else prose_html(part) for i, part in enumerate(parts))


def summary_text(graded: list[Graded], messages: list[str] = ()) -> str:
    """``summary.md``: per exercise, how many learners passed and the most common failures; what to review."""
    learners = sorted({g.learner for g in graded})
    lines = ["# Grading summary", "", f"{len(learners)} learners, {len(graded)} notebooks.", ""]
    if messages:
        lines += ["## Run messages", ""] + [f"- {m}" for m in messages] + [""]
    skipped = [g for g in graded if g.skipped]
    if skipped:
        lines += ["## Not graded", ""] + [f"- {g.learner} (`{g.path.name}`): {g.skipped}" for g in skipped] + [""]
    flagged = [g for g in graded if g.flags]
    if flagged:
        lines += ["## To review (possible tampering; grades come from the course's own checks regardless)", ""]
        for g in flagged:
            lines += [f"- {g.learner} (`{g.path.name}`):"] + [f"  - {flag}" for flag in g.flags]
        lines.append("")
    idle = sorted({g.learner for g in graded if not g.skipped and g.results
                   and all(r.status is Status.NOT_ATTEMPTED for r in g.results)})
    if idle:
        lines += ["## Attempted nothing", "", "Every exercise of these notebooks is still `____`:", ""]
        lines += [f"- {learner}" for learner in idle] + [""]
    lines += ["## Exercises", "", "Over the notebooks that were graded (the ones listed as not graded count in no row).",
              "", "| exercise | passed | attempted | learners | mean score | mean of the attempts |",
              "|---|---|---|---|---|---|"]
    by_exercise: dict[tuple[str, str], list[Result]] = {}
    for g in graded:
        if g.skipped:  # not graded (another lab, not a notebook...): listed above, counted in no exercise
            continue
        for r in g.results:
            if r.exercise_id != "-":
                by_exercise.setdefault((g.lab, r.exercise_id), []).append(r)
    ordered = sorted(by_exercise, key=lambda k: (k[0], _exercise_key(k[1])))
    for key in ordered:
        results = by_exercise[key]
        passed = sum(1 for r in results if r.status is Status.CORRECT)
        attempted = sum(1 for r in results if r.status is not Status.NOT_ATTEMPTED)
        top = max((r.max_score for r in results), default=0)
        mean = sum(r.score for r in results) / len(results) if results else 0
        tried = [r.score for r in results if r.status is not Status.NOT_ATTEMPTED]
        mean_tried = f"{sum(tried) / len(tried):.2f}/{_points(top)}" if tried else "-"
        lines.append(f"| {key[1]} | {passed} | {attempted} | {len(results)} | {mean:.2f}/{_points(top)} "
                     f"| {mean_tried} |")
    lines.append("")
    for key in ordered:
        failures = Counter()
        for r in by_exercise[key]:
            if r.status in (Status.INCORRECT, Status.ERROR):
                failures[_general(r.message)] += 1
        if failures:
            lines += [f"### {key[1]}: most common problems", ""]
            lines += [f"- {count} × {message}" for message, count in failures.most_common(5)]
            lines.append("")
    return "\n".join(lines)


SUMMARY_CHARACTERS = 240  #: of a failure message in summary.md (the feedback has the whole message)


def _general(message: str) -> str:
    """A failure message with file paths shortened, so the same failure counts once."""
    text = re.sub(r"(/[^\s:]+)+/([^/\s:]+)", r"\2", " ".join(message.split()))
    if len(text) > SUMMARY_CHARACTERS:  # cut at a word, and say so
        text = text[:SUMMARY_CHARACTERS].rsplit(" ", 1)[0] + " …"
    return text or "(no message)"


def write_reports(graded: list[Graded], out: Path, messages: list[str] = ()) -> dict:
    """Write gradebook.csv, totals.csv, summary.md and feedback/ (Markdown and HTML), each atomically."""
    from course.grading.store import atomic_write

    out = Path(out)
    return {
        "gradebook": write_gradebook(graded, out),
        "totals": atomic_write(out / "totals.csv", _csv(TOTAL_COLUMNS, totals_rows(graded))),
        "summary": atomic_write(out / "summary.md", summary_text(graded, list(messages))),
        "feedback": write_feedback(graded, out),
    }


def write_feedback(graded: list[Graded], out: Path) -> list[Path]:
    """Write ``out/feedback/<learner>.md`` and ``.html`` for every learner; return the Markdown paths."""
    from course.grading.store import atomic_write

    folder = Path(out) / "feedback"
    by_learner: dict[str, list[Graded]] = {}
    for g in graded:
        by_learner.setdefault(g.learner, []).append(g)
    written = []
    for learner, items in sorted(by_learner.items()):
        written.append(atomic_write(folder / feedback_filename(learner), feedback_text(learner, items)))
        atomic_write(folder / feedback_filename(learner, ".html"), feedback_html(learner, items))
    return written
