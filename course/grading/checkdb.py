"""The checks' database: a server outside every sandbox that the grader owns.

Hidden checks seed and read their data there, through the grader's own
client; learner functions reach it only through the relay of their own
sandbox (:mod:`course.grading.relay`).  It is, in order:

* ``MONGODB_URI`` (the instructor's server, loopback unless allowed), or
* mongoeco wire servers that the grader starts for the run, one per worker
  (``python -m course.grading.checkdb PORT_FILE...``, loopback only, stopped
  afterwards): one process imports mongoeco once and forks a server for every
  worker after the first, each with its own engine, or
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
import traceback
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

    def __init__(self, backend: Any = None, address: tuple[str, int] | None = None, *, lazy: bool = False,
                 servers: "WireServers | None" = None, index: int = 0):
        self._backend, self._address, self._lazy = backend, address, lazy
        self._servers = servers if servers is not None or not lazy else WireServers(1)
        self._index = index  #: which of the group's servers is this one's
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
                self._backend, self._address = self._servers.connect(self._index)

    def close(self) -> None:
        """Close the grader's client and release its server (for good: see ``_closed``).

        The servers the grader started stop when the last database of their group is closed.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._backend is not None and self._address is not None:
                try:
                    self._backend.client.close()
                except Exception:  # noqa: BLE001 - closing must not fail a run
                    pass
            if self._lazy:
                self._backend = self._address = None
        if self._lazy:
            self._servers.release()


class WireServers:
    """The grader's mongoeco wire servers for one run: ``count`` servers in one process tree, started once.

    The process is started by the first member that needs its server (see :meth:`connect`) and is
    stopped once every member has been released; after that it never starts again.
    """

    def __init__(self, count: int):
        self.count = count
        self.process: subprocess.Popen | None = None
        self._addresses: list[tuple[str, int]] | None = None
        self._members = self.count  #: members not released yet
        self._lock = threading.Lock()

    def connect(self, index: int) -> tuple[Any, tuple[str, int]]:
        """A new client of server ``index`` and its address (the servers start now if they have not)."""
        from course.backends import open_server

        with self._lock:
            if self._members <= 0:
                raise RuntimeError("the checks' database was closed")
            if self._addresses is None:
                self.process, self._addresses = _start_wire_servers(self.count)
            host, port = self._addresses[index]
        return open_server(f"mongodb://{host}:{port}/?directConnection=true", timeout_ms=60_000), (host, port)

    def release(self) -> None:
        """One member is done; the last one stops the servers."""
        with self._lock:
            self._members -= 1
            if self._members > 0:
                return
            process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(5 + self.count)
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
    return open_checks_databases(1)[0]


def open_checks_databases(count: int) -> list[ChecksDatabase]:
    """``count`` checks' databases, one per worker: each serves one command at a time (see the module docstring).

    On the grader's own mongoeco, they are the servers of one :class:`WireServers`, started on first use.
    """
    from course.backends import (
        REMOTE_VARIABLE, TIMEOUT_VARIABLE, URI_VARIABLE, BackendError, mongoeco_available, open_mongomock,
        open_server, uri_hosts,
    )

    uri = os.environ.get(URI_VARIABLE, "").strip()
    if uri:
        if uri.startswith("mongodb://") and "@" in uri.split("://", 1)[1].split("/", 1)[0]:
            raise BackendError(WITH_CREDENTIALS)
        host, port = uri_hosts(uri)[0]
        timeout_ms = int(os.environ.get(TIMEOUT_VARIABLE, "3000") or 3000)
        return [ChecksDatabase(open_server(uri, allow_remote=os.environ.get(REMOTE_VARIABLE) == "1",
                                           timeout_ms=timeout_ms), (host, int(port))) for _ in range(count)]
    if not mongoeco_available():
        return [ChecksDatabase(open_mongomock(), None) for _ in range(count)]
    servers = WireServers(count)
    return [ChecksDatabase(lazy=True, servers=servers, index=index) for index in range(count)]


def _start_wire_servers(count: int) -> tuple[subprocess.Popen, list[tuple[str, int]]]:
    """Start ``count`` servers (one process, forking the others) and wait until each listens."""
    with tempfile.TemporaryDirectory(prefix="course-checkdb-") as folder:
        port_files = [Path(folder) / f"port{index}" for index in range(count)]
        process = subprocess.Popen([sys.executable, "-m", "course.grading.checkdb", *map(str, port_files)],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while not all(port_file.exists() for port_file in port_files):
            if process.poll() is not None or time.monotonic() > deadline:
                error = process.stderr.read().decode(errors="replace")[-500:] if process.poll() is not None else ""
                process.kill()
                process.wait()
                raise RuntimeError(f"the checks' database server did not start: {error}")
            time.sleep(0.02)
        ports = [int(port_file.read_text()) for port_file in port_files]
    process.stderr.close()
    return process, [("127.0.0.1", port) for port in ports]


async def _serve(port_file: Path, children: tuple[int, ...] = ()) -> int:
    """Serve one in-memory engine until SIGTERM, or until the process that started this one is gone.

    The first server of a group also watches the ``children`` it forked: when one of them ends, it
    stops and returns 1 (its grader sees the process end and reports it).
    """
    from mongoeco.engines.memory import MemoryEngine
    from mongoeco.wire import AsyncMongoEcoProxyServer

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    proxy = AsyncMongoEcoProxyServer(engine=MemoryEngine(), host="127.0.0.1", port=0)
    address = await proxy.start()
    parent, failed = os.getppid(), []

    async def watch() -> None:  # a grader (or first server) that died without stopping us: stop too
        while os.getppid() == parent:
            for child in children:
                ended, status = os.waitpid(child, os.WNOHANG)
                if ended:
                    failed.append(f"the checks' server {child} ended (wait status {status})")
            if failed:
                break
            await asyncio.sleep(1)
        stop.set()

    watcher = asyncio.create_task(watch())
    try:
        partial = port_file.with_name(port_file.name + ".partial")
        partial.write_text(f"{address.port}\n")
        os.replace(partial, port_file)
        await stop.wait()
        watcher.cancel()
    finally:
        await proxy.close()
    if failed:
        print(failed[0], file=sys.stderr, flush=True)
    return 1 if failed else 0


def _stop_children(children: list[int]) -> None:
    for child in children:
        try:
            os.kill(child, signal.SIGTERM)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + 5
    for child in children:
        while time.monotonic() < deadline:
            try:
                if os.waitpid(child, os.WNOHANG)[0]:
                    break
            except ChildProcessError:
                break
            time.sleep(0.02)
        else:
            try:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


def main(argv: list[str]) -> int:
    """``python -m course.grading.checkdb PORT_FILE...``: serve an in-memory mongoeco on loopback per file.

    mongoeco is imported once, then the process forks a server for every port file after the first
    (each with its own engine, on a core of its own) and serves the first itself; stopping it stops all.
    """
    from course.engine_imports import skip_unused_imports

    skip_unused_imports()  # before mongoeco is imported: a quicker start for every grading job
    import mongoeco.engines.memory  # noqa: F401 - imported once, before the fork, for every server
    import mongoeco.wire  # noqa: F401

    from course.quirks import absorb

    absorb("mongoeco")  # the engine's quirks, absorbed as in the learner's kernel (course/quirks.py)
    port_files = [Path(argument) for argument in argv]
    if not port_files:
        print("usage: python -m course.grading.checkdb PORT_FILE...", file=sys.stderr)
        return 2
    children: list[int] = []
    for port_file in port_files[1:]:
        child = os.fork()
        if child == 0:  # a server of its own; its parent is the first server
            code = 1
            try:
                code = asyncio.run(_serve(port_file))
            except BaseException:  # noqa: BLE001 - said on stderr; the first server sees this one end
                traceback.print_exc()
            finally:
                os._exit(code)
        children.append(child)
    try:
        return asyncio.run(_serve(port_files[0], tuple(children)))
    finally:
        _stop_children(children)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
