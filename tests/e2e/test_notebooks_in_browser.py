"""Every lab and solution, run through JupyterLab's UI in Chromium (Playwright).

JupyterLab is loaded once, in one page; each notebook is opened in it (as a double click in
the file browser opens it), run, checked and closed, and its kernel shut down.  For each
notebook: open it, Run > Run All Cells, wait until every code cell has an execution count
and the kernel is idle, then assert that

* no cell shows an error (traceback) output;
* every ``.check()`` cell shows the HTML result box (``.course-result``); in solutions
  every verdict is Correct, or "Cannot check here" for a capability this backend lacks;
* every widget renders (no "Error displaying widget", no "model not found");
* in each widget explorer of a solution, moving a slider or pressing a button changes what
  it shows.  A lab's explorers are the same cells as its solution's (labs are generated
  from the solutions, only the answers replaced: ``course release --check`` and
  tests/test_release.py hold them to it), so a lab's widgets are checked to render, and
  their interaction is the solution's.

A screenshot of each notebook goes to tests/e2e/artifacts/, in the dark theme as well
for every solution and for lab 00 (whose cells show the "not attempted" verdicts).
A tiny widget notebook written at run time checks the widget machinery itself, so
the widget assertions are exercised even before any lesson has an explorer.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import time
from pathlib import Path

import pytest


pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]

RUN_TIMEOUT = float(os.environ.get("E2E_RUN_TIMEOUT", "600"))  # seconds per notebook


def notebooks() -> list[str]:
    found = sorted(
        str(path.relative_to(ROOT))
        for folder in ("labs", "solutions")
        for path in (ROOT / folder).glob("*.ipynb")
    )
    wanted = [g.strip() for g in os.environ.get("E2E_NOTEBOOKS", "").split(",") if g.strip()]
    if wanted:
        found = [n for n in found if any(fnmatch.fnmatch(n, g) for g in wanted)]
    return found


def code_cells(path: Path) -> list[dict]:
    cells = json.loads(path.read_text())["cells"]
    return [c for c in cells if c["cell_type"] == "code"]


def calls_check(source: str | list[str]) -> bool:
    """True if an uncommented line of the cell calls ``.check()``."""
    text = "".join(source) if isinstance(source, list) else source
    return any(re.search(r"\.check\(\s*\)", line.split("#", 1)[0]) for line in text.splitlines())


# ---- the page ------------------------------------------------------------------------------

# One snapshot of the notebook's code cells, read from the DOM in one round trip.
SNAPSHOT_JS = """
() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return null;
  const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
  const cells = [...panel.querySelectorAll('.jp-Notebook .jp-Cell.jp-CodeCell')].map(cell => {
    const prompt = cell.querySelector('.jp-InputArea-prompt');
    const outputs = [...cell.querySelectorAll('.jp-OutputArea-output')].map(o => ({
      mime: o.getAttribute('data-mime-type') || '',
      text: (o.innerText || '').slice(0, 2000),
    }));
    const results = [...cell.querySelectorAll('.course-result')].map(r => ({
      status: r.getAttribute('data-status') || '',
      text: (r.innerText || '').trim(),
      typeset: r.querySelectorAll('mjx-container, .MathJax, .MathJax_Preview, math').length,
    }));
    return {
      prompt: prompt ? prompt.innerText.trim() : '',
      outputs,
      results,
      widgets: cell.querySelectorAll('.jp-OutputArea-output .jupyter-widgets').length,
    };
  });
  return {
    status: indicator ? (indicator.getAttribute('data-status') || '') : '',
    kernel: (document.querySelector('.jp-KernelStatus') || {}).innerText || '',
    cells,
  };
}
"""


def snapshot(page) -> dict | None:
    return page.evaluate(SNAPSHOT_JS)


def executed(prompt: str) -> bool:
    return re.fullmatch(r"\[\d+\]:?", prompt) is not None


def wait_until(predicate, timeout: float, what: str, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


APP_READY_JS = "async () => { if (!window.jupyterapp) return false; await window.jupyterapp.restored; return true; }"


def open_lab(page, server, workspace: str) -> None:
    """Load JupyterLab (a fresh workspace, no notebook open) and wait until it has restored."""
    url = f"{server.base_url}lab/workspaces/{workspace}?reset&token={server.token}"
    page.goto(url, wait_until="domcontentloaded", timeout=120_000)
    wait_until(lambda: page.evaluate(APP_READY_JS), 120, "JupyterLab to start", interval=0.25)
    dialogs = page.locator(".jp-Dialog")
    assert not dialogs.count(), f"JupyterLab opened with a dialog: {dialogs.first.inner_text()[:300]!r}"
    # collapse the file browser so that the notebooks get the width (and the screenshots with it)
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")


def open_notebook(page, server, relative: str) -> None:
    """Open ``relative`` in the loaded JupyterLab, as a double click in the file browser does, and wait
    until its kernel is idle."""
    page.evaluate("async path => { await window.jupyterapp.commands.execute('docmanager:open', "
                  "{path, factory: 'Notebook'}); }", relative)
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell", timeout=120_000)
    # The indicator says "idle" before the kernel even connects: wait for the server's session
    # of this notebook to have an idle kernel, then for the page to show idle for a second.
    def kernel_ready():
        for session in server.api("GET", "api/sessions") or []:
            if session.get("path", "").endswith(relative) and (session.get("kernel") or {}).get("execution_state") == "idle":
                return True
        return False

    wait_until(kernel_ready, 120, f"the kernel of {relative} to start")
    since = {"t": None}

    def page_idle():
        if (snapshot(page) or {}).get("status") != "idle":
            since["t"] = None
            return False
        since["t"] = since["t"] or time.monotonic()
        return time.monotonic() - since["t"] >= 1.0

    wait_until(page_idle, 60, f"the page to show {relative}'s kernel idle", interval=0.2)


# Close every document without the "save changes?" dialog (the copies served are scratch copies).
CLOSE_ALL_JS = """() => {
  const app = window.jupyterapp;
  for (const widget of [...app.shell.widgets('main')]) {
    if (widget.context && widget.context.model) widget.context.model.dirty = false;
    widget.dispose();
  }
}"""


def close_notebooks(page, server) -> None:
    """Close every open notebook and shut down the kernels, leaving the page ready for the next one."""
    page.evaluate(CLOSE_ALL_JS)
    server.shutdown_kernels()
    wait_until(lambda: not page.locator(".jp-NotebookPanel").count(), 30, "the notebooks to close", interval=0.2)


def run_all_cells(page) -> None:
    """Run > Run All Cells, through the menu bar, as a learner would (once more if nothing starts)."""
    def started():
        snap = snapshot(page) or {"cells": []}
        return any(c["prompt"] == "[*]:" or executed(c["prompt"]) for c in snap["cells"])

    for attempt in range(2):
        page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.click()
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-item:not(.lm-mod-disabled)", has_text=re.compile(r"^Run All Cells")).first.click()
        try:
            wait_until(started, 20, "Run All Cells to start a cell", interval=0.2)
            return
        except AssertionError:
            if attempt:
                raise
            print("Run All Cells started nothing; trying again")


def wait_for_run(page, expected_cells: int, timeout: float) -> dict:
    """Until every code cell ran (or the run stopped at an error) and the kernel is idle."""
    stable = {"since": None}

    def done():
        snap = snapshot(page)
        if not snap or snap["status"] != "idle" or any(c["prompt"] == "[*]:" for c in snap["cells"]):
            stable["since"] = None
            return None
        if all(executed(c["prompt"]) for c in snap["cells"]) and len(snap["cells"]) == expected_cells:
            return snap
        # idle with cells left unrun: the run stopped (an error); idle for 3 s means it is over
        stable["since"] = stable["since"] or time.monotonic()
        return snap if time.monotonic() - stable["since"] > 3 else None

    return wait_until(done, timeout, "Run All Cells to finish")


def switch_theme(page, name: str) -> None:
    """Settings > Theme > NAME through the menu bar."""
    page.keyboard.press("Escape")
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Settings$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$")).first.hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(name)}$")).first.click()
    wait_until(lambda: page.evaluate("() => document.body.dataset.jpThemeName") == name, 30, f"theme {name}")
    page.wait_for_timeout(500)


def screenshot(page, path: Path) -> None:
    """The whole notebook: grow the viewport to the notebook's height, then shoot."""
    height = page.evaluate(
        """() => {
          const notebook = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
          if (!notebook) return 900;
          // the notebook scrolls inside its panel: take the height of what it scrolls, plus the
          // page around it (menu, toolbar, status bar)
          const inner = notebook.querySelector('.jp-WindowedPanel-inner, .jp-WindowedPanel-viewport');
          const content = Math.max(notebook.scrollHeight, inner ? inner.scrollHeight : 0);
          return content + (window.innerHeight - notebook.clientHeight);
        }"""
    )
    original = page.viewport_size
    page.set_viewport_size({"width": 1280, "height": max(900, min(int(height) + 40, 16000))})
    # JupyterLab keeps the active cell in view after a resize: scroll every scroller to the top
    # until it stays there
    for _ in range(10):
        page.wait_for_timeout(300)
        moved = page.evaluate(
            """() => { let moved = false;
                 document.querySelectorAll('.jp-NotebookPanel .jp-WindowedPanel-outer, .jp-NotebookPanel .jp-Notebook')
                   .forEach(n => { if (n.scrollTop) { n.scrollTop = 0; moved = true; } });
                 return moved; }""")
        if not moved:
            break
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    page.set_viewport_size(original)
    print(f"screenshot: {path}")


# ---- widgets -------------------------------------------------------------------------------

# What an explorer displays, minus its own controls: the text of output widgets, HTML and
# label widgets outside controls, and a digest of every image (plots).
DISPLAY_JS = """
(root) => {
  const parts = [];
  const inControl = el => el.closest('.widget-slider, .widget-button, .widget-toggle-button, '
      + '.widget-dropdown, .widget-radio, .widget-text, .widget-checkbox, .widget-readout');
  root.querySelectorAll('.widget-output, .widget-html, .widget-htmlmath, .widget-label, .widget-valid')
    .forEach(el => { if (!inControl(el)) parts.push(el.innerText); });
  root.querySelectorAll('img, canvas').forEach(el => parts.push(el.src || el.toDataURL?.() || ''));
  root.querySelectorAll('svg').forEach(el => parts.push(el.outerHTML.length + ':' + el.outerHTML.slice(-500)));
  return parts.join('\\n');
}
"""


# a widget view displayed by a cell (not the output areas nested inside Output widgets)
EXPLORERS = ('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell-outputArea > .jp-OutputArea-child'
             ' > .jp-OutputArea-output:has(> .jupyter-widgets)')


def display_digest(output) -> str:
    return hashlib.sha1(output.evaluate(DISPLAY_JS).encode()).hexdigest()


def move_slider(page, slider, keys=("ArrowRight",)) -> None:
    """Move a slider's handle with the keyboard (as a learner could), or type into its readout."""
    handle = slider.locator(".noUi-handle").first
    if handle.count():
        handle.focus()
        for key in keys:
            page.keyboard.press(key)
        return
    readout = slider.locator(".widget-readout").first
    readout.click()
    page.keyboard.press("End" if "ArrowLeft" not in keys else "Home")
    page.keyboard.press("Enter")


# a slider at an end of its range may not move: try right, then left, then the far ends
SLIDER_MOVES = (("ArrowRight",), ("ArrowLeft", "ArrowLeft"), ("Home",), ("End",))


def exercise_widgets(page) -> list[str]:
    """Interact with every explorer (a widget output holding sliders or buttons); return problems."""
    problems = []
    outputs = page.locator(EXPLORERS)
    for index in range(outputs.count()):
        output = outputs.nth(index)
        sliders = output.locator(".widget-slider:not(.mod-disabled)")
        buttons = output.locator("button.jupyter-button:not([disabled])")
        controls = [("slider", sliders.nth(i)) for i in range(sliders.count())]
        controls += [("button", buttons.nth(i)) for i in range(buttons.count())]
        if not controls:
            continue
        changed = []
        for kind, control in controls:
            before = display_digest(output)
            control.scroll_into_view_if_needed()
            for keys in (SLIDER_MOVES if kind == "slider" else [None]):
                if kind == "slider":
                    move_slider(page, control, keys)
                else:
                    control.click()
                deadline = time.monotonic() + (5 if kind == "slider" else 15)
                while time.monotonic() < deadline and display_digest(output) == before:
                    page.wait_for_timeout(200)
                if display_digest(output) != before:
                    break
            after = display_digest(output)
            label = (control.inner_text() or "").strip().splitlines()[0:1]
            changed.append((kind, label[0] if label else "", after != before))
        print(f"explorer {index}: " + ", ".join(f"{k} {l!r}: {'changed' if c else 'no change'}" for k, l, c in changed))
        if not any(c for _, _, c in changed):
            problems.append(f"explorer {index}: no slider or button changed what it displays ({changed})")
        text = output.inner_text()
        if "Traceback" in text:
            problems.append(f"explorer {index} shows an error after interaction: {text[:500]}")
    return problems


WIDGET_ERRORS = ("Error displaying widget", "model not found", "Failed to load model class",
                 "Loading widget...")


def widget_problems(page) -> list[str]:
    text = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").inner_text()
    return [f"a widget shows {message!r}" for message in WIDGET_ERRORS if message in text]


# ---- checks on a finished run --------------------------------------------------------------

def is_error_output(output: dict) -> bool:
    return output["mime"] == "application/vnd.jupyter.error" or (
        output["mime"] == "application/vnd.jupyter.stderr" and "Traceback" in output["text"])


def allowed_unsupported() -> set[str]:
    """Capabilities the default backend lacks (a "Cannot check here" naming one is fine)."""
    from course.store.backends import mongoeco_available
    from course.store.capabilities import MISSING

    backend = "mongoeco" if mongoeco_available() else "mongomock"
    return {str(capability) for capability in MISSING[backend]}


OPERATOR = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*")


def saved_operators(cell: dict) -> set[str]:
    """The ``$operator`` tokens in the plain-text form of the cell's saved course boxes (from nbclient)."""
    found = set()
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "course-result" in "".join(data.get("text/html", "")):
            found |= set(OPERATOR.findall("".join(data.get("text/plain", ""))))
    return found


def check_run(relative: str, snap: dict, cells: list[dict]) -> list[str]:
    problems = []
    if len(snap["cells"]) != len(cells):
        problems.append(f"the page shows {len(snap['cells'])} code cells, the file has {len(cells)}")
    for number, (cell, shown) in enumerate(zip(cells, snap["cells"]), start=1):
        where = f"code cell {number} ({''.join(cell['source'])[:60]!r})"
        if not executed(shown["prompt"]):
            problems.append(f"{where} did not run (prompt {shown['prompt']!r})")
        for output in shown["outputs"]:
            if is_error_output(output):
                problems.append(f"{where} shows an error: {output['text'][:800]}")
        if calls_check(cell["source"]) and executed(shown["prompt"]):
            if not shown["results"]:
                problems.append(f"{where} calls check() but shows no .course-result box "
                                f"(outputs: {[o['mime'] for o in shown['outputs']]})")
            for result in shown["results"]:
                if result["typeset"]:
                    problems.append(f"{where}: MathJax typeset part of a result box: {result['text'][:200]!r}")
            for token in saved_operators(cell):
                if not any(token in result["text"] for result in shown["results"]):
                    problems.append(f"{where}: {token} is in the cell's output but not shown literally "
                                    f"in its result box (typeset as LaTeX?)")
            if relative.startswith("solutions/"):
                for result in shown["results"]:
                    if result["status"] == "correct":
                        continue
                    if result["status"] in ("unsupported", "partly_checked") \
                            and any(c in result["text"] for c in allowed_unsupported()):
                        continue
                    problems.append(f"{where}: solution verdict is not Correct: {result['text']!r}")
        wanted = [o for o in cell.get("outputs", []) if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
        if wanted and executed(shown["prompt"]) and not shown["widgets"]:
            problems.append(f"{where} displays a widget when run with nbclient, but none rendered here")
    return problems


def run_notebook_in_browser(page, server, relative: str, artifacts: Path,
                            interact: bool = True, dark: bool = True) -> tuple[dict, list[str]]:
    """Open, run and check ``relative`` in the loaded JupyterLab ``page``; return the last snapshot and
    the problems found.  The notebook is closed and its kernel shut down at the end."""
    console_errors = []

    def on_console(message) -> None:
        if message.type == "error":
            console_errors.append(message.text)

    page.on("console", on_console)
    steps: dict[str, float] = {}
    clock = {"t": time.monotonic()}

    def step(name: str) -> None:
        now = time.monotonic()
        steps[name] = now - clock["t"]
        clock["t"] = now

    try:
        open_notebook(page, server, relative)
        step("open")
        cells = code_cells(server.root / relative)
        run_all_cells(page)
        snap = wait_for_run(page, len(cells), RUN_TIMEOUT)
        step("run")
        problems = check_run(relative, snap, cells)
        problems += widget_problems(page)
        stem = relative.replace("/", "__").removesuffix(".ipynb")
        screenshot(page, artifacts / f"{stem}.png")
        step("screenshot")
        if interact:
            problems += exercise_widgets(page)
            if any(c["widgets"] for c in snap["cells"]):
                screenshot(page, artifacts / f"{stem}-after-interaction.png")
            step("interaction")
        if dark:
            switch_theme(page, "JupyterLab Dark")
            screenshot(page, artifacts / f"{stem}-dark.png")
            switch_theme(page, "JupyterLab Light")
            step("dark theme")
        print(f"{relative}: {len(cells)} code cells; " + ", ".join(f"{k} {v:.1f} s" for k, v in steps.items()))
        widget_console = [m for m in console_errors if "widget" in m.lower() or "model" in m.lower()]
        if widget_console:
            print("browser console errors about widgets:", *widget_console[:10], sep="\n  ")
        return snap, problems
    finally:
        page.remove_listener("console", on_console)
        close_notebooks(page, server)


@pytest.fixture(scope="module")
def lab_page(browser, lab_server):
    """One JupyterLab page for the module's notebooks, each opened, run and closed in turn."""
    page = browser.new_page()
    try:
        open_lab(page, lab_server, "e2e")
        yield page
    finally:
        page.close()


@pytest.mark.parametrize("relative", notebooks())
def test_notebook_runs_cleanly_in_jupyterlab(lab_page, lab_server, artifacts, relative):
    solution = relative.startswith("solutions/")
    _, problems = run_notebook_in_browser(lab_page, lab_server, relative, artifacts, interact=solution,
                                          dark=solution or relative.startswith("labs/00-"))
    assert not problems, f"{relative} in JupyterLab:\n  " + "\n  ".join(problems)


PROBE_CELLS = [
    "import ipywidgets as widgets\nfrom IPython.display import display",
    # an explorer: slider + button driving an Output widget, as lessons 04/05 do
    "out = widgets.Output()\n"
    "n = widgets.IntSlider(value=3, min=0, max=10, description='documents')\n"
    "more = widgets.Button(description='Add one')\n"
    "def show(*_):\n"
    "    out.clear_output(wait=True)\n"
    "    with out:\n"
    "        print(f'{n.value} documents, {n.value * 512} bytes')\n"
    "def add(_):\n"
    "    n.value = min(n.max, n.value + 1)\n"
    "n.observe(show, names='value')\n"
    "more.on_click(add)\n"
    "show()\n"
    "widgets.VBox([widgets.HBox([n, more]), out])",
    "from course.engine.results import Result, Status\n"
    "Result('probe.1', 'Probe', Status.CORRECT, 'rendered as HTML', 1.0, 1.0)",
    # a broken explorer: its slider is wired to nothing, so the generic check must flag it
    "dead_out = widgets.Output()\n"
    "with dead_out:\n"
    "    print('this never changes')\n"
    "widgets.VBox([widgets.IntSlider(value=5, description='dead'), dead_out])",
]


def test_widget_machinery_on_a_probe_notebook(lab_page, lab_server, artifacts):
    """The widget checks themselves work: a slider and a button change a probe explorer."""
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in PROBE_CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, lab_server.root / "probe" / "widget-probe.ipynb")
    snap, problems = run_notebook_in_browser(lab_page, lab_server, "probe/widget-probe.ipynb", artifacts,
                                             interact=False)
    assert not problems, problems
    assert snap["cells"][1]["widgets"], "the probe explorer did not render"
    assert snap["cells"][2]["results"] and snap["cells"][2]["results"][0]["status"] == "correct"
    # interact: each control must change the display here (the notebook opened again, a new kernel)
    page = lab_page
    try:
        open_notebook(page, lab_server, "probe/widget-probe.ipynb")
        run_all_cells(page)
        wait_for_run(page, len(PROBE_CELLS), 120)
        output = page.locator(EXPLORERS).first
        shown = lambda: output.locator(".widget-output").inner_text().strip()  # noqa: E731
        wait_until(lambda: "3 documents" in shown(), 30, "the probe's first display")
        move_slider(page, output.locator(".widget-slider").first)
        wait_until(lambda: "3 documents" not in shown(), 30, "the slider to change the display")
        after_slider = shown()
        output.locator("button.jupyter-button").first.click()
        wait_until(lambda: shown() != after_slider, 30, "the button to change the display")
        print(f"probe display: '3 documents' -> {after_slider!r} -> {shown()!r}")
        problems = exercise_widgets(page)
        assert len(problems) == 1 and problems[0].startswith("explorer 1: no slider or button changed"), problems
        assert not widget_problems(page)
    finally:
        close_notebooks(page, lab_server)
