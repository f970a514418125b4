"""Choosing and opening the database backend.

The rules, in order:

1. ``MONGODB_URI`` set: a real server through pymongo.  Loopback hosts only,
   unless ``COURSE_ALLOW_REMOTE=1``.  If the server does not answer a ping the
   course stops with a message; it never falls back to another backend.
2. ``COURSE_BACKEND`` set to ``mongoeco`` or ``mongomock``: that backend.
3. Otherwise mongoeco's in-process engine when it is importable (Python >= 3.13),
   else mongomock, with a note saying what that costs.

Notebooks never choose a backend themselves; they call
:func:`course.lab.session.start_lab`, which calls :func:`open_backend`.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping

from course.store.capabilities import Capability, capabilities_of, missing_reasons
from course.store.engine_imports import skip_unused_imports
from course.store.quirks import absorb

URI_VARIABLE = "MONGODB_URI"
CHOICE_VARIABLE = "COURSE_BACKEND"
REMOTE_VARIABLE = "COURSE_ALLOW_REMOTE"
TIMEOUT_VARIABLE = "COURSE_SERVER_TIMEOUT_MS"
EMBEDDED_CHOICES = ("mongoeco", "mongomock")


class BackendError(RuntimeError):
    """The backend the user asked for cannot be used; the message says why and what to do."""


@dataclass(frozen=True)
class Backend:
    """An open database client and what it can do."""

    name: str  #: "server", "mongoeco-wire", "mongoeco" or "mongomock"
    version: str
    description: str
    client: Any = field(repr=False, compare=False)
    notes: tuple[str, ...] = ()

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The capabilities this backend has."""
        return capabilities_of(self.name)

    @property
    def missing(self) -> dict[Capability, str]:
        """The capabilities this backend lacks, each with its reason."""
        return missing_reasons(self.name)

    def supports(self, capability: Capability) -> bool:
        """True when this backend has ``capability``."""
        return capability in self.capabilities

    @property
    def embedded(self) -> bool:
        """True for in-process engines (no server, no network)."""
        return self.name in EMBEDDED_CHOICES


_OPEN: dict[tuple, Backend] = {}


def open_backend(env: Mapping[str, str] | None = None) -> Backend:
    """Return the backend the environment asks for, opening it once per process."""
    env = os.environ if env is None else env
    key = (env.get(URI_VARIABLE, ""), env.get(CHOICE_VARIABLE, ""), env.get(REMOTE_VARIABLE, ""))
    if key not in _OPEN:
        _OPEN[key] = _open(env)
    return _OPEN[key]


def close_all() -> None:
    """Close every backend this process opened (tests and the grader use this)."""
    while _OPEN:
        _, backend = _OPEN.popitem()
        backend.client.close()


DEFAULT_TIMEOUT_MS = 3000
MAX_TIMEOUT_MS = 600_000


def server_uri(env: Mapping[str, str]) -> str:
    """The ``MONGODB_URI`` the environment sets ("" when unset or empty); refuse one of only spaces."""
    raw = env.get(URI_VARIABLE, "")
    if raw and not raw.strip():
        raise BackendError(
            f"{URI_VARIABLE} is set but holds only spaces. Unset it to use the embedded engine, or set "
            f"it to your server, e.g. mongodb://127.0.0.1:27017/?directConnection=true"
        )
    return raw.strip()


def server_timeout_ms(env: Mapping[str, str]) -> int:
    """``COURSE_SERVER_TIMEOUT_MS`` as a whole number of milliseconds (default 3000)."""
    raw = env.get(TIMEOUT_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_MS
    try:
        value = int(raw)
    except ValueError:
        raise BackendError(
            f"{TIMEOUT_VARIABLE}={raw!r} is not a number of milliseconds: set it to a whole number "
            f"such as 3000, or unset it for the default ({DEFAULT_TIMEOUT_MS})"
        ) from None
    if not 0 < value <= MAX_TIMEOUT_MS:
        raise BackendError(f"{TIMEOUT_VARIABLE}={raw!r} must be between 1 and {MAX_TIMEOUT_MS} milliseconds")
    return value


def remote_allowed(env: Mapping[str, str]) -> bool:
    """True when ``COURSE_ALLOW_REMOTE=1``; any other value than 1, 0 or empty is refused."""
    raw = env.get(REMOTE_VARIABLE, "").strip()
    if raw not in ("", "0", "1"):
        raise BackendError(f"{REMOTE_VARIABLE}={raw!r}: set it to 1 to allow non-loopback servers, "
                           f"or unset it")
    return raw == "1"


def _open(env: Mapping[str, str]) -> Backend:
    uri = server_uri(env)
    choice = env.get(CHOICE_VARIABLE, "").strip().lower()
    if uri:
        if choice and choice not in ("server", ""):
            raise BackendError(
                f"{URI_VARIABLE} is set and {CHOICE_VARIABLE}={choice!r} asks for an embedded "
                f"backend: unset one of them so the course knows which database you mean"
            )
        return open_server(uri, allow_remote=remote_allowed(env), timeout_ms=server_timeout_ms(env))
    if choice == "mongoeco":
        return open_mongoeco()
    if choice == "mongomock":
        return open_mongomock()
    if choice:
        raise BackendError(
            f"{CHOICE_VARIABLE}={choice!r} is not a backend: use one of "
            f"{', '.join(EMBEDDED_CHOICES)}, or set {URI_VARIABLE} for a server"
        )
    if mongoeco_available():
        return open_mongoeco()
    return open_mongomock(notes=(
        f"mongoeco needs Python >= 3.13 and this is Python {sys.version.split()[0]}: "
        "running on mongomock, which cannot check everything (see below)",
    ))


def mongoeco_available() -> bool:
    """True when mongoeco can be imported here (it needs Python >= 3.13)."""
    if sys.version_info < (3, 13):
        return False
    skip_unused_imports()
    try:
        import mongoeco  # noqa: F401
    except ImportError:
        return False
    return True


def open_mongoeco() -> Backend:
    """Open mongoeco's in-process memory engine."""
    if not mongoeco_available():
        raise BackendError(
            f"{CHOICE_VARIABLE}=mongoeco needs Python >= 3.13 with mongoeco installed; "
            f"this is Python {sys.version.split()[0]}. Run `make lab`, which builds a "
            f"Python 3.13 environment, or choose {CHOICE_VARIABLE}=mongomock"
        )
    import mongoeco

    absorb("mongoeco")
    client = mongoeco.MongoClient()
    dialect = client.admin.command("buildInfo").get("version", "?")
    return Backend(
        name="mongoeco",
        version=mongoeco.__version__,
        description=f"mongoeco {mongoeco.__version__}, in-process memory engine "
        f"(MongoDB {dialect} dialect)",
        client=client,
    )


def open_mongomock(notes: tuple[str, ...] = ()) -> Backend:
    """Open mongomock, the fallback for Pythons older than 3.13."""
    try:
        import mongomock
    except ImportError as error:
        raise BackendError(
            "mongomock is not installed: run `make lab` or `pip install -e .`"
        ) from error
    absorb("mongomock")
    return Backend(
        name="mongomock",
        version=mongomock.__version__,
        description=f"mongomock {mongomock.__version__}, in-process fake (partial)",
        client=mongomock.MongoClient(),
        notes=notes,
    )


SRV_SCHEME = "mongodb+srv://"


def uri_hosts(uri: str) -> list[tuple[str, int]]:
    """Return the (host, port) pairs a MongoDB URI names; raise BackendError if malformed."""
    if uri.startswith(SRV_SCHEME):
        host = uri.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
        return [(host, 27017)]
    return list(_parse(uri)["nodelist"])


def _parse(uri: str) -> dict:
    """pymongo's parse of ``uri`` (no DNS lookups); BackendError with the reason if it is not valid."""
    from pymongo.errors import PyMongoError
    from pymongo.uri_parser import parse_uri

    if not uri.startswith("mongodb://"):
        raise BackendError(f"{URI_VARIABLE} is not a valid MongoDB URI: it must start with mongodb://")
    try:
        return parse_uri(uri)  # never called for mongodb+srv:// (that would look DNS up)
    except (PyMongoError, ValueError, TypeError) as error:
        unknown = _unknown_options(uri)
        if unknown:
            raise BackendError(
                f"{URI_VARIABLE} is not a valid MongoDB URI: unknown option"
                f"{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} (pymongo lists the options "
                f"it knows under 'Connection string options')"
            ) from None
        raise BackendError(f"{URI_VARIABLE} is not a valid MongoDB URI: {error}") from None


def _unknown_options(uri: str) -> list[str]:
    """The option names in ``uri``'s query string that pymongo does not know."""
    from urllib.parse import parse_qsl

    from pymongo.common import URI_OPTIONS_ALIAS_MAP, URI_OPTIONS_VALIDATOR_MAP

    known = set(URI_OPTIONS_VALIDATOR_MAP) | {a for names in URI_OPTIONS_ALIAS_MAP.values() for a in names}
    query = uri.split("?", 1)[1] if "?" in uri else ""
    names = [name for name, _ in parse_qsl(query.replace(";", "&"), keep_blank_values=True)]
    return [name for name in dict.fromkeys(names) if name.lower() not in known]


def _discovery(uri: str) -> str:
    """Why the hosts this URI reaches are chosen after the loopback check ("" when they are not)."""
    if uri.startswith(SRV_SCHEME):
        return "a mongodb+srv:// URI lets DNS pick the hosts"
    options = {k.lower(): v for k, v in _parse(uri)["options"].items()}
    if options.get("replicaset"):
        return "replicaSet= lets the server's list of replica set members pick the hosts"
    return ""


def _reached(client: Any) -> list[tuple[str, int]]:
    """Every server address the client's topology knows after its first command (seeds and discovered)."""
    try:
        return list(client.topology_description.server_descriptions())
    except Exception:  # an older pymongo without topology_description: the seeds are all it used
        return list(client.nodes)


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def redact(uri: str) -> str:
    """Return ``uri`` with any password replaced by ``***``."""
    scheme, sep, rest = uri.partition("://")
    if not sep or "@" not in rest.split("/", 1)[0]:
        return uri
    credentials, at, hosts = rest.partition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{hosts}"


def open_server(uri: str, *, allow_remote: bool = False, timeout_ms: int = 3000) -> Backend:
    """Connect to the server ``uri`` names, ping it, and identify it."""
    import pymongo
    from pymongo.errors import PyMongoError

    hosts = uri_hosts(uri)
    remote = [h for h, _ in hosts if not is_loopback(h)]
    if remote and not allow_remote:
        raise BackendError(
            f"{URI_VARIABLE} names {', '.join(remote)}, which is not this machine. The course "
            f"creates and drops databases, so it only connects to loopback hosts unless you "
            f"set {REMOTE_VARIABLE}=1"
        )
    discovery = "" if allow_remote else _discovery(uri)
    if discovery:
        raise BackendError(
            f"{URI_VARIABLE}={redact(uri)}: {discovery}, and they are picked after the course has "
            f"checked that the hosts are this machine, so that check would prove nothing. Name the server itself, e.g. "
            f"mongodb://127.0.0.1:27017/?directConnection=true, or set {REMOTE_VARIABLE}=1 "
            f"if any host it leads to may be used"
        )
    where = ", ".join(f"{h}:{p}" for h, p in hosts)
    try:
        client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=timeout_ms,
                                     connectTimeoutMS=timeout_ms, appname="schema-design-course")
        client.admin.command("ping")
        reached = [h for h, _ in _reached(client) if not is_loopback(h)]
        if reached and not allow_remote:
            client.close()
            raise BackendError(
                f"{URI_VARIABLE}={redact(uri)}: the server at {where} is a member of a replica set "
                f"whose members include {', '.join(sorted(set(reached)))}, which the driver would "
                f"also use and which is not a loopback name. Add directConnection=true to the URI "
                f"to use only {where}, or set {REMOTE_VARIABLE}=1"
            )
        info = client.admin.command("buildInfo")
    except PyMongoError as error:
        raise BackendError(
            f"{URI_VARIABLE}={redact(uri)} is set, but the server at {where} did not answer "
            f"within {timeout_ms / 1000:g} s ({type(error).__name__}). Start the server, or "
            f"unset {URI_VARIABLE} to use the embedded backend. The course does not fall back "
            f"on its own."
        ) from error
    version = str(info.get("version", "?"))
    if info.get("gitVersion") == "mongoeco":
        import importlib.metadata as metadata

        try:
            eco = metadata.version("mongoeco")
        except metadata.PackageNotFoundError:
            eco = "?"
        return Backend(
            name="mongoeco-wire",
            version=version,
            description=f"mongoeco wire server at {where} (MongoDB {version} dialect, "
            f"mongoeco {eco}), through pymongo {pymongo.version}",
            client=client,
        )
    return Backend(
        name="server",
        version=version,
        description=f"MongoDB {version} at {where}, through pymongo {pymongo.version}",
        client=client,
    )
