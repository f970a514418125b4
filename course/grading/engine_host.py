"""The checks' engine: mongoeco's memory engine inside the grader, served to the sandboxes over the wire.

One :class:`EngineHost` per grading worker owns a ``MemoryEngine`` on an event
loop of its own (a daemon thread).  Two roads lead to it:

* the checks' own client (:attr:`EngineHost.client`): mongoeco's sync client,
  each call run on the host's loop, so a hidden check's seeding and reads cost
  what the engine costs, with no wire protocol in between;
* a wire server on loopback (:attr:`EngineHost.address`), which only the
  relays of the worker's sandboxes connect to (:mod:`course.grading.relay`):
  learner functions reach the data there, command by command, as before.

A grading process (:mod:`course.grading.isolation`) starts one host for its
one notebook, so nothing an earlier notebook did to an engine is there.
Every command of both roads runs on the one loop, so the engine never sees
two at once (a relay's race callback may write while a learner call waits).
The course's quirk fixes are applied first (:func:`course.store.quirks.absorb`), as
in a learner's kernel.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

START_TIMEOUT = 60  #: seconds the engine and its wire server may take to start
STOP_TIMEOUT = 10  #: seconds they may take to stop
CALL_TIMEOUT = 300  #: seconds one call of the checks' own client may wait for the engine


def _loop_bound_runner(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> Any:
    """A runner for mongoeco's sync client that runs every call on ``loop`` (owned by ``thread``)."""
    from mongoeco.api._sync.client import _SyncRunner

    class LoopBoundRunner(_SyncRunner):
        """mongoeco's sync runner, but every awaitable runs on the engine's own loop."""

        def run(self, awaitable: Any, *, inline: bool = False) -> Any:
            if threading.current_thread() is thread:  # it would wait for itself
                getattr(awaitable, "close", lambda: None)()
                raise RuntimeError("the checks' engine was called from its own event loop")
            return super().run(awaitable, inline=inline)

        def _run_direct(self, awaitable: Any) -> Any:
            future = asyncio.run_coroutine_threadsafe(_awaited(awaitable), loop)
            try:
                return future.result(CALL_TIMEOUT)
            except TimeoutError:
                from course.grading.isolation import abort

                reason = (f"the checks' engine did not answer the checks for {CALL_TIMEOUT:g} s (busy with "
                          f"something this notebook's functions left it?)")
                abort(reason)  # in a grading process: it ends here
                raise TimeoutError(reason) from None

        _run_inline_direct = _run_direct

    return LoopBoundRunner()


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


class EngineHost:
    """A memory engine on its own loop: a client for the checks, a loopback wire server for the relays."""

    def __init__(self) -> None:
        from course.store.engine_imports import skip_unused_imports

        skip_unused_imports()
        import mongoeco
        from mongoeco.engines.memory import MemoryEngine
        from mongoeco.wire import AsyncMongoEcoProxyServer

        from course.store.quirks import absorb

        absorb("mongoeco")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="course-checks-engine", daemon=True)
        self._thread.start()

        async def start() -> tuple[Any, Any, tuple[str, int]]:
            engine = MemoryEngine()
            proxy = AsyncMongoEcoProxyServer(engine=engine, host="127.0.0.1", port=0)
            where = await proxy.start()
            return engine, proxy, (where.host, where.port)

        try:
            engine, self._proxy, self.address = self._on_loop(start(), START_TIMEOUT)
        except BaseException:
            self._stop_loop()
            raise
        self.client = mongoeco.MongoClient(engine)
        self.client._runner = _loop_bound_runner(self._loop, self._thread)
        self.version = mongoeco.__version__
        self._closed = False

    def _on_loop(self, coroutine: Any, timeout: float) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def close(self) -> None:
        """Close the client, stop serving (open connections are closed), and end the loop's thread."""
        if self._closed:
            return
        self._closed = True
        try:
            self.client.close()
        except Exception:  # noqa: BLE001 - stopping must not fail a run
            pass
        try:
            self._on_loop(self._proxy.close(), STOP_TIMEOUT)
        except Exception:  # noqa: BLE001 - the loop is stopped below either way
            pass
        self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(STOP_TIMEOUT)
        if not self._thread.is_alive():
            self._loop.close()
