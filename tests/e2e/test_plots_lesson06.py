"""Lesson 06's plot of the audit (the cell tagged ``plot:audit``): saved in the solution, shown by JupyterLab.

Two checks.  Without a browser: the solution notebook saves the plot as a PNG output of that cell (a
``make outputs`` that lost it, or a cell that printed instead of drawing, fails here).  In Chromium
(``-m e2e``): JupyterLab shows the saved PNG as a loaded image when the notebook opens, and draws it
again when the notebook is run through Run > Run All Cells, as a learner runs it.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from test_notebooks_in_browser import close_notebooks, open_lab, open_notebook, run_all_cells, wait_for_run

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "solutions/06-anti-patterns-and-audit.ipynb"
TAG = "plot:audit"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RUN_TIMEOUT = 600

# The natural size of every PNG image in the given cell (by its position among all cells of the notebook).
IMAGES_JS = """
index => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const cell = panel ? panel.querySelectorAll('.jp-Notebook .jp-Cell')[index] : null;
  if (!cell) return null;
  return [...cell.querySelectorAll('.jp-OutputArea-output[data-mime-type="image/png"] img')]
    .map(img => ({complete: img.complete, width: img.naturalWidth, height: img.naturalHeight}));
}
"""


def plot_cell() -> tuple[int, dict]:
    """The position of the plot cell among all cells of the solution notebook, and the cell."""
    cells = json.loads((ROOT / NOTEBOOK).read_text())["cells"]
    found = [(k, c) for k, c in enumerate(cells) if TAG in c.get("metadata", {}).get("tags", [])]
    assert len(found) == 1, f"{NOTEBOOK} should have one cell tagged {TAG}, it has {len(found)}"
    return found[0]


def test_the_solution_saves_the_plot():
    """The plot cell's saved output is a PNG of a figure of some size (two panels, 11 by 3.8 inches)."""
    _, cell = plot_cell()
    images = [o["data"]["image/png"] for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 1, f"the {TAG} cell saves {len(images)} PNG outputs: run make outputs"
    png = base64.b64decode(images[0])
    assert png.startswith(PNG_SIGNATURE)
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert width > 2 * height > 400, (width, height)


def _shown(page, index: int) -> list[dict]:
    images = page.evaluate(IMAGES_JS, index)
    assert images is not None, f"cell {index} of {NOTEBOOK} is not in the page"
    return images


@pytest.mark.e2e
def test_the_plot_shows_in_jupyterlab(browser, lab_server, artifacts):
    """Opened, the notebook shows the saved plot; run through Run All Cells, it draws it again."""
    index, _ = plot_cell()
    code_cells = sum(1 for c in json.loads((ROOT / NOTEBOOK).read_text())["cells"] if c["cell_type"] == "code")
    page = browser.new_page()
    try:
        open_lab(page, lab_server, "plots06")
        open_notebook(page, lab_server, NOTEBOOK)
        saved = _shown(page, index)
        assert len(saved) == 1 and saved[0]["complete"] and saved[0]["width"] > 2 * saved[0]["height"] > 400, saved
        run_all_cells(page)
        wait_for_run(page, code_cells, RUN_TIMEOUT)
        drawn = _shown(page, index)
        assert len(drawn) == 1 and drawn[0]["complete"] and drawn[0]["width"] > 2 * drawn[0]["height"] > 400, drawn
        page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index).screenshot(
            path=str(artifacts / "solutions-06-plot-audit.png"))
    finally:
        close_notebooks(page, lab_server)
        page.close()
