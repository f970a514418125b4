"""`make lab` listens on 127.0.0.1 only with token authentication, and nothing in the
project turns that off.  (Not marked e2e: these run in every `pytest tests/`.)"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".pytest_cache", "artifacts"}

# Settings that open JupyterLab to other machines or switch its authentication off.
FORBIDDEN = [
    (re.compile(r"0\.0\.0\.0|\[?::\]?(?=[\s'\"])"), "listens on every interface"),
    (re.compile(r"(ServerApp|NotebookApp)\.ip\s*=\s*['\"]?(?!127\.0\.0\.1|localhost)[^\s'\"]*", re.I),
     "sets ServerApp.ip to something other than 127.0.0.1/localhost"),
    (re.compile(r"--ip[= ](?!127\.0\.0\.1|localhost)"), "passes --ip other than 127.0.0.1"),
    (re.compile(r"(IdentityProvider|ServerApp|NotebookApp)\.token\s*=\s*(''|\"\"|$|\s)", re.M), "empties the token"),
    (re.compile(r"--(ServerApp|NotebookApp|IdentityProvider)\.token=(''|\"\"|\s|$)", re.M), "empties the token"),
    (re.compile(r"--no-token|disable_check_xsrf|allow_remote_access|allow_unauthenticated_access"
                r"|\.password\s*=\s*(''|\"\")|password_required\s*=\s*False", re.I),
     "weakens authentication"),
]


def project_files() -> list[Path]:
    """The Makefile, CI script, docs, environment files and any Jupyter config in the repo."""
    found = []
    for directory, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".venv")]
        for name in files:
            path = Path(directory) / name
            if (name in {"Makefile", "run", "README.md", "environment.yml", "pyproject.toml", "Dockerfile"}
                    or re.match(r"jupyter_.*config\.(py|json)$", name)
                    or name.endswith(".jupyterlab-settings")
                    or (path.parent.name in {".jupyter", ".ci", ".binder", "binder"})):
                found.append(path)
    return found


def jupyter_configs() -> list[Path]:
    return [p for p in project_files() if re.match(r"jupyter_.*config\.(py|json)$", p.name)]


def test_nothing_in_the_project_opens_jupyterlab_or_disables_its_token():
    problems = []
    for path in project_files():
        text = path.read_text(errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if path.suffix == ".py" and line.lstrip().startswith("#"):
                continue
            for pattern, what in FORBIDDEN:
                if pattern.search(line):
                    problems.append(f"{path.relative_to(ROOT)}:{number} {what}: {line.strip()}")
    assert not problems, "\n".join(problems)


def test_any_jupyter_config_in_the_project_keeps_loopback_and_token():
    for path in jupyter_configs():  # none today; a future one must be explicit about both
        text = path.read_text()
        assert "127.0.0.1" in text or "localhost" in text, f"{path} does not pin ip to loopback"


def make_lab_command() -> str:
    text = (ROOT / "Makefile").read_text()
    recipe = text[text.index("\nlab: venv"):]
    recipe = recipe[:recipe.index("\n\n")]
    return recipe[recipe.index("jupyter lab"):]


def test_make_lab_recipe_binds_loopback_keeps_the_token_and_prints_the_url():
    command = make_lab_command()
    assert "--ServerApp.ip=127.0.0.1" in command
    assert "token" not in command.lower() and "password" not in command.lower()
    # the URL with ?token= is JupyterLab's own start-up message; the recipe points the learner to it
    assert "token=" in (ROOT / "Makefile").read_text().split("\nlab: venv", 1)[1].split("\n\n", 1)[0]
    assert "127.0.0.1" in (ROOT / "README.md").read_text()


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a LISTEN socket on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if fields[3] != "0A" or int(hex_port, 16) != port:  # 0A = LISTEN
                continue
            raw = bytes.fromhex(address)
            if width == 8:
                found.add(socket.inet_ntop(socket.AF_INET, raw[::-1]))
            else:  # four little-endian 32-bit words
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                found.add(socket.inet_ntop(socket.AF_INET6, words))
    return found


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs /proc/net/tcp (Linux)")
@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "jupyter").exists(), reason=".venv has no jupyter (make venv)")
def test_make_lab_listens_on_loopback_only_and_asks_for_the_token(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_RUNTIME_DIR=str(tmp_path / "run"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"), JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "ws"))
    log = tmp_path / "make-lab.log"
    with log.open("w") as handle:
        # WORK: the labs are copied into the test's own folder, never into the checkout's work/
        process = subprocess.Popen(["make", "lab", f"PORT={port}", "LAB_ARGS=--no-browser", f"WORK={tmp_path / 'work'}"],
                                   cwd=ROOT, env=env,
                                   stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        match = None
        while time.monotonic() < deadline and process.poll() is None:
            match = re.search(r"http://127\.0\.0\.1:(\d+)/lab\?token=([0-9a-f]{16,})", log.read_text())
            if match:
                break
            time.sleep(0.25)
        assert match, f"`make lab` printed no http://127.0.0.1:PORT/lab?token=... URL:\n{log.read_text()[-3000:]}"
        port, token = int(match.group(1)), match.group(2)
        time.sleep(0.5)
        addresses = listening_addresses(port)
        assert addresses, f"nothing listens on port {port}"
        assert addresses <= {"127.0.0.1", "::ffff:127.0.0.1"}, f"`make lab` listens on {addresses}"
        base = f"http://127.0.0.1:{port}/api/contents"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base, timeout=10)
        assert refused.value.code in (401, 403), refused.value.code
        with urllib.request.urlopen(urllib.request.Request(base, headers={"Authorization": f"token {token}"}),
                                    timeout=10) as answer:
            assert answer.status == 200
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
