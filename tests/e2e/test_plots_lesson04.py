"""Lesson 04's cost story plot renders in JupyterLab (Chromium, Playwright): saved and drawn live.

Two views of the same figure (``course.toolkit.cost_story.cost_plot``):

* the **saved output** of solutions/04-patterns.ipynb, opened in JupyterLab without running it
  (what a reader of the solution sees, and what ``make outputs`` keeps): the cell that draws the
  plot shows a PNG image that the browser decoded, of a plot's size;
* the plot **drawn live** by a kernel of the course's venv, in a probe notebook that calls the
  same function on small figures, as lab 04 does when a learner runs it (labs ship without
  outputs).

A screenshot of each plot goes to tests/e2e/artifacts/.
"""

from __future__ import annotations

import json

import pytest

from test_notebooks_in_browser import (close_notebooks, lab_page, open_notebook, run_all_cells,  # noqa: F401
                                       wait_for_run, wait_until)

pytestmark = pytest.mark.e2e

SOLUTION = "solutions/04-patterns.ipynb"
PLOT_CALL = "cost_story.cost_plot("

# Every code cell's images, in cell order: whether each is decoded and its natural size.
IMAGES_JS = """
() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return null;
  return [...panel.querySelectorAll('.jp-Notebook .jp-Cell.jp-CodeCell')].map(cell =>
    [...cell.querySelectorAll('.jp-OutputArea-output[data-mime-type="image/png"] img')].map(img => ({
      complete: img.complete, width: img.naturalWidth, height: img.naturalHeight,
      shown: img.getBoundingClientRect().width,
    })));
}
"""

PROBE_CELLS = [
    "import matplotlib.pyplot as plt\nfrom course.toolkit import cost_story",
    "client = cost_story.client_costs({'10 KB': 70, '500 KB': 3_500})\n"
    "cost_story.cost_plot(client, None)\n"
    "plt.show()",
]


def plot_cell(path) -> int:
    """The index, among the notebook's code cells, of the cell that draws the cost plot."""
    code = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    found = [i for i, c in enumerate(code) if PLOT_CALL in "".join(c["source"])]
    assert len(found) == 1, f"{path.name}: {len(found)} cells call {PLOT_CALL}"
    return found[0]


def rendered(page, index: int):
    """The images of code cell ``index`` once every one is decoded and laid out, else None."""
    images = (page.evaluate(IMAGES_JS) or [])
    if index >= len(images) or not images[index]:
        return None
    return images[index] if all(i["complete"] and i["width"] and i["shown"] for i in images[index]) else None


def assert_a_plot(images, where: str) -> None:
    assert len(images) == 1, f"{where}: {len(images)} images, expected the one cost plot"
    image = images[0]
    # cost_plot is 11 x 4.2 inches: at the inline backend's 72 to 100 dpi, some 790 to 1100 pixels wide
    assert image["width"] >= 600 and 2.0 <= image["width"] / image["height"] <= 3.2, f"{where}: {image}"


def shoot(page, index: int, path) -> None:
    cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell.jp-CodeCell").nth(index)
    cell.scroll_into_view_if_needed()
    path.parent.mkdir(parents=True, exist_ok=True)
    cell.screenshot(path=str(path))
    print(f"screenshot: {path}")


def test_the_solutions_saved_cost_plot_renders(lab_page, lab_server, artifacts):
    page = lab_page
    index = plot_cell(lab_server.root / SOLUTION)
    saved = json.loads((lab_server.root / SOLUTION).read_text())["cells"]
    outputs = [c for c in saved if c["cell_type"] == "code"][index]["outputs"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "the solution has no saved plot: make outputs"
    try:
        open_notebook(page, lab_server, SOLUTION)
        # JupyterLab renders cells as they scroll into view: bring the plot's cell there, then wait
        page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell.jp-CodeCell").nth(index) \
            .scroll_into_view_if_needed()
        images = wait_until(lambda: rendered(page, index), 60, "the saved cost plot to render")
        assert_a_plot(images, f"{SOLUTION}, saved output")
        shoot(page, index, artifacts / "lesson04-cost-plot-saved.png")
    finally:
        close_notebooks(page, lab_server)


def test_the_cost_plot_draws_live_in_a_kernel(lab_page, lab_server, artifacts):
    page = lab_page
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in PROBE_CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    relative = "probe/cost-plot-probe.ipynb"
    nbformat.write(notebook, lab_server.root / relative)
    try:
        open_notebook(page, lab_server, relative)
        run_all_cells(page)
        snap = wait_for_run(page, len(PROBE_CELLS), 180)
        errors = [o["text"][:300] for c in snap["cells"] for o in c["outputs"] if "Traceback" in o["text"]
                  or "error" in o["mime"]]
        assert not errors, errors
        images = wait_until(lambda: rendered(page, 1), 60, "the live cost plot to render")
        assert_a_plot(images, "the probe's live plot")
        shoot(page, 1, artifacts / "lesson04-cost-plot-live.png")
    finally:
        close_notebooks(page, lab_server)
