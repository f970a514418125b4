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
import stat
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


MAX_NOTEBOOK_BYTES = 50_000_000  #: larger files are refused before a byte of them is read
MAX_DEPTH = 64  #: deeper JSON nesting is refused (course notebooks are 8 deep)


def read_notebook(path: str | Path, *, strict: bool = True, max_bytes: int | None = MAX_NOTEBOOK_BYTES,
                  ) -> nbformat.NotebookNode:
    """Read a v4 notebook from ``path``; raise NotebookError naming the file if it is not one.

    ``strict`` also validates it against the nbformat schema (the grader reads
    learners' files leniently: a notebook that runs is graded, and saved
    outputs nested deeper than :data:`MAX_DEPTH` are dropped).  Whatever the
    file holds, the only exception is NotebookError: a file over ``max_bytes``
    (checked with ``stat`` before reading; None for no limit), one that is not
    a regular file, JSON nested deeper than :data:`MAX_DEPTH`, or cells that
    are not a list of cell objects are refused with the reason.
    """
    path = Path(path)
    data = _notebook_json(path, strict, max_bytes)
    _check_shape(path, data)
    try:
        from nbformat import versions
        from nbformat.reader import get_version

        major, minor = get_version(data)
        if major not in versions:
            raise ValueError(f"unsupported nbformat version {major!r}")
        notebook = versions[major].to_notebook_json(data, minor=minor)
        notebook = nbformat.convert(notebook, 4)
        try:
            nbformat.validate(notebook)  # as nbformat.reads does (it also repairs duplicate cell ids)
        except nbformat.ValidationError:
            if strict:
                raise
    except Exception as error:  # nbformat raises several kinds of errors
        first = (str(error).splitlines() or [type(error).__name__])[0]
        raise NotebookError(f"{path}: not a valid Jupyter notebook ({first})") from error
    return notebook


def _notebook_json(path: Path, strict: bool, max_bytes: int | None) -> dict:
    """The file's JSON, within the size and depth limits, if it has a notebook's top-level keys."""
    data = _load_json(path, max_bytes)
    _limit_depth(path, data, strict)
    if not isinstance(data, dict) or "cells" not in data or "nbformat" not in data:
        raise NotebookError(f"{path}: not a Jupyter notebook (no 'cells'/'nbformat' keys)")
    return data


def _load_json(path: Path, max_bytes: int | None) -> Any:
    try:
        info = path.stat()
    except OSError as error:
        raise NotebookError(f"{path}: cannot be read ({error})") from error
    if not stat.S_ISREG(info.st_mode):
        raise NotebookError(f"{path}: not a regular file")
    if max_bytes is not None and info.st_size > max_bytes:
        raise NotebookError(f"{path}: the file is {_megabytes(info.st_size)}; notebooks over "
                            f"{_megabytes(max_bytes)} are not read (clear its outputs)")
    try:
        with path.open("rb") as stream:  # read at most max_bytes + 1: the file may grow after stat
            raw = stream.read() if max_bytes is None else stream.read(max_bytes + 1)
    except OSError as error:
        raise NotebookError(f"{path}: cannot be read ({error})") from error
    if max_bytes is not None and len(raw) > max_bytes:
        raise NotebookError(f"{path}: the file grew past {_megabytes(max_bytes)} while it was read")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotebookError(f"{path}: cannot be read ({error})") from error
    del raw
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"{path}: not valid JSON ({error})") from error
    except RecursionError:
        raise NotebookError(f"{path}: not a Jupyter notebook (its JSON is nested too deeply to read)") from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise NotebookError(f"{path}: not valid JSON ({error})") from error
    return data


def _limit_depth(path: Path, data: Any, strict: bool) -> None:
    """Refuse JSON nested deeper than :data:`MAX_DEPTH`; leniently, only drop saved outputs that deep.

    (A learner may display a deeply nested document: its saved output is not
    needed to grade the notebook, so it costs the notebook nothing.)
    """
    cells = data.get("cells") if isinstance(data, dict) else None
    if not strict and isinstance(cells, list):
        for cell in cells:
            outputs = cell.get("outputs") if isinstance(cell, dict) else None
            if isinstance(outputs, list) and _depth(outputs, MAX_DEPTH - 3) > MAX_DEPTH - 3:
                cell["outputs"] = []
    if _depth(data, MAX_DEPTH) > MAX_DEPTH:
        raise NotebookError(f"{path}: not a Jupyter notebook (its JSON is nested more than "
                            f"{MAX_DEPTH} levels deep)")


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size < 10_000_000 else f"{size // 1_000_000} MB"


def _depth(data: Any, limit: int) -> int:
    """The nesting depth of ``data`` (lists and dicts), counted without recursion; stops past ``limit``."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def _check_shape(path: Path, data: dict) -> None:
    """Refuse a notebook whose cells or metadata have a shape no code reading notebooks expects."""
    if not isinstance(data.get("metadata", {}), dict):
        raise NotebookError(f"{path}: not a Jupyter notebook (its metadata is not an object)")
    cells = data["cells"]
    if not isinstance(cells, list):
        raise NotebookError(f"{path}: not a Jupyter notebook ('cells' is not a list)")
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f"{path}: not a Jupyter notebook (cell {index} is not a cell)")
        source = cell.get("source", "")
        if not (isinstance(source, str) or isinstance(source, list) and all(isinstance(s, str) for s in source)):
            raise NotebookError(f"{path}: not a Jupyter notebook (cell {index}'s source is not text)")
        if not isinstance(cell.get("metadata", {}), dict):
            raise NotebookError(f"{path}: not a Jupyter notebook (cell {index}'s metadata is not an object)")
        if cell["cell_type"] == "code" and not isinstance(cell.get("outputs", []), list):
            raise NotebookError(f"{path}: not a Jupyter notebook (cell {index}'s outputs are not a list)")


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
    """The notebook's ``metadata.course`` dict (empty when absent or malformed, at either level)."""
    metadata = notebook.get("metadata")
    data = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
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


def read_lab_id(path: str | Path) -> str | None:
    """The lab of the notebook file at ``path``, as :func:`lab_id_of` finds it, without converting or
    validating the notebook (a class's notebooks are sorted by lab before any is read in full).

    Raises NotebookError for a file :func:`read_notebook` would refuse before converting it.
    """
    path = Path(path)
    return lab_id_of(_notebook_json(path, False, MAX_NOTEBOOK_BYTES), path)


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
