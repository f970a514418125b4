"""`make lab`'s spare kernel: handed to the next lab opened, warm, unnamed, and never left running."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("jupyter_server")

from course.store.backends import mongoeco_available  # noqa: E402
from course.lab.kernel_warmup import warm_up  # noqa: E402
from course.lab.spare_kernels import SESSION_VARIABLE, SpareKernelManager  # noqa: E402


def session_env(root: Path, name: str = "01-design-for-reads.ipynb") -> dict[str, str]:
    """What jupyter_server's session manager passes for a notebook in ``root``."""
    return {**os.environ, SESSION_VARIABLE: str(root / name)}


def live_children() -> set[int]:
    """This process's child processes that have not ended (zombies excluded)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z":
            found.add(int(entry.name))
    return found


async def run(manager: SpareKernelManager, kernel_id: str, code: str) -> dict:
    """Execute ``code`` in the kernel as a notebook cell; its reply content and printed text."""
    client = manager.get_kernel(kernel_id).client()
    client.start_channels()
    printed: list[str] = []
    try:
        await client.wait_for_ready(timeout=60)
        reply = await client.execute_interactive(
            code, timeout=60,
            output_hook=lambda m: printed.append(m["content"].get("text", "")) if m["msg_type"] == "stream" else None)
    finally:
        client.stop_channels()
    return {**reply["content"], "printed": "".join(printed)}


def manager_for(root: Path, **options) -> SpareKernelManager:
    return SpareKernelManager(root_dir=str(root), **{"spare_delay": 0.0, **options})


def play(root: Path, scenario, **options) -> None:
    """Run ``scenario(manager)`` on a manager serving ``root``; then every kernel it started must be gone."""
    async def main():
        manager = manager_for(root, **options)
        try:
            await scenario(manager)
        finally:
            await manager.shutdown_all(now=True)

    asyncio.run(main())
    assert live_children() == set()


def test_a_lab_opened_gets_the_warm_spare_with_nothing_of_the_warm_up_visible(tmp_path):
    async def scenario(manager):
        spare = await manager.ensure_spare()
        assert spare is not None and spare.warmed
        assert manager.list_kernel_ids() == []  # the spare is not one of the server's kernels
        kernel_id = await manager.start_kernel(path="", kernel_name="python3", env=session_env(tmp_path))
        assert kernel_id == spare.kernel_id
        assert manager.list_kernel_ids() == [kernel_id]
        reply = await run(manager, kernel_id, "import os, sys\n"
                                              "print(__session__, os.environ['JPY_SESSION_NAME'], os.getcwd())\n"
                                              "print(sorted(n for n in dir() if not n.startswith('_')))\n"
                                              "print('course.lab.session' in sys.modules, len(In))")
        assert reply["status"] == "ok" and reply["execution_count"] == 1  # the warm-up counted nothing
        lines = reply["printed"].splitlines()
        notebook = str(tmp_path / "01-design-for-reads.ipynb")
        assert lines[0] == f"{notebook} {notebook} {tmp_path}"
        assert lines[1] == "['In', 'Out', 'exit', 'get_ipython', 'open', 'os', 'quit', 'sys']"  # as a cold one
        assert lines[2] == "True 2"  # imported ahead; the history holds only this cell
        following = await manager._spare_task  # the next spare, for the next lab
        assert following is not None and following.kernel_id != kernel_id and following.warmed

    play(tmp_path, scenario)


def test_another_environment_or_kernel_id_starts_a_kernel_the_usual_way_and_leaves_the_spare(tmp_path):
    async def scenario(manager):
        spare = await manager.ensure_spare()
        other_env = await manager.start_kernel(path="", kernel_name="python3",
                                               env={**session_env(tmp_path), "COURSE_BACKEND": "mongomock"})
        chosen = await manager.start_kernel(kernel_id="chosen-id", path="", kernel_name="python3",
                                            env=session_env(tmp_path))
        assert spare.kernel_id not in (other_env, chosen) and chosen == "chosen-id"
        reply = await run(manager, other_env, "import os; print(os.environ.get('COURSE_BACKEND'), os.getcwd())")
        assert reply["printed"].split() == ["mongomock", str(tmp_path)]
        assert await manager.start_kernel(path="", kernel_name="python3", env=session_env(tmp_path)) \
            == spare.kernel_id  # still there for the lab that fits it

    play(tmp_path, scenario)


def test_a_notebook_in_another_folder_starts_cold_and_the_spare_moves_to_its_folder(tmp_path):
    (tmp_path / "solutions").mkdir()

    async def scenario(manager):
        first = await manager.ensure_spare()
        elsewhere = await manager.start_kernel(path="solutions", kernel_name="python3",
                                               env=session_env(tmp_path / "solutions"))
        assert elsewhere != first.kernel_id
        assert (await run(manager, elsewhere, "import os; print(os.getcwd())"))["printed"].strip() \
            == str(tmp_path / "solutions")
        moved = await manager._spare_task
        assert moved.cwd == str(tmp_path / "solutions") and not await first.manager.is_alive()
        second = await manager.start_kernel(path="solutions", kernel_name="python3",
                                            env=session_env(tmp_path / "solutions", "02.ipynb"))
        assert second == moved.kernel_id
        assert (await run(manager, second, "import os; print(os.getcwd())"))["printed"].strip() \
            == str(tmp_path / "solutions")

    play(tmp_path, scenario)


def test_a_lab_opened_before_the_next_spare_is_launched_does_not_wait_for_it(tmp_path):
    async def scenario(manager):
        spare = await manager.ensure_spare()
        first = await manager.start_kernel(path="", kernel_name="python3", env=session_env(tmp_path))
        assert first == spare.kernel_id  # the next spare waits 30 s before it launches
        started = time.monotonic()
        second = await manager.start_kernel(path="", kernel_name="python3", env=session_env(tmp_path, "02.ipynb"))
        assert time.monotonic() - started < 20 and second != first
        assert (await run(manager, second, "print(6 * 7)"))["printed"].strip() == "42"
        assert manager._spare_task is not None and manager._spare.manager is None  # scheduled again, not launched

    play(tmp_path, scenario, spare_delay=30.0)


def test_a_restarted_spare_starts_again_with_its_notebook_name(tmp_path):
    async def scenario(manager):
        spare = await manager.ensure_spare()
        kernel_id = await manager.start_kernel(path="", kernel_name="python3", env=session_env(tmp_path))
        assert kernel_id == spare.kernel_id
        before = manager.get_kernel(kernel_id).provisioner.process.pid
        await manager.restart_kernel(kernel_id, now=True)
        after = manager.get_kernel(kernel_id).provisioner.process.pid
        reply = await run(manager, kernel_id, "import os, sys\n"
                                              "print(os.environ['JPY_SESSION_NAME'], __session__)\n"
                                              "print('course.lab.session' in sys.modules)")
        notebook = str(tmp_path / "01-design-for-reads.ipynb")
        assert after != before and reply["printed"].splitlines() == [f"{notebook} {notebook}", "False"]

    play(tmp_path, scenario)


def test_a_spare_that_died_costs_nothing_but_a_cold_start(tmp_path):
    async def scenario(manager):
        spare = await manager.ensure_spare()
        os.kill(spare.manager.provisioner.process.pid, signal.SIGKILL)
        await asyncio.sleep(0.2)
        kernel_id = await manager.start_kernel(path="", kernel_name="python3", env=session_env(tmp_path))
        assert kernel_id != spare.kernel_id
        assert (await run(manager, kernel_id, "print(6 * 7)"))["printed"].strip() == "42"

    play(tmp_path, scenario)


def test_a_spare_that_cannot_start_is_said_in_the_log_and_kernels_still_start(tmp_path, caplog):
    async def scenario(manager):
        assert await manager.ensure_spare() is None
        kernel_id = await manager.start_kernel(path="", kernel_name="python3", env=session_env(tmp_path))
        assert (await run(manager, kernel_id, "print(6 * 7)"))["printed"].strip() == "42"

    play(tmp_path, scenario, default_kernel_name="no-such-kernel")
    assert "no spare kernel" in caplog.text


def test_stopping_the_server_while_a_spare_starts_leaves_no_kernel_running(tmp_path):
    async def scenario(manager):
        manager.ensure_spare()
        deadline = time.monotonic() + 30
        while manager._spare.manager is None or not manager._spare.manager.has_kernel:
            assert time.monotonic() < deadline, "the spare never launched"
            await asyncio.sleep(0.01)
        await manager.shutdown_all(now=True)
        assert manager.ensure_spare() is None  # a closing server starts no new spare

    play(tmp_path, scenario)


def test_no_spare_when_switched_off(tmp_path):
    async def scenario(manager):
        assert manager.ensure_spare() is None
        kernel_id = await manager.start_kernel(path="", kernel_name="python3", env=session_env(tmp_path))
        assert manager._spare_task is None and kernel_id in manager.list_kernel_ids()
        reply = await run(manager, kernel_id, "print(sorted(n for n in dir() if not n.startswith('_')))")
        assert reply["execution_count"] == 1  # what the spare's first cell sees too (first test)
        assert reply["printed"].strip() == "['In', 'Out', 'exit', 'get_ipython', 'open', 'quit']"

    play(tmp_path, scenario, spares=False)


def test_warm_up_opens_the_engine_start_lab_would_and_never_a_server(monkeypatch):
    expected = "mongoeco" if mongoeco_available() else "mongomock"
    assert warm_up({}) == expected
    assert warm_up({"COURSE_BACKEND": "mongomock"}) == "mongomock"
    assert warm_up({"COURSE_BACKEND": "nonsense"}) == "none"
    started = time.monotonic()  # a server that does not answer: warming up never tries it
    assert warm_up({"MONGODB_URI": "mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=60000"}) == "server"
    assert time.monotonic() - started < 5
    assert sys.modules.get("course.lab.session") is not None


WARMED_IMPORTS = """
import importlib.util, json, sys
from course.store.engine_imports import SKIPPED_IMPORTS
installed = [name for name in SKIPPED_IMPORTS if importlib.util.find_spec(name) is not None]
from course.lab.kernel_warmup import warm_up
warm_up({})
def importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False
after_warm_up = [name for name in installed if importable(name)]
for name in installed:  # as a kernel nobody warmed is before its first import of one of them
    sys.modules.pop(name, None)
from course.lab.session import start_lab
start_lab("01", show=False)
print(json.dumps({"installed": installed, "after_warm_up": after_warm_up,
                  "after_start_lab": [name for name in installed if importable(name)]}))
"""


def test_a_warmed_kernel_refuses_no_import_that_a_kernel_nobody_warmed_would_give():
    import json
    import subprocess

    done = subprocess.run([sys.executable, "-c", WARMED_IMPORTS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if not found["installed"]:
        pytest.skip("none of the imports the engine skips is installed here")
    assert found["after_warm_up"] == found["installed"]  # a cell before start_lab may import them, as unwarmed
    if mongoeco_available():
        assert found["after_start_lab"] == []  # start_lab skips them again, warmed or not
