"""End-to-end fixtures: one JupyterLab server (as `make lab` starts it) and one Chromium.

Tests marked ``e2e`` run only when selected (``pytest -m e2e``, ``make e2e``, ``.ci/run``);
a plain ``pytest tests/`` reports them as skipped.  When Chromium or Playwright is
missing they are skipped with a message naming what is missing.

Environment:
  E2E_CHROMIUM=/path        the Chromium binary (default: /usr/bin/chromium, then chromium on PATH)
  E2E_ARTIFACTS=DIR         where screenshots go (default: tests/e2e/artifacts, gitignored)
  E2E_NOTEBOOKS=glob,...    only these notebooks (relative to the repo, e.g. solutions/01-*)
  E2E_RUN_TIMEOUT=600       seconds one notebook's Run All Cells may take
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("E2E_ARTIFACTS") or ROOT / "tests" / "e2e" / "artifacts")

# Chromium on a closed network: no sync, no component updates, no QUIC, no background fetches.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--disable-features=Translate,MediaRouter,OptimizationHints",
]

# JupyterLab user settings for the test server: no news or update checks (closed network),
# no extension manager (it queries PyPI), no autosave, and every cell kept in the DOM so
# the assertions see the whole notebook.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/extensionmanager-extension/plugin.jupyterlab-settings": {"enabled": False},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def pytest_collection_modifyitems(config, items):
    """Run e2e tests only when the marker expression asks for them."""
    if "e2e" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="e2e browser test: select it with `pytest -m e2e` or `make e2e`")
    for item in items:
        if item.get_closest_marker("e2e") is not None:
            item.add_marker(skip)


def chromium_path() -> str | None:
    for candidate in (os.environ.get("E2E_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_group(process: subprocess.Popen) -> None:
    """Stop a process started in its own session, and its children (the kernels)."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=5)


@dataclass
class LabServer:
    base_url: str   # http://127.0.0.1:PORT/
    token: str
    root: Path      # the server's root_dir: copies of labs/ and solutions/
    log: Path

    def api(self, method: str, path: str) -> object:
        request = urllib.request.Request(self.base_url + path.lstrip("/"), method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        for kernel in self.api("GET", "api/kernels") or []:
            try:
                self.api("DELETE", f"api/kernels/{kernel['id']}")
            except OSError:
                pass


URL_RE = re.compile(r"(http://127\.0\.0\.1:(\d+)/lab\?token=([0-9a-f]+))")


def start_jupyterlab(root: Path, state: Path) -> tuple[subprocess.Popen, LabServer]:
    """Start `jupyter lab` from this environment the way `make lab` does (127.0.0.1, token), with the
    application object exposed to the page for the test."""
    jupyter = Path(sys.executable).parent / "jupyter"
    if not jupyter.exists():
        pytest.skip(f"jupyter is not installed next to {sys.executable} (pip install -e '.[lab]')")
    settings = state / "settings"
    for name, values in LAB_SETTINGS.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = dict(os.environ)
    for variable in ("MONGODB_URI", "COURSE_BACKEND", "COURSE_EXPECT_STATUS", "COURSE_ALLOW_REMOTE"):
        env.pop(variable, None)
    prefix = Path(sys.prefix)
    env.update(
        # as in `make lab`: the environment's own kernelspec first
        JUPYTER_PATH=str(prefix / "share" / "jupyter") + (":" + env["JUPYTER_PATH"] if env.get("JUPYTER_PATH") else ""),
        JUPYTER_CONFIG_DIR=str(state / "config"),
        JUPYTER_RUNTIME_DIR=str(state / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(state / "workspaces"),
        IPYTHONDIR=str(state / "ipython"),
        PYTHONUNBUFFERED="1",
    )
    port = free_port()
    command = [str(jupyter), "lab", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               "--ServerApp.port_retries=50", f"--ServerApp.root_dir={root}", "--no-browser",
               "--ServerApp.kernel_manager_class=course.lab.spare_kernels.SpareKernelManager",
               # window.jupyterapp: the test opens each notebook in one page, as the file browser does,
               # instead of loading the whole application again for every notebook
               "--LabApp.expose_app_in_browser=True"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = state / "jupyterlab.log"
    handle = log.open("w")
    process = subprocess.Popen(command, cwd=root, env=env, stdout=handle, stderr=subprocess.STDOUT,
                               start_new_session=True)
    deadline = time.monotonic() + 120
    match = None
    while time.monotonic() < deadline:
        match = URL_RE.search(log.read_text(errors="replace"))
        if match or process.poll() is not None:
            break
        time.sleep(0.25)
    if not match:
        stop_group(process)
        raise RuntimeError(f"JupyterLab did not print its URL; log:\n{log.read_text(errors='replace')[-4000:]}")
    base = f"http://127.0.0.1:{match.group(2)}/"
    server = LabServer(base, match.group(3), root, log)
    while time.monotonic() < deadline:  # wait until the API answers
        try:
            server.api("GET", "api/status")
            break
        except OSError:
            time.sleep(0.25)
    return process, server


@pytest.fixture(scope="session")
def e2e_state():
    state = Path(tempfile.mkdtemp(prefix="course-e2e-"))
    yield state
    shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="session")
def lab_server(e2e_state):
    """One JupyterLab for the whole session, serving copies of labs/ and solutions/."""
    root = e2e_state / "root"
    for folder in ("labs", "solutions"):
        shutil.copytree(ROOT / folder, root / folder,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints"), dirs_exist_ok=True)
    (root / "probe").mkdir(parents=True)
    process, server = start_jupyterlab(root, e2e_state)
    print(f"\nJupyterLab for e2e: {server.base_url} (root {root}, log {server.log})")
    yield server
    stop_group(process)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)  # kept for reading after the run (kernels, spare kernels)
    shutil.copy(server.log, ARTIFACTS / "jupyterlab.log")


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def browser(e2e_state):
    executable = chromium_path()
    why = os.environ.get("E2E_MISSING_REASON")  # set by .ci/run when it could not install something
    why = f" ({why})" if why else ""
    if executable is None:
        pytest.skip(f"Chromium is not installed{why}: apt-get install -y chromium, or set E2E_CHROMIUM")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip(f"the playwright Python package is not installed{why}: pip install -e '.[e2e]'")
    profile = e2e_state / "chromium-profile"
    with sync_playwright() as playwright:
        try:
            context = playwright.chromium.launch_persistent_context(
                str(profile), executable_path=executable, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1280, "height": 900}, device_scale_factor=1,
            )
        except Exception as error:  # a broken Chromium install: say so instead of erroring
            pytest.skip(f"Chromium at {executable} does not start under Playwright: {error}")
        yield context
        context.close()
