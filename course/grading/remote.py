"""The grader's side of the channel: learner answers as plain data, learner functions as handles.

After an answer cell, the grader asks the kernel's agent (:mod:`course.grading.agent`)
for the exercise's answer variables and runs every assertion here, in its own
process, on its own copy of ``course.lessons``:

* a data answer arrives as plain data (:mod:`course.grading.channel`);
* a function arrives as a :class:`RemoteFunction`: calling it sends the
  arguments as data (collections and databases as references to the checks'
  database), opens the sandbox's relay for that call's databases only, and
  returns plain data, or raises :class:`LearnerRaised` with the learner's
  exception type name and message;
* ``lab.scratch()`` is a scratch database beside the checks' data (tagged per learner),
  and ``lab.db``, the learner's own lab database, is a copy the agent describes
  as data (documents, indexes, options), made when a check first asks for it.

One module past 400 lines on purpose: it is the grader's whole side of the channel to the learner's
kernel (answers, calls, proxies and their limits), kept together so that every value that crosses is
decoded by the same rules.
"""

from __future__ import annotations

import builtins
import select
import socket
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from course.grading.channel import TAG, ChannelError, ChannelTimeout, Encoder, decode, receive, send
from course.lab.session import Lab

NOT_STARTED = "the lab was never started: the first code cell (start_lab) is missing or failed"
MAX_LAB_DOCUMENTS = 100_000

from course.engine.exercise import LearnerRaised


class LearnerTimeout(Exception):
    """A learner function ran past the time limit (the kernel was interrupted)."""


class AgentGone(Exception):
    """The kernel's agent stopped answering (it died, was broken by the notebook, or hung)."""


def _exception_bases() -> dict[str, type]:
    bases = {name: value for name, value in vars(builtins).items()
             if isinstance(value, type) and issubclass(value, Exception)}
    try:
        import pymongo.errors as errors

        bases.update({name: value for name, value in vars(errors).items()
                      if isinstance(value, type) and issubclass(value, Exception)})
    except ImportError:  # pragma: no cover
        pass
    return bases


_BASES = _exception_bases()
_CLASSES: dict[str, type] = {}


def learner_raised(type_name: str, message: str, code: int | None = None,
                   type_names: tuple[str, ...] = (), details: dict | None = None) -> LearnerRaised:
    """What a check sees: a LearnerRaised that is also the builtin (or pymongo) exception class of that name.

    Only the names and the message crossed; the class here is the grader's own, so ``except TypeError``
    in a check and ``error.type_name == "TypeError"`` both work.
    """
    base = next((_BASES[name] for name in (type_name, *type_names) if name in _BASES), None)
    cls = LearnerRaised
    if base is not None:
        key = base.__name__
        if key not in _CLASSES:
            _CLASSES[key] = type(key, (LearnerRaised, base), {"__str__": Exception.__str__})
        cls = _CLASSES[key]
    error = cls.__new__(cls)
    LearnerRaised.__init__(error, type_name, message, tuple(type_names) or (type_name,))
    error._message, error._error_labels = message, set()  # what pymongo's error classes read
    error._OperationFailure__code = code
    error._OperationFailure__details = details if isinstance(details, dict) else {"errmsg": message, "code": code}
    error._OperationFailure__max_wire_version = None
    return error


# ---- the link to one kernel's agent ------------------------------------------------------

class AgentLink:
    """The grader's listening channel socket for one kernel, and the request loop over it."""

    def __init__(self, path: str, relay: Any, call_timeout: float, interrupt: Callable[[], None]):
        self.path = path
        self.relay = relay
        self.call_timeout = call_timeout
        self.interrupt = interrupt
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        self._listener.listen(4)
        self._sock: socket.socket | None = None
        self.dead = ""

    def close(self) -> None:
        """Stop listening."""
        for sock in (self._sock, self._listener):
            if sock is not None:
                try:
                    sock.close()
                except OSError:
                    pass

    @contextmanager
    def session(self, gave_up: threading.Event, timeout: float, token: str) -> Iterator["AgentLink"]:
        """Wait for the agent to connect and say ``token`` (until ``gave_up`` is set or ``timeout``), then serve.

        A connection that does not greet with the token within two seconds (a learner's process
        knocking on the socket) is closed and the wait goes on.
        """
        deadline = time.monotonic() + timeout
        while self._sock is None:
            if gave_up.is_set():
                raise AgentGone("the grading request did not run in the kernel")
            wait = min(0.05, deadline - time.monotonic())
            if wait <= 0:
                raise AgentGone("the kernel did not answer the grader")
            if not select.select([self._listener], [], [], wait)[0]:
                continue
            candidate, _ = self._listener.accept()
            try:
                hello = receive(candidate, time.monotonic() + 2)
            except (ChannelError, OSError):
                hello = {}
            if hello.get("hello") == token:
                self._sock = candidate
            else:
                candidate.close()
        self.dead = ""
        try:
            yield self
        finally:
            try:
                send(self._sock, {"op": "done"})
            except (OSError, ChannelError):
                pass
            self._sock.close()
            self._sock = None

    def request(self, message: dict, timeout: float | None = None,
                callbacks: dict[int, Callable[..., Any]] | None = None) -> dict:
        """Send ``message`` and wait for the reply; interrupt the kernel if it takes too long.

        While it waits, the learner's code may call back the check's own functions in ``callbacks``
        (a ``sleep`` or ``log`` handed to it): each call is run here and answered (see :func:`run_callback`);
        the time it takes counts towards the deadline.
        """
        if self.dead:
            raise AgentGone(self.dead)
        wait = self.call_timeout if timeout is None else timeout
        try:
            send(self._sock, message)
            try:
                return self._reply(time.monotonic() + wait, callbacks)
            except ChannelTimeout:
                self.interrupt()
                try:
                    reply = self._reply(time.monotonic() + 10, callbacks)
                except ChannelTimeout:
                    self.dead = "the kernel stopped answering after a time-out"
                    raise AgentGone(self.dead) from None
                if reply.get("interrupted"):
                    raise LearnerTimeout(f"ran longer than {wait:g} s and was interrupted") from None
                return reply
        except (ChannelError, OSError) as error:
            if isinstance(error, AgentGone):
                raise
            self.dead = f"the kernel's channel broke ({error})"
            raise AgentGone(self.dead) from None


    def _reply(self, deadline: float, callbacks: dict[int, Callable[..., Any]] | None) -> dict:
        """The next message that is not a callback request, answering callback requests on the way."""
        while True:
            message = receive(self._sock, deadline)
            if "callback" not in message:
                return message
            send(self._sock, run_callback(message, callbacks or {}))


def run_callback(message: dict, callbacks: dict[int, Callable[..., Any]]) -> dict:
    """Run the check's function a learner's code called back; its value or what it raised, as plain data.

    The arguments come from the learner's process, so they are decoded as plain data only (a learner
    function cannot be passed back in); an exception the check's function raises (a simulated deploy
    that interrupts a batch job) is sent back to be raised in the learner's code.
    """
    from course.grading.agent import describe_exception

    try:
        function = callbacks[int(message["callback"])]
        args = decode(message.get("args", []))
        kwargs = decode(message.get("kwargs", {}))
        if not isinstance(args, list) or not isinstance(kwargs, dict) or \
                not all(isinstance(key, str) for key in kwargs):
            raise ChannelError("malformed arguments")
    except (KeyError, ValueError, TypeError, ChannelError) as error:
        return {"failed": f"a malformed callback: {type(error).__name__}: {error}"[:400]}
    try:
        value = function(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the check's function raised on purpose: it crosses as data
        return {"raised": describe_exception(error)}
    try:
        return {"value": Encoder().encode(value)}
    except ValueError as error:
        return {"failed": f"the check's function returned what cannot cross: {error}"[:400]}


class RemoteFunction:
    """A learner function living in the kernel; calling it goes through the agent."""

    def __init__(self, link: AgentLink, handle: int, name: str):
        self._link, self._handle, self.__name__ = link, handle, name

    def __repr__(self) -> str:
        return f"<learner function {self.__name__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from course.grading.checkdb import NO_DATABASE
        from course.grading.commandlog import CommandLog

        log = CommandLog()
        databases: set[str] = set()
        callbacks: dict[int, Callable[..., Any]] = {}
        encoder = Encoder(lambda value: _reference(value, self._link, log, databases, callbacks))
        message = {"op": "call", "handle": self._handle, "args": encoder.encode(list(args)),
                   "kwargs": encoder.encode(dict(kwargs))}
        if databases and self._link.relay is None:
            raise RuntimeError(NO_DATABASE)
        relay = self._link.relay
        if relay is not None:
            with relay.call(databases, log):
                reply = self._link.request(message, callbacks=callbacks)
            if relay.exceeded or relay.stuck:
                from course.engine.exercise import GradingLimit

                why = relay.exceeded or relay.stuck
                raise GradingLimit(f"{self.__name__}: {why}", why)
        else:
            reply = self._link.request(message, callbacks=callbacks)
        if isinstance(reply.get("after"), dict):
            _update_in_place(reply["after"], args, kwargs)
        if "raised" in reply:
            raised = reply["raised"] if isinstance(reply["raised"], dict) else {}
            code = raised.get("code") if type(raised.get("code")) is int else None
            names = raised.get("names") if isinstance(raised.get("names"), list) else []
            details = raised.get("details")
            try:
                details = decode(details) if details is not None else None
            except ChannelError:
                details = None
            raise learner_raised(str(raised.get("type", "Exception")), str(raised.get("message", "")), code,
                                 tuple(str(n) for n in names[:20]), details)
        if reply.get("interrupted"):
            raise LearnerTimeout("was interrupted")
        if "value" not in reply:
            raise AgentGone(str(reply.get("failed", "the kernel's agent sent no value")))
        return decode(reply["value"], lambda tagged: _rebuild(tagged, self._link))


_PLAIN = (str, bytes, int, float, bool, type(None))


def _plain(value: Any, depth: int = 0) -> bool:
    """True when ``value`` is plain data all the way down (no collection, function or object of the check's)."""
    if depth > 50:
        return False
    if isinstance(value, dict):
        return all(_plain(k, depth + 1) and _plain(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_plain(item, depth + 1) for item in value)
    return isinstance(value, _PLAIN) or type(value).__module__.split(".")[0] in ("bson", "datetime", "uuid", "decimal")


def _update_in_place(after: dict, args: tuple, kwargs: dict) -> None:
    """Make the check's own dicts, lists and sets passed to a learner function what the function left them.

    Only containers of plain data are updated (a learner's changes reach nothing else of the check's)."""
    changed = [(args[int(i)], v) for i, v in (after.get("args") or {}).items() if str(i).isdigit() and int(i) < len(args)]
    changed += [(kwargs[k], v) for k, v in (after.get("kwargs") or {}).items() if k in kwargs]
    for original, encoded in changed:
        if type(original) not in (dict, list, set) or not _plain(original):
            continue
        try:
            now = decode(encoded)
        except ChannelError:
            continue
        if type(now) is not type(original) or now == original:
            continue
        if isinstance(original, dict):
            original.clear()
            original.update(now)
        elif isinstance(original, list):
            original[:] = now
        else:
            original.clear()
            original.update(now)


def _reference(value: Any, link: AgentLink, log: Any, databases: set[str],
               callbacks: dict[int, Callable[..., Any]]) -> dict | None:
    """Tag collections, databases, learner functions and the check's own functions passed to a learner
    function; refuse other objects."""
    from course.engine.recording import RecordingCollection, RecordingDatabase

    if isinstance(value, RemoteFunction):
        return {TAG: "handle", "id": value._handle, "name": value.__name__}
    if isinstance(value, RecordingCollection):
        inner = value._collection
        log.watch_collection(inner.database.name, inner.name, value)
        databases.add(inner.database.name)
        return {TAG: "collection", "db": inner.database.name, "name": inner.name}
    if isinstance(value, RecordingDatabase):
        log.watch_database(value._db.name, value)
        databases.add(value._db.name)
        return {TAG: "database", "db": value._db.name, "name": ""}
    kind = type(value).__name__
    if kind == "Collection" and hasattr(value, "database"):
        databases.add(value.database.name)
        return {TAG: "collection", "db": value.database.name, "name": value.name}
    if kind == "Database" and hasattr(value, "list_collection_names"):
        databases.add(value.name)
        return {TAG: "database", "db": value.name, "name": ""}
    if isinstance(value, (dict, list, tuple, set, frozenset, str, bytes, int, float)) or value is None:
        return None
    if type(value).__module__.split(".")[0] in ("bson", "datetime", "uuid", "re"):
        return None
    if callable(value) and not isinstance(value, type):
        number = len(callbacks) + 1
        callbacks[number] = value
        return {TAG: "callback", "id": number, "name": str(getattr(value, "__name__", "function"))[:100]}
    raise TypeError(f"a check passed a {kind} to learner code: only plain data, collections and databases "
                    f"can cross to the kernel")


def _rebuild(tagged: dict, link: AgentLink) -> Any:
    if tagged.get(TAG) == "handle":
        return RemoteFunction(link, int(tagged["id"]), str(tagged.get("name", "function"))[:100])
    return None


# ---- the grader's lab -----------------------------------------------------------------------

def tagged_name(lab: str, purpose: str, tag: str) -> str:
    """The checks' database of ``lab`` for ``purpose`` ("" or "scratch") and learner ``tag``."""
    from course.store.namespace import PREFIX, check_lab_id, guard

    parts = [PREFIX + check_lab_id(lab)] + ([purpose] if purpose else []) + ["g" + tag]
    return guard("_".join(parts))


class GradingLab(Lab):
    """The lab as the grader's checks see it: scratch space beside the checks' data, ``db`` a copy of the learner's."""

    def __init__(self, lab_id: str, backend: Any, tag: str, link: AgentLink, reachable: bool = True):
        super().__init__(lab_id, backend)
        self._tag, self._link, self._copied, self._reachable = tag, link, False, reachable

    @property
    def db(self) -> Any:
        """A copy of the learner's own lab database (made on first use, from what the agent describes)."""
        database = self.client[tagged_name(self.id, "", self._tag)]
        if not self._copied:
            self._copied = True
            copy_learner_database(self._link, self.id, self.client, database)
        return database

    def scratch(self) -> Any:
        """A freshly emptied scratch database where the checks' data lives, for this learner only.

        Without a server the sandbox can reach, the check cannot hand data to the learner's code:
        it reports "needs ..." (never a verdict computed inside the kernel).
        """
        if not self._reachable:
            from course.engine.exercise import Unsupported
            from course.grading.checkdb import NO_DATABASE_FEATURE

            raise Unsupported(feature=NO_DATABASE_FEATURE, fixed=True)
        name = tagged_name(self.id, "scratch", self._tag)
        self.client.drop_database(name)
        return self.client[name]

    def reset(self) -> None:
        """Drop this learner's checks databases of this lab."""
        for purpose in ("", "scratch"):
            self.client.drop_database(tagged_name(self.id, purpose, self._tag))


def copy_learner_database(link: AgentLink, lab_id: str, client: Any, target: Any) -> None:
    """Rebuild the learner's lab database in ``target`` (a database of ``client``) from the agent's
    description (data only)."""
    client.drop_database(target.name)
    state = link.request({"op": "lab", "lab": lab_id})
    for name in state.get("collections", []):
        if not isinstance(name, str) or name.startswith("system."):
            continue
        described = link.request({"op": "collection", "lab": lab_id, "name": name, "limit": MAX_LAB_DOCUMENTS})
        if "documents" not in described:
            raise AgentGone(str(described.get("failed", "the kernel did not describe its database")))
        options = decode(described.get("options", {}))
        keep = {k: options[k] for k in ("validator", "validationLevel", "validationAction", "capped", "size")
                if isinstance(options, dict) and k in options}
        target.create_collection(name, **keep)
        collection = target[name]
        indexes = decode(described.get("indexes", {}))
        for index_name, spec in (indexes.items() if isinstance(indexes, dict) else []):
            if index_name == "_id_" or not isinstance(spec, dict) or not isinstance(spec.get("key"), list):
                continue
            extra = {k: spec[k] for k in ("unique", "sparse", "partialFilterExpression", "expireAfterSeconds")
                     if k in spec}
            collection.create_index([tuple(pair) for pair in spec["key"]], name=index_name, **extra)
        documents = decode(described["documents"])
        if isinstance(documents, list) and documents:
            collection.insert_many(documents[:MAX_LAB_DOCUMENTS], ordered=False)


# ---- one exercise -----------------------------------------------------------------------------

def with_secret_tests(exercise_class: type, secret_modules: list[Any]) -> type:
    """``exercise_class`` plus the secret assertions that target it (as hidden assertions)."""
    from course.grading.secret import secret_assertions

    extra = secret_assertions(secret_modules, exercise_class.id)
    if not extra:
        return exercise_class
    members = {f"_secret_{n}": function for n, function in enumerate(extra)}
    return type(exercise_class.__name__, (exercise_class,), members)


def answer_values(link: AgentLink, names: tuple[str, ...], keep: str = "", kept: str = "") -> dict[str, Any]:
    """The learner's answer variables as plain data (functions as RemoteFunction); missing ones left out.

    ``keep``: the agent also keeps the objects under that exercise id; ``kept``: read those instead."""
    request: dict[str, Any] = {"op": "answers", "names": list(names)}
    if keep:
        request["keep"] = keep
    if kept:
        request["kept"] = kept
    reply = link.request(request)
    values = reply.get("values")
    if not isinstance(values, dict):
        raise AgentGone(str(reply.get("failed", "the kernel sent no answers")))
    found = {}
    for name in names:
        value = values.get(name)
        if isinstance(value, dict) and value.get(TAG) == "missing":
            continue
        if name in values:
            found[name] = decode(value, lambda tagged: _rebuild(tagged, link))
    return found


def grade_exercise(link: AgentLink, exercise_class: type, checks: Any, tag: str,
                   secret_modules: list[Any], visible: Any = None) -> Any:
    """Grade one exercise against the agent's answers; return its Result (never raises for learner trouble).

    Without ``visible``: its visible assertions, on the answers as they are now (which the agent keeps);
    the Result's ``pending`` counts the hidden ones.  With ``visible`` (that Result): the hidden and secret
    assertions, on the kept answers, summarised with it; the grader does this after the notebook's last
    cell (:func:`course.grading.execution.run_notebook`)."""
    from course.engine.results import Result, Status

    lab_id = exercise_class.id.split(".", 1)[0]
    graded_class = with_secret_tests(exercise_class, secret_modules)
    possible = graded_class.max_points()
    try:
        state = link.request({"op": "lab", "lab": lab_id})
        if not state.get("started"):
            return Result(exercise_class.id, exercise_class.title, Status.ERROR, NOT_STARTED, 0.0, possible)
        lab = GradingLab(lab_id, checks.lab_backend(), tag, link, checks.reachable)
        exercise = graded_class(lab)
        names = tuple(exercise_class.answers)
        if visible is None:
            return exercise.evaluate(answer_values(link, names, keep=exercise_class.id), include_hidden=False)
        return exercise.evaluate_hidden(answer_values(link, names, kept=exercise_class.id), visible)
    except (AgentGone, ChannelError) as error:
        return Result(exercise_class.id, exercise_class.title, Status.ERROR,
                      f"could not grade: {error}", 0.0, possible)
    except Exception as error:  # the engine itself failed: say so without a traceback
        return Result(exercise_class.id, exercise_class.title, Status.ERROR,
                      f"grading failed: {type(error).__name__}: {error}", 0.0, possible)


def hidden_not_run(exercise_class: type, checks: Any, tag: str, secret_modules: list[Any], visible: Any,
                   why: str) -> Any:
    """``visible`` (an exercise's visible Result) completed with its hidden and secret assertions as errors
    that could not run (``why``), for a notebook that stopped before the hidden checks' turn."""
    lab_id = exercise_class.id.split(".", 1)[0]
    exercise = with_secret_tests(exercise_class, secret_modules)(
        GradingLab(lab_id, checks.lab_backend(), tag, None, checks.reachable))
    return exercise.hidden_not_run(visible, why)
