"""A graded notebook's kernel: ready once it has answered (no closing wait for silence), gone once killed."""

from __future__ import annotations

import asyncio
from collections import deque
from queue import Empty

import pytest

from course.grading import process_limit
from course.grading.execution import kill_sandbox
from course.grading.kernel import KernelLimits, cgroup_name, kernel_environment, kernel_manager, prepare_folders
from course.grading.kernel_client import CappedKernelClient, client_for
from course.grading.sandbox import sandbox_problem

pytestmark = pytest.mark.containment


def _status(state: str, parent: str) -> dict:
    return {"msg_type": "status", "content": {"execution_state": state}, "parent_header": {"msg_id": parent}}


WELCOME = {"msg_type": "iopub_welcome", "content": {}, "parent_header": {}}


class _Channel:
    """Hands out queued messages; an empty slot (None) or an empty queue is a wait that ends in Empty."""

    def __init__(self, messages=()):
        self.messages, self.waits = deque(messages), []

    async def get_msg(self, timeout=None):
        self.waits.append(timeout)
        message = self.messages.popleft() if self.messages else None
        if message is None:
            raise Empty
        return message


class _ScriptedClient(CappedKernelClient):
    """The client's waiting logic against scripted channels (no kernel)."""

    def __init__(self, shell, iopub, alive=True):
        super().__init__()
        self.scripted_shell, self.scripted_iopub, self.alive, self.asked, self.ready_with = shell, iopub, alive, [], None

    @property
    def shell_channel(self):
        return self.scripted_shell

    @property
    def iopub_channel(self):
        return self.scripted_iopub

    def kernel_info(self):
        self.asked.append(f"info-{len(self.asked)}")
        return self.asked[-1]

    async def _async_is_alive(self):
        return self.alive

    def _handle_kernel_info_reply(self, msg):
        self.ready_with = msg


def _reply(parent: str) -> dict:
    return {"msg_type": "kernel_info_reply", "content": {}, "parent_header": {"msg_id": parent}}


def test_ready_at_the_idle_of_its_kernel_info_request_without_waiting_out_a_silence():
    later = {"msg_type": "stream", "content": {"text": "not the client's to read"}, "parent_header": {}}
    iopub = _Channel([_status("busy", "info-0"), _status("idle", "info-0"), later])
    client = _ScriptedClient(_Channel([_reply("info-0")]), iopub)
    asyncio.run(client.wait_for_ready(timeout=10))
    assert client.ready_with == _reply("info-0") and client.asked == ["info-0"]
    assert iopub.waits == [0.2, 0.2] and list(iopub.messages) == [later]  # read up to that idle, and no further


def test_iopubs_welcome_means_earlier_statuses_may_be_lost_so_the_kernel_is_asked_again_at_once():
    iopub = _Channel([WELCOME, _status("busy", "info-1"), _status("idle", "info-1")])  # info-0's went out before
    client = _ScriptedClient(_Channel([_reply("info-0")]), iopub)
    asyncio.run(client.wait_for_ready(timeout=10))
    assert client.asked == ["info-0", "info-1"] and client.ready_with == _reply("info-0")
    assert not iopub.messages and len(iopub.waits) == 3  # no wait ended in silence
    welcomed_first = _Channel([WELCOME, _status("busy", "info-0"), _status("idle", "info-0")])
    client = _ScriptedClient(_Channel([_reply("info-0")]), welcomed_first)
    asyncio.run(client.wait_for_ready(timeout=10))  # info-0's own idle is enough when it does arrive
    assert client.asked == ["info-0", "info-1"] and not welcomed_first.messages


def test_a_silent_iopub_is_not_connected_yet_and_the_kernel_is_asked_again():
    iopub = _Channel([None, _status("busy", "info-1"), _status("idle", "info-1")])
    client = _ScriptedClient(_Channel([_reply("info-0"), _reply("info-1")]), iopub)
    asyncio.run(client.wait_for_ready(timeout=10))
    assert client.asked == ["info-0", "info-1"] and client.ready_with == _reply("info-1")


def test_a_kernel_that_publishes_no_idle_is_ready_once_iopub_falls_silent_as_jupyter_client_has_it():
    iopub = _Channel([_status("busy", "info-0"), None])
    client = _ScriptedClient(_Channel([_reply("info-0")]), iopub)
    asyncio.run(client.wait_for_ready(timeout=10))
    assert client.asked == ["info-0"] and client.ready_with == _reply("info-0")


def test_a_kernel_that_dies_or_never_answers_is_an_error():
    dead = _ScriptedClient(_Channel([None]), _Channel(), alive=False)
    with pytest.raises(RuntimeError, match="died"):
        asyncio.run(dead.wait_for_ready(timeout=10))
    mute = _ScriptedClient(_Channel([None]), _Channel())
    with pytest.raises(RuntimeError, match="didn't respond"):
        asyncio.run(mute.wait_for_ready(timeout=0))


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=pytest.mark.skipif(
    bool(sandbox_problem()), reason=f"no sandbox here: {sandbox_problem()}"))])
def test_a_learner_kernel_is_ready_without_a_silent_wait_and_gone_once_killed(tmp_path, sandbox):
    work, sockets = prepare_folders(tmp_path / "root")
    env = kernel_environment("t_kernel_start", work, sandbox)
    manager = kernel_manager(work, sockets, env, KernelLimits(memory_mb=1024, cpu_seconds=120), sandbox)
    manager.client_factory = client_for(1_000_000)
    silences = []

    async def scenario():
        await manager.start_kernel(env=env, cwd=str(work))
        client = manager.client()
        client.start_channels()
        try:
            original = client.iopub_channel.get_msg

            async def watched(timeout=None):
                try:
                    return await original(timeout=timeout)
                except Empty:
                    silences.append(timeout)
                    raise

            client.iopub_channel.get_msg = watched
            await client.wait_for_ready(timeout=60)
            return await client.execute_interactive("print(6 * 7)", output_hook=outputs.append, timeout=60)
        finally:
            client.stop_channels()
            process = manager.provisioner.process
            await kill_sandbox(manager)
            gone.append(process.poll() is not None and not manager.has_kernel)

    outputs, gone = [], []
    reply = asyncio.run(scenario())
    assert silences == []  # it never sat out a silence to learn it was ready
    assert reply["content"]["status"] == "ok"
    assert [m["content"]["text"] for m in outputs if m["msg_type"] == "stream"] == ["42\n"]
    assert gone == [True]
    if sandbox and process_limit.hierarchy() is not None:
        assert not (process_limit.hierarchy() / process_limit.PARENT / cgroup_name(sockets)).exists()
