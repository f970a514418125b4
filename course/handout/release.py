"""Generate the learners' lab notebooks from the solution notebooks.

The solutions are the single source.  In a solution notebook, the reference
code sits between a line ``# BEGIN SOLUTION`` and a line ``# END SOLUTION``.
In the lab, each such block becomes

* ``<indent>return ____  # your code here`` when the marker is indented
  (the block is a function body), or
* one line ``<name> = ____  # your answer`` per name the block binds with a
  top-level simple assignment, when the marker is at top level.

Cells tagged ``solution-only`` are dropped; every code cell loses its outputs
and execution count; ``metadata.course`` records the lab id, the course
version, the solution it came from and the SHA-256 of its cells, so that a
lab someone has edited is never overwritten silently.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from course.engine.version import VERSION
from course.handout.notebooks import (
    METADATA_KEY,
    SOLUTION_ONLY_TAG,
    NotebookError,
    cell_tags,
    content_sha256,
    course_metadata,
    lab_id_of,
    notebook_text,
    read_notebook,
)

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
SOLUTION_GLOB = "[0-9][0-9]-*.ipynb"
NBVAL_TAG_PREFIX = "nbval-"


class ReleaseError(ValueError):
    """A solution notebook breaks the release conventions; the message says where."""


def strip_solution(source: str, where: str) -> str:
    """Return cell ``source`` with every solution block replaced by its placeholder.

    ``where`` names the notebook and cell for error messages.
    """
    lines = source.split("\n")
    out: list[str] = []
    block: list[str] | None = None
    indent = ""
    begin_line = 0
    for number, line in enumerate(lines, start=1):
        marker = line.strip()
        if marker == BEGIN:
            if block is not None:
                raise ReleaseError(
                    f"{where}, line {number}: '{BEGIN}' inside the block opened at line "
                    f"{begin_line}; solution blocks cannot nest"
                )
            block, indent, begin_line = [], line[: len(line) - len(line.lstrip())], number
        elif marker == END:
            if block is None:
                raise ReleaseError(f"{where}, line {number}: '{END}' without a '{BEGIN}' before it")
            out.extend(_placeholder_lines(block, indent, where, begin_line))
            block = None
        elif block is not None:
            block.append(line)
        else:
            out.append(line)
    if block is not None:
        raise ReleaseError(f"{where}, line {begin_line}: '{BEGIN}' is never closed by '{END}'")
    return "\n".join(out)


def _placeholder_lines(block: list[str], indent: str, where: str, line: int) -> list[str]:
    if indent:
        return [f"{indent}return ____  # your code here"]
    advice = ("put the markers inside the function body, or around top-level "
              "assignments such as `answer = ...`")
    try:
        tree = ast.parse("\n".join(block))
    except SyntaxError as error:
        raise ReleaseError(f"{where}, line {line}: the solution block is not valid Python ({error.msg})") from error
    names: list[str] = []
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            raise ReleaseError(
                f"{where}, line {line}: the top-level solution block defines "
                f"{statement.name!r}: {advice}"
            )
        targets = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        for target in targets:
            if isinstance(target, ast.Name) and target.id not in names:
                names.append(target.id)
    if not names:
        raise ReleaseError(f"{where}, line {line}: the top-level solution block binds no name: {advice}")
    return [f"{name} = ____  # your answer" for name in names]


def _drop_output_checks(cell: Any) -> None:
    """Remove nbval output-comparison tags: a lab stores no outputs to compare against."""
    tags = cell_tags(cell)
    kept = [t for t in tags if not t.startswith(NBVAL_TAG_PREFIX)]
    if len(kept) != len(tags):
        if kept:
            cell.metadata["tags"] = kept
        else:
            cell.metadata.pop("tags", None)


def make_lab(solution: nbformat.NotebookNode, lab: str, generated_from: str) -> nbformat.NotebookNode:
    """Build the lab notebook for ``solution`` (which is not modified)."""
    cells = []
    for index, cell in enumerate(solution.cells):
        if SOLUTION_ONLY_TAG in cell_tags(cell):
            continue
        cell = copy.deepcopy(cell)
        cell.get("metadata", {}).pop("execution", None)
        _drop_output_checks(cell)
        if cell.cell_type == "code":
            source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
            cell.source = strip_solution(source, f"{generated_from}, cell {index}")
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
    notebook = nbformat.v4.new_notebook()
    notebook.nbformat = solution.nbformat
    notebook.nbformat_minor = solution.nbformat_minor
    notebook.cells = cells
    metadata = copy.deepcopy(dict(solution.metadata))
    metadata.pop("widgets", None)  # the solution run's saved widget state: labs carry no outputs at all
    metadata[METADATA_KEY] = {
        "lab": lab,
        "course_version": VERSION,
        "generated_from": generated_from,
        "content_sha256": content_sha256(notebook),
    }
    notebook.metadata = nbformat.from_dict(metadata)
    return notebook


@dataclass(frozen=True)
class Planned:
    """One lab to generate: where it goes and its exact text."""

    solution: Path
    target: Path
    text: str


@dataclass
class Report:
    """What a release (or a check) found, file by file."""

    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  #: "path: why"
    errors: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)  #: --check findings

    @property
    def ok(self) -> bool:
        """True when nothing was refused, broken or out of date."""
        return not (self.refused or self.errors or self.differences)


def solution_notebooks(solutions_dir: Path) -> list[Path]:
    """The solution notebooks (``NN-*.ipynb``) in ``solutions_dir``, sorted by name."""
    return sorted(p for p in Path(solutions_dir).glob(SOLUTION_GLOB) if p.is_file())


def plan(solutions_dir: Path, labs_dir: Path, report: Report) -> list[Planned]:
    """Generate every lab in memory; problems go to ``report.errors``."""
    planned = []
    for path in solution_notebooks(solutions_dir):
        generated_from = f"{Path(solutions_dir).name}/{path.name}"
        try:
            solution = read_notebook(path)
            lab = lab_id_of(solution, path)
            notebook = make_lab(solution, lab, generated_from)
        except (NotebookError, ReleaseError) as error:
            report.errors.append(str(error))
            continue
        planned.append(Planned(path, Path(labs_dir) / path.name, notebook_text(notebook)))
    return planned


def edited_reason(target: Path) -> str | None:
    """Why an existing lab must not be overwritten (someone edited it), or None if it is safe."""
    try:
        existing = read_notebook(target)
    except NotebookError as error:
        return f"it is not a notebook generated by `course release` ({error})"
    recorded = course_metadata(existing).get("content_sha256")
    if not recorded:
        return "it has no metadata.course.content_sha256, so it was not generated by `course release`"
    if recorded != content_sha256(existing):
        return "its cells differ from what `course release` generated (someone edited it)"
    return None


def release(solutions_dir: Path, labs_dir: Path, *, force: bool = False) -> Report:
    """Write ``labs_dir/NN-*.ipynb`` for every solution; never clobber an edited lab unless ``force``."""
    report = Report()
    planned = plan(solutions_dir, labs_dir, report)
    if report.errors:
        return report  # all or nothing: a broken solution writes no lab
    Path(labs_dir).mkdir(parents=True, exist_ok=True)
    for item in planned:
        if item.target.exists():
            if item.target.read_text(encoding="utf-8", errors="replace") == item.text:
                report.unchanged.append(item.target)
                continue
            reason = None if force else edited_reason(item.target)
            if reason:
                report.refused.append(f"{item.target}: not overwritten because {reason}; "
                                      f"use --force to replace it")
                continue
        item.target.write_text(item.text, encoding="utf-8")
        report.written.append(item.target)
    return report


def check(solutions_dir: Path, labs_dir: Path) -> Report:
    """Compare ``labs_dir`` with what :func:`release` would write; write nothing."""
    report = Report()
    planned = plan(solutions_dir, labs_dir, report)
    for item in planned:
        if not item.target.exists():
            report.differences.append(f"{item.target}: missing (generate it from {item.solution})")
        elif item.target.read_text(encoding="utf-8", errors="replace") != item.text:
            report.differences.append(f"{item.target}: differs from what {item.solution} generates")
        else:
            report.unchanged.append(item.target)
    expected = {item.target.name for item in planned} | {
        p.name for p in solution_notebooks(solutions_dir)
    }
    for extra in sorted(Path(labs_dir).glob(SOLUTION_GLOB)):
        if extra.name not in expected:
            report.differences.append(f"{extra}: extra (no solution {extra.name} in {solutions_dir})")
    return report
