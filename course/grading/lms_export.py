"""``course export DIR --lms canvas|moodle --roster ROSTER.csv --out FILE.csv``: grades an LMS imports.

The grades come from ``DIR/gradebook.csv`` (written by ``course grade`` or ``course merge``): one column per
lab (its points, summed over the learner's notebooks of that lab), or one per exercise with
``--per-exercise``.  Learners are matched to the roster's rows by one roster column (``--match``).

* **Canvas** (Grades > Import): the columns ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``,
  ``Section``, then one column per assignment, as Canvas's gradebook export has them; a column whose name
  is not an existing assignment makes a new one.  The roster is best a Canvas gradebook export (its
  identity columns are copied); learners are matched by ``SIS Login ID`` unless ``--match`` says otherwise.
* **Moodle** (Grade administration > Import > CSV file): an identifier column (the roster's ``--match``
  column, ``username`` by default, or ``email``, ``idnumber``...), then one column per grade item; at import,
  "Map from" is that column and each grade column is mapped to its grade item.

A roster learner who was not graded gets an empty cell (no grade, not a zero); a graded learner who is not in
the roster is listed on stderr and in ``DIR/summary.md``, never dropped silently.  Every cell is escaped
against spreadsheet formulas as in ``gradebook.csv`` (:func:`course.grading.gradebook.spreadsheet_safe`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from course.grading.gradebook import _exercise_key, _points, spreadsheet_safe
from course.grading.submissions import UsageError

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
DEFAULT_MATCH = {"canvas": "SIS Login ID", "moodle": "username"}
SUMMARY_HEADING = "## Graded but not in the roster"


@dataclass
class Export:
    """What :func:`export` wrote."""

    target: Path
    columns: list[str]
    rows: int
    ungraded: list[str] = field(default_factory=list)  #: roster entries with no grade (empty cells)
    unmatched: list[str] = field(default_factory=list)  #: graded learners not in the roster


def _unescape(value: str) -> str:
    """A gradebook cell as it was before :func:`spreadsheet_safe` (which only ever adds a leading ``'``)."""
    return value[1:] if value.startswith("'") and spreadsheet_safe(value[1:]) == value else value


def _read_csv(path: Path, what: str) -> tuple[list[str], list[dict[str, str]]]:
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as stream:
            reader = csv.DictReader(stream)
            rows = list(reader)
            return list(reader.fieldnames or []), rows
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise UsageError(f"cannot read the {what} {path}: {error}") from error


def _lab_title(lab: str) -> str:
    from course.grading.runner import lab_exercises

    try:
        return lab_exercises(lab)[0]
    except (ValueError, ImportError):
        return ""


def grade_columns(gradebook: list[dict[str, str]], per_exercise: bool) -> tuple[list[str], dict]:
    """(column names, {learner: {column: points}}) from the gradebook's rows."""
    keys: dict[str, tuple] = {}
    scores: dict[str, dict[str, float]] = {}
    titles: dict[str, str] = {}
    for row in gradebook:
        learner, lab, exercise = (_unescape(row[c]) for c in ("learner", "lab", "exercise"))
        if lab == "-":
            continue  # a file that is no lab's notebook: no LMS column to put it in
        if lab not in titles:
            titles[lab] = _lab_title(lab)
        if per_exercise:
            if exercise == "-":
                continue
            column, order = f"Lab {lab} exercise {exercise}", (lab, _exercise_key(exercise))
        else:
            column, order = f"Lab {lab}: {titles[lab]}" if titles[lab] else f"Lab {lab}", (lab,)
        keys[column] = order
        points = scores.setdefault(learner, {})
        points[column] = points.get(column, 0.0) + float(row["score"])
    return sorted(keys, key=keys.get), scores


def export(folder: Path, lms: str, roster: Path, target: Path, *, per_exercise: bool = False,
           match: str | None = None) -> Export:
    """Write ``target`` for ``lms`` from ``folder``'s gradebook and the ``roster`` (see the module docstring).

    Raises :class:`~course.grading.submissions.UsageError` on an unknown LMS, an unreadable gradebook or
    roster, or a roster without the ``match`` column (or, for Canvas, without the columns Canvas needs).
    """
    if lms not in DEFAULT_MATCH:
        raise UsageError(f"--lms {lms}: expected canvas or moodle")
    match = match or DEFAULT_MATCH[lms]
    gradebook_file = Path(folder) / "gradebook.csv"
    if not gradebook_file.is_file():
        raise UsageError(f"{folder} has no gradebook.csv: run `course grade` or `course merge` there first")
    _, gradebook = _read_csv(gradebook_file, "gradebook")
    fields, people = _read_csv(roster, "roster")
    if match not in fields:
        raise UsageError(f"the roster {roster} has no column {match!r} (its columns: {', '.join(fields)}); "
                         f"choose the column that holds the learners' folder names with --match")
    columns, scores = grade_columns(gradebook, per_exercise)
    if lms == "canvas":
        identity = list(CANVAS_COLUMNS) if match in CANVAS_COLUMNS else [*CANVAS_COLUMNS, match]
        lacking = [c for c in ("SIS Login ID", "Section") if c not in fields]
        if lacking:
            raise UsageError(f"the roster {roster} lacks the column(s) {', '.join(lacking)} that Canvas's "
                             f"import needs: use a Canvas gradebook export as the roster")
    else:
        identity = [match]
    rows, ungraded, listed = [], [], set()
    for person in people:
        who = (person.get(match) or "").strip()
        if not who:
            continue
        listed.add(who)
        points = scores.get(who)
        if points is None:
            ungraded.append(who)
        row = {c: person.get(c, "") for c in identity}
        row.update({c: _points(points[c]) if points and c in points else "" for c in columns})
        rows.append(row)
    header = identity + columns
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows({key: spreadsheet_safe(value) for key, value in row.items()} for row in rows)
    from course.grading.store import atomic_write

    atomic_write(Path(target), buffer.getvalue())
    unmatched = sorted(set(scores) - listed)
    _note_in_summary(Path(folder) / "summary.md", lms, Path(target), match, unmatched)
    return Export(Path(target), header, len(rows), ungraded, unmatched)


def _note_in_summary(summary: Path, lms: str, target: Path, match: str, unmatched: list[str]) -> None:
    """Replace this LMS's section of graded learners not in the roster in ``summary.md`` (none: no section)."""
    from course.grading.store import atomic_write

    heading = f"{SUMMARY_HEADING} ({lms})"
    text = summary.read_text(encoding="utf-8") if summary.is_file() else ""
    start = text.find(heading)
    if start >= 0:
        end = text.find("\n## ", start + len(heading))
        text = text[:start].rstrip("\n") + "\n" + (text[end + 1:] if end >= 0 else "")
    if unmatched:
        text = text.rstrip("\n") + (f"\n\n{heading}\n\nNot in {target.name} (no roster row whose {match!r} is "
                                    f"the learner's name), so not exported:\n\n"
                                    + "".join(f"- {learner}\n" for learner in unmatched))
    if text:
        atomic_write(summary, text if text.endswith("\n") else text + "\n")
