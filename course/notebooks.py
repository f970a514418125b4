"""Reading, writing and inspecting course notebooks.

Conventions shared by ``course release`` and ``course grade``:

* an answer cell is a code cell tagged ``exercise:<lab>.<k>`` (e.g. ``exercise:01.2``);
* a cell tagged ``solution-only`` exists only in the solution notebook;
* a lab notebook records where it came from under ``metadata.course``
  (``lab``, ``course_version``, ``generated_from``, ``content_sha256``).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import nbformat

EXERCISE_TAG_PREFIX = "exercise:"
SOLUTION_ONLY_TAG = "solution-only"
METADATA_KEY = "course"
_EXERCISE_ID = re.compile(r"^\d{2}\.\d+$")
_LAB_PREFIX = re.compile(r"^(\d{2})-.+\.ipynb$")


class NotebookError(ValueError):
    """A notebook file cannot be used; the message names the file and the reason."""


def read_notebook(path: str | Path, *, strict: bool = True) -> nbformat.NotebookNode:
    """Read a v4 notebook from ``path``; raise NotebookError naming the file if it is not one.

    ``strict`` also validates it against the nbformat schema (the grader reads
    learners' files leniently: a notebook that runs is graded).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise NotebookError(f"{path}: cannot be read ({error})") from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"{path}: not valid JSON ({error})") from error
    if not isinstance(data, dict) or "cells" not in data or "nbformat" not in data:
        raise NotebookError(f"{path}: not a Jupyter notebook (no 'cells'/'nbformat' keys)")
    try:
        notebook = nbformat.reads(text, as_version=4)
        if strict:
            nbformat.validate(notebook)
    except Exception as error:  # nbformat raises several kinds of errors
        raise NotebookError(f"{path}: not a valid Jupyter notebook ({str(error).splitlines()[0]})") from error
    return notebook


def notebook_text(notebook: nbformat.NotebookNode) -> str:
    """Serialise ``notebook`` the way the course writes it: indent 1, sorted keys, final newline."""
    text = nbformat.writes(notebook, version=4)
    return text if text.endswith("\n") else text + "\n"


def write_notebook(notebook: nbformat.NotebookNode, path: str | Path) -> None:
    """Write ``notebook`` to ``path`` deterministically (see :func:`notebook_text`)."""
    Path(path).write_text(notebook_text(notebook), encoding="utf-8")


def cell_tags(cell: Any) -> list[str]:
    """The tags of ``cell`` (an empty list when it has none)."""
    tags = cell.get("metadata", {}).get("tags", [])
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def exercise_ids_of(cell: Any) -> list[str]:
    """The exercise ids a code cell answers, from its ``exercise:NN.k`` tags."""
    if cell.get("cell_type") != "code":
        return []
    ids = []
    for tag in cell_tags(cell):
        if tag.startswith(EXERCISE_TAG_PREFIX):
            ident = tag[len(EXERCISE_TAG_PREFIX):].strip()
            if _EXERCISE_ID.match(ident):
                ids.append(ident)
    return ids


def answer_cells(notebook: nbformat.NotebookNode) -> dict[str, list[int]]:
    """Map each exercise id to the indexes of the cells tagged as its answer, in order."""
    found: dict[str, list[int]] = {}
    for index, cell in enumerate(notebook.cells):
        for ident in exercise_ids_of(cell):
            found.setdefault(ident, []).append(index)
    return found


def course_metadata(notebook: nbformat.NotebookNode) -> dict:
    """The notebook's ``metadata.course`` dict (empty when absent or malformed)."""
    data = notebook.get("metadata", {}).get(METADATA_KEY, {})
    return dict(data) if isinstance(data, dict) else {}


def lab_from_filename(filename: str) -> str | None:
    """The lab id a file name points to: a known lab notebook name, else its ``NN-`` prefix."""
    from course.lessons import lab_of_notebook

    try:
        lab = lab_of_notebook(filename)
    except Exception:  # a lesson module that cannot be imported must not stop the lookup
        lab = None
    if lab:
        return lab
    match = _LAB_PREFIX.match(filename)
    return match.group(1) if match else None


def lab_id_of(notebook: nbformat.NotebookNode, path: str | Path) -> str | None:
    """The lab a notebook belongs to: ``metadata.course.lab``, else from its file name."""
    lab = course_metadata(notebook).get("lab")
    if isinstance(lab, str) and re.fullmatch(r"\d{2}", lab):
        return lab
    return lab_from_filename(Path(path).name)


def content_sha256(notebook: nbformat.NotebookNode) -> str:
    """SHA-256 of the cells' types, sources and tags: what a learner's edit would change."""
    cells = [
        {"cell_type": c.get("cell_type"), "source": _source(c), "tags": cell_tags(c)}
        for c in notebook.cells
    ]
    blob = json.dumps(cells, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)
