"""The agent in a learner's kernel: answers the grader's questions, calls learner functions.

While an exercise is graded the grader runs ``serve(PATH)`` in the kernel (as
a silent cell).  The agent connects to the grader's channel socket
(:mod:`course.grading.channel`) and serves requests until told ``done``:

* ``{"op": "answers", "names": [...]}``: the answer variables, as plain data
  (functions as handles); with ``"keep": ID`` the objects are also kept under
  that exercise id, and ``"kept": ID`` reads those kept objects instead (the
  hidden checks run after the notebook's last cell, on what its answer cell
  left);
* ``{"op": "call", "handle": n, "args": [...], "kwargs": {...}}``: call a
  learner function; collections and databases arrive as references and are
  rebuilt on a pymongo client connected to the checks' database through the
  socket ``db.sock`` beside the channel (the grader's relay, which lets data
  commands through only during the call); returned cursors and iterables go back as lists, an exception as
  its type name and message; the check's own functions among the arguments (a ``sleep``, a ``log``)
  arrive as callbacks that run in the grader while the call waits;
* ``{"op": "lab", "lab": "01"}``: whether the learner started the lab, and the
  names of its database's collections; ``{"op": "collection", ...}``: one of
  them as plain data (documents, indexes, options), for checks that look at
  the learner's own lab database.

Nothing here is trusted: the learner can replace any of it, and then only
changes what the grader reads as the learner's own answers.
"""

from __future__ import annotations

import os
import socket
from typing import Any
from urllib.parse import quote_plus

from course.grading.channel import TAG, ChannelError, Encoder, decode, receive, send

MAX_MESSAGE = 2000  #: characters of an exception message sent back
#: exercise id -> its answer objects as the visible checks found them (the hidden checks' pass reads these)
_KEPT: dict[str, dict[str, Any]] = {}


class _Agent:
    def __init__(self, sock: socket.socket, db_socket: str):
        self.sock = sock
        self.db_socket = db_socket
        self.handles: dict[int, Any] = {}
        self.client = None
        self.encoder = Encoder(self._special, materialise=True)

    # ---- encoding ------------------------------------------------------------
    def _special(self, value: Any) -> dict | None:
        from course.engine.placeholder import Placeholder

        if isinstance(value, Placeholder):
            return {TAG: "placeholder"}
        if isinstance(value, (dict, list, tuple, set, frozenset, str, bytes, int, float)):
            return None
        if callable(value):
            number = len(self.handles) + 1
            self.handles[number] = value
            return {TAG: "handle", "id": number, "name": str(getattr(value, "__name__", "function"))[:100]}
        document = _collation_document(value)
        if document is not None:  # pymongo's Collation crosses as the document it stands for, as on the wire
            return self.encoder.encode(document)
        return None

    def _rebuild(self, tagged: dict) -> Any:
        kind = tagged.get(TAG)
        if kind == "handle":
            return self.handles[int(tagged["id"])]
        if kind == "callback":
            return self._callback(int(tagged["id"]), str(tagged.get("name", "function"))[:100])
        if kind in ("collection", "database"):
            database = self._client()[str(tagged["db"])]
            return database[str(tagged["name"])] if kind == "collection" else database
        return None

    def _callback(self, number: int, name: str) -> Any:
        """A function that calls the check's function ``number`` in the grader and returns its value.

        What the check's function raises is raised here, as an exception of the same class name (a
        builtin one when the name is a builtin's), so it stops the learner's code as it would in-process.
        """
        def call_back(*args: Any, **kwargs: Any) -> Any:
            send(self.sock, {"callback": number, "args": self.encoder.encode(list(args)),
                             "kwargs": self.encoder.encode(dict(kwargs))})
            reply = receive(self.sock)
            if "raised" in reply:
                raise _rebuilt_exception(reply["raised"])
            if "value" not in reply:
                raise RuntimeError(str(reply.get("failed", "the grader did not answer the call"))[:MAX_MESSAGE])
            return decode(reply["value"])

        call_back.__name__ = call_back.__qualname__ = name
        return call_back

    def _client(self) -> Any:
        if self.client is None:
            import pymongo

            self.client = pymongo.MongoClient(f"mongodb://{quote_plus(self.db_socket)}/?directConnection=true",
                                              serverSelectionTimeoutMS=30_000, connect=False,
                                              appname="course-grading-agent")
        return self.client

    def _drop_connections(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    # ---- requests --------------------------------------------------------------
    def answers(self, names: list, keep: str = "", kept: str = "") -> dict:
        from course.engine.exercise import notebook_namespace

        # a kernel started again after the first one died kept nothing: its answer cell has just run
        namespace = _KEPT[str(kept)] if kept and str(kept) in _KEPT else notebook_namespace()
        if keep:  # the hidden checks' pass, after the last cell, calls the very objects the visible checks saw
            _KEPT[str(keep)] = {str(name): namespace[str(name)] for name in names if str(name) in namespace}
        values = {}
        for name in names:
            name = str(name)
            values[name] = self.encoder.encode(namespace[name]) if name in namespace else {TAG: "missing"}
        return {"values": values}

    def call(self, message: dict) -> dict:
        try:
            function = self.handles[int(message["handle"])]
            args = decode(message.get("args", []), self._rebuild)
            kwargs = decode(message.get("kwargs", {}), self._rebuild)
        except (KeyError, ValueError, TypeError, ChannelError) as error:
            return {"failed": f"a malformed call: {error}"}
        try:
            value = function(*args, **kwargs)
            reply = {"value": self.encoder.encode(value)}
        except KeyboardInterrupt:
            return {"interrupted": True}
        except BaseException as error:  # noqa: BLE001 - whatever the learner's code raised crosses as data
            reply = {"raised": describe_exception(error)}
        after = self._changed(message.get("args", []), args, message.get("kwargs", {}), kwargs)
        if after:
            reply["after"] = after
        return reply

    def _changed(self, sent_args: Any, args: list, sent_kwargs: Any, kwargs: dict) -> dict:
        """The dicts, lists and sets the call was given that it changed, as they are now (the grader updates
        its own in place, so a function that changes its argument is seen doing so, as in-process)."""
        kinds = (dict, list, set)

        def now(value: Any, sent: Any) -> Any:
            encoded = self.encoder.encode(value)
            return None if encoded == sent else encoded

        after: dict[str, dict] = {"args": {}, "kwargs": {}}
        for index, value in enumerate(args):
            if type(value) in kinds and isinstance(sent_args, list) and index < len(sent_args):
                changed = now(value, sent_args[index])
                if changed is not None:
                    after["args"][str(index)] = changed
        for key, value in kwargs.items():
            if type(value) in kinds and isinstance(sent_kwargs, dict):
                changed = now(value, sent_kwargs.get(key))
                if changed is not None:
                    after["kwargs"][key] = changed
        return after if after["args"] or after["kwargs"] else {}

    def lab(self, lab_id: str) -> dict:
        from course.lab.session import active_lab

        lab = active_lab(str(lab_id))
        if lab is None:
            return {"started": False, "collections": []}
        try:
            names = [str(name) for name in lab.db.list_collection_names()]
        except Exception:  # noqa: BLE001 - a lab object the notebook replaced: no database to describe
            names = []
        return {"started": True, "collections": sorted(names)}

    def collection(self, lab_id: str, name: str, limit: int) -> dict:
        from course.lab.session import active_lab

        lab = active_lab(str(lab_id))
        collection = lab.db[str(name)]
        documents = list(collection.find({}).limit(int(limit) + 1))
        options = {}
        try:
            for info in lab.db.list_collections(filter={"name": str(name)}):
                options = dict(info.get("options", {}))
        except NotImplementedError:  # mongomock lists no collection options: the copy gets none
            pass
        return {"documents": self.encoder.encode(documents), "indexes": self.encoder.encode(
            {k: dict(v) for k, v in collection.index_information().items()}), "options": self.encoder.encode(options)}

    def serve(self) -> None:
        while True:
            message = receive(self.sock)
            op = message.get("op")
            try:
                if op == "done":
                    return
                if op == "answers":
                    reply = self.answers(list(message.get("names", [])), str(message.get("keep", "")),
                                         str(message.get("kept", "")))
                elif op == "call":
                    reply = self.call(message)
                elif op == "lab":
                    reply = self.lab(message.get("lab", ""))
                elif op == "collection":
                    reply = self.collection(message.get("lab", ""), message.get("name", ""),
                                            message.get("limit", 100_000))
                else:
                    reply = {"failed": f"unknown request {str(op)[:40]!r}"}
            except KeyboardInterrupt:
                reply = {"interrupted": True}
            except Exception as error:  # noqa: BLE001 - report, keep serving
                reply = {"failed": f"{type(error).__name__}: {str(error)[:MAX_MESSAGE]}"}
            try:
                send(self.sock, reply)
            except (ValueError, ChannelError) as error:
                send(self.sock, {"failed": f"the reply could not be sent: {error}"})


def _collation_document(value: Any) -> dict | None:
    """The document of a pymongo ``Collation`` (what it sends to a server), else None."""
    try:
        from pymongo.collation import Collation
    except ImportError:  # pragma: no cover - pymongo is the course's driver
        return None
    if not isinstance(value, Collation):
        return None
    document = value.document
    return dict(document) if isinstance(document, dict) else None


def describe_exception(error: BaseException) -> dict:
    """``error`` as plain data: its type name, message, class names along its hierarchy, and code."""
    from course.engine.exercise import plain_message

    message = plain_message(error)
    described = {"type": str(type(error).__name__)[:100], "message": str.__str__(message)[:MAX_MESSAGE],
                 "names": [str(k.__name__)[:100] for k in type(error).__mro__ if k is not object][:20]}
    code = getattr(error, "code", None)
    if type(code) is int:
        described["code"] = code
    details = _details(error)
    if details is not None:
        described["details"] = details
    return described


MAX_DETAILS = 64 * 1024  #: bytes of a driver error's details sent back (its write errors, for the checks)


def _details(error: BaseException) -> Any:
    """A pymongo error's ``details`` (the server's reply: ``writeErrors`` of a BulkWriteError...) as plain
    data, when it is a dict of modest size; else None."""
    try:
        if not type(error).__module__.startswith("pymongo.") or \
                not isinstance(getattr(type(error), "details", None), property):
            return None
        details = error.details
        if not isinstance(details, dict):
            return None
        import bson

        from course.grading.channel import Encoder

        encoded = Encoder(materialise=True).encode(details)
        return encoded if len(bson.encode({"d": encoded})) <= MAX_DETAILS else None
    except Exception:  # noqa: BLE001 - details are a courtesy: the type and message crossed already
        return None


_RAISED_CLASSES: dict[str, type] = {}


def _rebuilt_exception(raised: Any) -> BaseException:
    """An exception standing for one the check's function raised in the grader (type name and message)."""
    import builtins

    raised = raised if isinstance(raised, dict) else {}
    name = str(raised.get("type", "Exception"))[:100]
    message = str(raised.get("message", ""))[:MAX_MESSAGE]
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type) and issubclass(builtin, Exception):
        return builtin(message)
    if name not in _RAISED_CLASSES or not name.isidentifier():
        _RAISED_CLASSES[name] = type(name if name.isidentifier() else "CheckRaised", (Exception,), {})
    return _RAISED_CLASSES[name](message)


def serve(channel_path: str, token: str = "", db_socket: str | None = None) -> None:
    """Connect to the grader's channel at ``channel_path``, greet with ``token``, serve until told ``done``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(channel_path)
    send(sock, {"hello": token})
    agent = _Agent(sock, db_socket or os.path.join(os.path.dirname(channel_path), "db.sock"))
    try:
        agent.serve()
    finally:
        agent._drop_connections()
        sock.close()
