"""The checks' database: where the hidden checks' data lives, outside every sandbox.

Hidden checks seed and read their data there, through the grader's own
client; learner functions reach it only through the relay of their own
sandbox (:mod:`course.grading.relay`).  It is, in order:

* ``MONGODB_URI`` (the instructor's server, loopback unless allowed), or
* mongoeco's memory engine inside the grader, one per worker
  (:class:`course.grading.engine_host.EngineHost`, started on first use): the
  checks call it directly, and the relays reach it through a wire server on
  loopback, or
* none (no mongoeco on this Python, no server): checks that need no database
  still grade; a learner function that needs a collection gets an error
  saying so, never a verdict computed elsewhere.
"""

from __future__ import annotations

import os
import threading
from typing import Any

NO_DATABASE_FEATURE = ("a checks' database the sandbox can reach (mongoeco on Python >= 3.13, or a server "
                       "named by MONGODB_URI)")
WITH_CREDENTIALS = (
    "MONGODB_URI names a user: the checks' relay connects the sandboxes to that server without credentials "
    "(learner code must never hold them), so a server that requires authentication would refuse every "
    "learner function. Grade against a server without authentication listening on loopback only, or unset "
    "MONGODB_URI to use the grader's own mongoeco engine")
NO_DATABASE = ("this check passes a collection to your function, and the grader has no database the "
               "sandbox can reach: grade on Python >= 3.13 (mongoeco) or set MONGODB_URI")


class ChecksDatabase:
    """Where the checks' data lives: the grader's backend and the (host, port) the relays forward to.

    The grader's own engine (``lazy``) starts on first use (a lab whose checks need no database
    never starts it).
    """

    def __init__(self, backend: Any = None, address: tuple[str, int] | None = None, *, lazy: bool = False):
        self._backend, self._address, self._lazy = backend, address, lazy
        self.host: Any = None  #: the grader's own engine, once started (lazy only)
        self._lock = threading.Lock()
        self._closed = False  #: once closed, never started again (a start_soon thread may come late)
        #: an engine that ends with the one notebook's grading process it was made for: nothing to drop after it
        #: (and no wait on an engine a learner's command still keeps busy)
        self.private = False

    @property
    def reachable(self) -> bool:
        """True when learner functions can be given collections (a server the relays can reach)."""
        return self._lazy or self._address is not None

    @property
    def started(self) -> bool:
        """True once the checks' database is open (always, unless it is started on first use)."""
        return not self._lazy or self._backend is not None

    def lab_backend(self) -> Any:
        """What a grading lab sees as its backend: the real one, or one that starts the engine on first use."""
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
        """Start the engine in the background now (a class run: it is ready by the first check)."""
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
                self.host = _engine_host()
                self._backend, self._address = _hosted_backend(self.host), self.host.address

    def close(self) -> None:
        """Close the grader's client and stop its own engine, if it started (for good: see ``_closed``)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            host, self.host = self.host, None
            if self._backend is not None and self._address is not None and host is None:
                try:
                    self._backend.client.close()
                except Exception:  # noqa: BLE001 - closing must not fail a run
                    pass
            if self._lazy:
                self._backend = self._address = None
        if host is not None:
            host.close()


def _engine_host() -> Any:
    from course.grading.engine_host import EngineHost

    return EngineHost()


def _hosted_backend(host: Any) -> Any:
    """The Backend the checks see on the grader's own engine: mongoeco, with mongoeco's capabilities."""
    from course.store.backends import Backend

    return Backend(name="mongoeco", version=host.version,
                   description=f"mongoeco {host.version}, the grader's in-process memory engine (its sandboxes' "
                               f"relays reach it on {host.address[0]}:{host.address[1]})",
                   client=host.client)


class _LazyBackend:
    """The grader's own engine before it is started: its name and capabilities are known already."""

    name = "mongoeco"
    notes: tuple[str, ...] = ()
    embedded = False

    def __init__(self, checks: ChecksDatabase):
        self._checks = checks

    @property
    def client(self) -> Any:
        """The grader's client (starts the engine)."""
        return self._checks.backend.client

    @property
    def version(self) -> str:
        """The engine's version (starts the engine)."""
        return self._checks.backend.version

    @property
    def description(self) -> str:
        """What the engine is (starts the engine)."""
        return self._checks.backend.description

    @property
    def capabilities(self) -> frozenset:
        """Known from the backend's name."""
        from course.store.capabilities import capabilities_of

        return capabilities_of(self.name)

    @property
    def missing(self) -> dict:
        """Known from the backend's name."""
        from course.store.capabilities import missing_reasons

        return missing_reasons(self.name)

    def supports(self, capability: Any) -> bool:
        """True when the backend has ``capability``."""
        return capability in self.capabilities


def named_server() -> bool:
    """True when the checks' database is the server ``MONGODB_URI`` names (not the grader's own engine)."""
    from course.store.backends import URI_VARIABLE

    return bool(os.environ.get(URI_VARIABLE, "").strip())


def preload_checks_engine() -> None:
    """Import the grader's own engine now, when the checks will use it, and run it once (started and
    stopped again: no thread is left), so that each grading process forked later starts its own without
    importing or preparing anything again (about 40 ms less per notebook)."""
    from course.store.backends import mongoeco_available

    if not named_server() and mongoeco_available():
        import mongoeco.engines.memory  # noqa: F401
        import mongoeco.wire  # noqa: F401

        from course.store.quirks import absorb

        absorb("mongoeco")
        host = _engine_host()
        try:
            warm = host.client["course_warm_up"]["c"]
            warm.insert_one({"_id": 1})
            warm.find_one({"_id": 1})
            list(warm.aggregate([{"$match": {}}]))
        finally:
            host.close()


def open_checks_database() -> ChecksDatabase:
    """Open the checks' database this run uses (see the module docstring)."""
    return open_checks_databases(1)[0]


def open_checks_databases(count: int) -> list[ChecksDatabase]:
    """``count`` checks' databases, one per worker (see the module docstring).

    On the grader's own mongoeco, each is an engine of its own, started on first use.
    """
    from course.store.backends import (
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
    return [ChecksDatabase(lazy=True) for _ in range(count)]
