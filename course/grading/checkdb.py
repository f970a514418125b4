"""The checks' database: a server outside every sandbox that the grader owns.

Hidden checks seed and read their data there, through the grader's own
client; learner functions reach it only through the relay of their own
sandbox (:mod:`course.grading.relay`).  It is, in order:

* ``MONGODB_URI`` (the instructor's server, loopback unless allowed), or
* a mongoeco wire server that the grader starts for the run
  (``python -m course.grading.checkdb``, loopback only, stopped afterwards), or
* none (no mongoeco on this Python, no server): checks that need no database
  still grade; a learner function that needs a collection gets an error
  saying so, never a verdict computed elsewhere.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

NO_DATABASE_FEATURE = ("a checks' database the sandbox can reach (mongoeco on Python >= 3.13, or a server "
                       "named by MONGODB_URI)")
WITH_CREDENTIALS = (
    "MONGODB_URI names a user: the checks' relay connects the sandboxes to that server without credentials "
    "(learner code must never hold them), so a server that requires authentication would refuse every "
    "learner function. Grade against a server without authentication listening on loopback only, or unset "
    "MONGODB_URI to use the grader's own mongoeco server")
NO_DATABASE = ("this check passes a collection to your function, and the grader has no database the "
               "sandbox can reach: grade on Python >= 3.13 (mongoeco) or set MONGODB_URI")


class ChecksDatabase:
    """Where the checks' data lives: the grader's backend and the (host, port) the relays forward to.

    The grader's own mongoeco wire server starts on first use (a lab whose checks need no database
    never starts it).
    """

    def __init__(self, backend: Any = None, address: tuple[str, int] | None = None, *, lazy: bool = False):
        self._backend, self._address, self._lazy = backend, address, lazy
        self._process: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._closed = False  #: once closed, never started again (a start_soon thread may come late)

    @property
    def reachable(self) -> bool:
        """True when learner functions can be given collections (a server the relays can reach)."""
        return self._lazy or self._address is not None

    @property
    def started(self) -> bool:
        """True once the checks' database is open (always, unless it is started on first use)."""
        return not self._lazy or self._backend is not None

    def lab_backend(self) -> Any:
        """What a grading lab sees as its backend: the real one, or one that starts the server on first use."""
        return self._backend if not self._lazy else _LazyBackend(self)

    @property
    def backend(self) -> Any:
        """The grader's backend on the checks' database (started on first use)."""
        self._start()
        return self._backend

    @property
    def address(self) -> tuple[str, int] | None:
        """Where the relays forward to (started on first use), or None when there is no server."""
        self._start()
        return self._address

    def start_soon(self) -> None:
        """Start the server in the background now (a class run: it is ready by the first check)."""
        if self._lazy and self._backend is None:
            threading.Thread(target=self._start_quietly, name="course-checkdb-start", daemon=True).start()

    def _start_quietly(self) -> None:
        try:
            self._start()
        except Exception:  # noqa: BLE001 - the first check that needs it starts it again and reports
            pass

    def _start(self) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("the checks' database was closed")
            if self._lazy and self._backend is None:
                self._backend, self._address, self._process = _start_wire_server()

    def close(self) -> None:
        """Close the grader's client and stop the server the grader started (for good: see ``_closed``)."""
        with self._lock:
            self._closed = True
            if self._backend is not None and self._address is not None:
                try:
                    self._backend.client.close()
                except Exception:  # noqa: BLE001 - closing must not fail a run
                    pass
            process, self._process = self._process, None
            if self._lazy:
                self._backend = self._address = None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


class _LazyBackend:
    """The mongoeco wire backend before it is started: its name and capabilities are known already."""

    name = "mongoeco-wire"
    notes: tuple[str, ...] = ()
    embedded = False

    def __init__(self, checks: ChecksDatabase):
        self._checks = checks

    @property
    def client(self) -> Any:
        """The grader's client (starts the server)."""
        return self._checks.backend.client

    @property
    def version(self) -> str:
        """The server's version (starts the server)."""
        return self._checks.backend.version

    @property
    def description(self) -> str:
        """What the server is (starts the server)."""
        return self._checks.backend.description

    @property
    def capabilities(self) -> frozenset:
        """Known from the backend's name."""
        from course.capabilities import capabilities_of

        return capabilities_of(self.name)

    @property
    def missing(self) -> dict:
        """Known from the backend's name."""
        from course.capabilities import missing_reasons

        return missing_reasons(self.name)

    def supports(self, capability: Any) -> bool:
        """True when the backend has ``capability``."""
        return capability in self.capabilities


def open_checks_database() -> ChecksDatabase:
    """Open the checks' database this run uses (see the module docstring)."""
    from course.backends import (
        REMOTE_VARIABLE, TIMEOUT_VARIABLE, URI_VARIABLE, BackendError, mongoeco_available, open_mongomock,
        open_server, uri_hosts,
    )

    uri = os.environ.get(URI_VARIABLE, "").strip()
    if uri:
        if uri.startswith("mongodb://") and "@" in uri.split("://", 1)[1].split("/", 1)[0]:
            raise BackendError(WITH_CREDENTIALS)
        backend = open_server(uri, allow_remote=os.environ.get(REMOTE_VARIABLE) == "1",
                              timeout_ms=int(os.environ.get(TIMEOUT_VARIABLE, "3000") or 3000))
        host, port = uri_hosts(uri)[0]
        return ChecksDatabase(backend, (host, int(port)))
    if not mongoeco_available():
        return ChecksDatabase(open_mongomock(), None)
    return ChecksDatabase(lazy=True)


def _start_wire_server() -> tuple[Any, tuple[str, int], subprocess.Popen]:
    from course.backends import open_server

    with tempfile.TemporaryDirectory(prefix="course-checkdb-") as folder:
        port_file = Path(folder) / "port"
        process = subprocess.Popen([sys.executable, "-m", "course.grading.checkdb", str(port_file)],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while not port_file.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                error = process.stderr.read().decode(errors="replace")[-500:] if process.poll() is not None else ""
                process.kill()
                raise RuntimeError(f"the checks' database server did not start: {error}")
            time.sleep(0.02)
        port = int(port_file.read_text())
    process.stderr.close()
    backend = open_server(f"mongodb://127.0.0.1:{port}/?directConnection=true", timeout_ms=60_000)
    return backend, ("127.0.0.1", port), process


async def _serve(port_file: Path) -> None:
    from mongoeco.engines.memory import MemoryEngine
    from mongoeco.wire import AsyncMongoEcoProxyServer

    from course.quirks import absorb

    absorb("mongoeco")  # the engine's quirks, absorbed as in the learner's kernel (course/quirks.py)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    proxy = AsyncMongoEcoProxyServer(engine=MemoryEngine(), host="127.0.0.1", port=0)
    address = await proxy.start()
    grader = os.getppid()

    async def watch_the_grader() -> None:  # a grader that died without stopping us: stop too
        while os.getppid() == grader:
            await asyncio.sleep(1)
        stop.set()

    watcher = asyncio.create_task(watch_the_grader())
    try:
        partial = port_file.with_name(port_file.name + ".partial")
        partial.write_text(f"{address.port}\n")
        os.replace(partial, port_file)
        await stop.wait()
        watcher.cancel()
    finally:
        await proxy.close()


def main(argv: list[str]) -> int:
    """``python -m course.grading.checkdb PORT_FILE``: serve an in-memory mongoeco on loopback."""
    from course.engine_imports import skip_unused_imports

    skip_unused_imports()  # before mongoeco is imported: a quicker start for every grading job
    asyncio.run(_serve(Path(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
