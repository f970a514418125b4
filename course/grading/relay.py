"""The only road from a sandbox to the checks' database: a gated, bounded, logging relay on a Unix socket.

The relay listens on ``db.sock`` in the sandbox's socket folder and forwards
MongoDB wire messages to the checks' database, but only while the grader is
calling a learner function (:meth:`Relay.call`), and only what
:func:`course.grading.wire_commands.judge` allows: the data commands a
learner function can need, on that call's databases, with every namespace the
command names checked (pipeline stages included), read as the server reads
them (the command is the first key that is not a generic argument; a body
that repeats a key is never forwarded).  Anything else is refused with an
``Unauthorized`` error.  Between calls only the driver's handshakes
(``hello``, ``ping``) pass: any other message closes its connection, so a
learner's background thread cannot reach the checks' data between calls (the
agent's own idle connections stay open, which saves a reconnection per call).

It also bounds what a notebook can do to the checks' engine:

* ``getMore`` and ``killCursors`` only on cursors this relay's replies opened
  during the current call;
* at most :attr:`Relay.write_limit` bytes written in all (inserted documents,
  update and pipeline specifications): a write past it is refused, and
  :attr:`Relay.exceeded` says why, which the grader turns into the
  exercise's ``error``;
* every read command is sent with ``maxTimeMS`` of at most
  :attr:`Relay.command_seconds`, and a watchdog calls ``on_stuck(reason)``
  when any command has had no reply for that long plus a grace (the engine
  cannot always stop itself: a grading process then ends that notebook).

And it keeps the command log: each allowed command is decoded into a read or
a write (with its filter and update) and fed to the recording wrapper the
check passed for that collection, which runs its race callback before the
first write that follows a read (see :func:`course.grading.commandlog.feed`).

One module past 400 lines on purpose: framing, judging and forwarding a connection's messages are one
protocol read in one place, where a reviewer can see that no message reaches the engine unjudged.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from course.grading.wire_commands import (
    CURSOR_COMMANDS, HANDSHAKE, OPENS_CURSOR, DuplicateKey, command_name, decode_body, judge,
)

OP_MSG, OP_QUERY, OP_COMPRESSED, OP_REPLY = 2013, 2004, 2012, 1
MAX_MESSAGE = 48 * 1024 * 1024
_HEADER = struct.Struct("<iiii")
DEFAULT_WRITE_MB = 256  #: what one notebook's learner functions may write through the relay, in MiB
DEFAULT_COMMAND_SECONDS = 30.0  #: how long one relayed command may run
STUCK_GRACE = 5.0  #: seconds past a command's limit before the watchdog gives up on the engine
WATCH_EVERY = 0.5  #: seconds between the watchdog's looks at the commands waiting for a reply
#: the commands whose time the server limits itself when told ``maxTimeMS``
_TIMED = frozenset({"find", "aggregate", "count", "distinct", "findAndModify", "findandmodify"})
_WRITES = frozenset({"insert", "update", "delete", "findAndModify", "findandmodify", "aggregate", "create",
                     "createIndexes", "collMod"})


def parse_op_msg(payload: bytes) -> tuple[int, dict, dict[str, list[dict]]]:
    """``(flag bits, body, document sequences)`` of an OP_MSG payload (after the 16-byte header)."""
    flags, body, sequences, _, _ = read_op_msg(payload)
    return flags, body, sequences


def read_op_msg(payload: bytes, strict: bool = False) -> tuple[int, dict, dict[str, list[dict]], bytes, int]:
    """``(flag bits, body, document sequences, the body's bytes, the sequences' bytes)`` of an OP_MSG payload.

    ``strict`` decodes the body refusing repeated keys (:func:`course.grading.wire_commands.decode_body`).
    """
    import bson

    (flags,) = struct.unpack_from("<I", payload, 0)
    end = len(payload) - (4 if flags & 1 else 0)
    offset, body, raw_body, sequences, sequence_bytes = 4, None, b"", {}, 0
    while offset < end:
        kind = payload[offset]
        offset += 1
        if kind == 0:
            if body is not None:
                raise ValueError("an OP_MSG with two bodies")
            (size,) = struct.unpack_from("<i", payload, offset)
            raw_body = payload[offset:offset + size]
            body = decode_body(raw_body) if strict else bson.decode(raw_body)
            offset += size
        elif kind == 1:
            (size,) = struct.unpack_from("<i", payload, offset)
            section_end = offset + size
            name_end = payload.index(b"\0", offset + 4)
            identifier = payload[offset + 4:name_end].decode()
            if identifier in sequences:
                raise DuplicateKey(f"the document sequence {identifier!r} appears twice")
            docs, cursor = [], name_end + 1
            while cursor < section_end:
                (doc_size,) = struct.unpack_from("<i", payload, cursor)
                docs.append(bson.decode(payload[cursor:cursor + doc_size]))
                cursor += doc_size
            sequences[identifier] = docs
            sequence_bytes += section_end - name_end - 1
            offset = section_end
        else:
            raise ValueError(f"unknown OP_MSG section kind {kind}")
    if body is None:
        raise ValueError("an OP_MSG without a body")
    if strict and any(identifier in body for identifier in sequences):
        raise DuplicateKey("a document sequence repeats a field of the body")
    return flags, body, sequences, raw_body, sequence_bytes


def parse_op_query(payload: bytes) -> tuple[str, dict]:
    """``(full collection name, query)`` of a legacy OP_QUERY payload."""
    import bson

    name_end = payload.index(b"\0", 4)
    name = payload[4:name_end].decode()
    offset = name_end + 1 + 8
    (size,) = struct.unpack_from("<i", payload, offset)
    return name, bson.decode(payload[offset:offset + size])


def refusal(request_id: int, message: str) -> bytes:
    """An OP_MSG reply refusing request ``request_id`` with ``Unauthorized``."""
    import bson

    body = bson.encode({"ok": 0.0, "errmsg": message, "code": 13, "codeName": "Unauthorized"})
    payload = struct.pack("<I", 0) + b"\0" + body
    return _HEADER.pack(16 + len(payload), 0, request_id, OP_MSG) + payload


class Relay:
    """Serves ``path`` (a Unix socket) and forwards allowed commands to ``upstream()`` (host, port).

    ``write_limit`` bytes may be written through it in all; each command may take ``command_seconds``;
    ``on_stuck(reason)`` is called (once) when a command has had no reply for longer than that.
    """

    def __init__(self, path: str, upstream: Callable[[], tuple[str, int]], *,
                 write_limit: int = DEFAULT_WRITE_MB * 1024 * 1024,
                 command_seconds: float = DEFAULT_COMMAND_SECONDS,
                 on_stuck: Callable[[str], None] | None = None):
        self.path = path
        self._connect = lambda: socket.create_connection(upstream(), timeout=None)
        self._lock = threading.Lock()
        self._databases: frozenset[str] = frozenset()
        self._observer: Callable[[str, dict, dict], None] | None = None
        self._open = False
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._cursors: set[int] = set()  #: cursor ids the current call's replies opened
        self._in_flight: dict[tuple[int, int], tuple[float, str]] = {}  #: (pair, request) -> (sent, command)
        self._opening: set[tuple[int, int]] = set()  #: requests whose replies open cursors
        self.write_limit = int(write_limit)
        self.command_seconds = float(command_seconds)
        self.on_stuck = on_stuck or (lambda reason: None)
        self.written = 0  #: bytes written through the relay so far
        self.exceeded = ""  #: why a write was refused for going past the limit ("" while none was)
        self.stuck = ""  #: why the watchdog gave up on a command ("" while none)
        self.refused: list[str] = []  #: what was refused, for the grader's notes
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        os.chmod(path, 0o777)  # the sandbox's user (nobody) must be able to connect
        self._listener.listen(16)
        self._closed = False
        self._wake = threading.Condition(self._lock)
        threading.Thread(target=self._accept, name="course-relay", daemon=True).start()
        threading.Thread(target=self._watch, name="course-relay-watchdog", daemon=True).start()

    @contextmanager
    def call(self, databases: set[str], observer: Callable[[str, dict, dict], None] | None = None) -> Iterator[None]:
        """Open the relay for one call on ``databases``; ``observer(db, body, sequences)`` sees each command."""
        with self._lock:
            self._databases, self._observer, self._open = frozenset(databases), observer, True
            self._cursors = set()
        try:
            yield
        finally:
            with self._lock:
                self._open, self._databases, self._observer = False, frozenset(), None
                self._cursors = set()

    def close(self) -> None:
        """Stop listening and close every connection."""
        with self._lock:
            self._closed = True
            self._wake.notify_all()
        _close(self._listener)
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for sock in pair:
                _close(sock)

    # ---- connections ---------------------------------------------------------
    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = self._connect()
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._pairs.append((client, server))
            pair = id(client)
            threading.Thread(target=self._downstream, args=(server, client, pair), daemon=True).start()
            threading.Thread(target=self._upstream_loop, args=(client, server, pair), daemon=True).start()

    def _downstream(self, server: socket.socket, client: socket.socket, pair: int) -> None:
        """Replies, message by message: each ends its command's watch, and a cursor it opens is remembered."""
        try:
            while True:
                header = _read(server, 16)
                if header is None:
                    break
                length, _, response_to, opcode = _HEADER.unpack(header)
                if not 16 <= length <= MAX_MESSAGE + 1024 * 1024:
                    break
                payload = _read(server, length - 16)
                if payload is None:
                    break
                key = (pair, response_to)
                with self._lock:
                    self._in_flight.pop(key, None)
                    opening = key in self._opening
                    self._opening.discard(key)
                if opening and opcode == OP_MSG:
                    cursor = _cursor_id(payload)
                    if cursor:
                        with self._lock:
                            if self._open:
                                self._cursors.add(cursor)
                client.sendall(header + payload)
        except OSError:
            pass
        _close(client), _close(server)

    def _upstream_loop(self, client: socket.socket, server: socket.socket, pair: int) -> None:
        try:
            while True:
                header = _read(client, 16)
                if header is None:
                    break
                length, request_id, _, opcode = _HEADER.unpack(header)
                if not 16 < length <= MAX_MESSAGE:
                    break
                payload = _read(client, length - 16)
                if payload is None:
                    break
                try:
                    verdict = self._judge(opcode, payload)
                except Exception:  # noqa: BLE001 - a command this relay cannot read is not forwarded
                    verdict = None
                if isinstance(verdict, tuple):
                    command, payload = verdict
                    answered = opcode == OP_QUERY or not struct.unpack_from("<I", payload, 0)[0] & 2
                    with self._lock:
                        if command not in HANDSHAKE and answered:
                            self._in_flight[(pair, request_id)] = (time.monotonic(), command)
                        if command in OPENS_CURSOR:
                            self._opening.add((pair, request_id))
                    server.sendall(_HEADER.pack(16 + len(payload), request_id, 0, opcode) + payload)
                elif verdict is None:
                    break
                else:
                    with self._lock:
                        self.refused.append(verdict)
                    if opcode == OP_MSG and not struct.unpack_from("<I", payload, 0)[0] & 2:
                        client.sendall(refusal(request_id, verdict))
        except OSError:
            pass
        _close(client), _close(server)

    def _judge(self, opcode: int, payload: bytes) -> tuple[str, bytes] | str | None:
        """(command, payload to forward), a reason to refuse, or None to drop the connection."""
        with self._lock:
            is_open, databases, observer = self._open, self._databases, self._observer
        if opcode == OP_QUERY:
            try:
                name, query = parse_op_query(payload)
            except Exception:  # noqa: BLE001 - malformed: drop the connection
                return None
            command = command_name(query)
            return (command, payload) if name == "admin.$cmd" and command in HANDSHAKE else None
        if opcode != OP_MSG:
            return None  # compressed or legacy messages: not negotiated by the agent's client
        try:
            flags, body, sequences, raw_body, sequence_bytes = read_op_msg(payload, strict=True)
        except DuplicateKey as error:
            return f"the checks' relay refused a command that names a key twice ({error})"
        except Exception:  # noqa: BLE001 - malformed: drop the connection
            return None
        if flags & 1:
            return None  # a checksum the agent's client never sends
        command = command_name(body)
        if command in HANDSHAKE:
            return command, payload
        if not is_open:
            return None  # between calls only the driver's handshakes pass: anything else loses its connection
        why = judge(body, databases)
        if why:
            return why
        if command in CURSOR_COMMANDS:
            value = body.get(command)
            ids = [value] if command == "getMore" else body.get("cursors", [])
            with self._lock:
                unknown = [c for c in (ids if isinstance(ids, list) else [ids]) if int(c or 0) not in self._cursors]
            if unknown:
                return f"the checks' relay refused {command!r} on a cursor this call did not open"
        if command in _WRITES:
            size = sequence_bytes if command == "insert" and sequences else len(raw_body) + sequence_bytes
            if command == "aggregate" and not any(stage in ("$out", "$merge") for stage in _stage_names(body)):
                size = 0
            with self._lock:
                if self.written + size > self.write_limit:
                    self.exceeded = self.exceeded or (
                        f"this notebook's functions wrote more than {self.write_limit // (1024 * 1024)} MiB through "
                        f"the checks' database (course grade --max-write-mb)")
                    return f"the checks' relay refused {command!r}: {self.exceeded}"
                self.written += size
        if observer is not None and command not in CURSOR_COMMANDS:
            observer(body["$db"], body, sequences)
        if command in _TIMED:
            payload = _with_time_limit(payload, body, raw_body, int(self.command_seconds * 1000))
        return command, payload

    def _watch(self) -> None:
        """Call ``on_stuck`` once when a command has waited past its limit and the grace.

        It looks once every :data:`WATCH_EVERY` seconds (a command sent is not announced to it: that would
        wake this thread for every command, thousands per notebook)."""
        limit = self.command_seconds + STUCK_GRACE
        with self._lock:
            while not self._closed and not self.stuck:
                if not self._in_flight:
                    self._wake.wait(WATCH_EVERY)
                    continue
                oldest, command = min(self._in_flight.values())
                waited = time.monotonic() - oldest
                if waited < limit:
                    self._wake.wait(min(WATCH_EVERY, limit - waited + 0.05))
                    continue
                self.stuck = (f"a command one of its functions sent ({command!r}) ran longer than "
                              f"{self.command_seconds:g} s in the checks' database and could not be stopped")
                break
            reason = self.stuck
        if reason:
            self.on_stuck(reason)


def _stage_names(body: dict) -> list[str]:
    pipeline = body.get("pipeline")
    return [key for stage in pipeline if isinstance(stage, dict) for key in stage] if isinstance(pipeline, list) else []


def _with_time_limit(payload: bytes, body: dict, raw_body: bytes, limit_ms: int) -> bytes:
    """``payload`` with its body's ``maxTimeMS`` at most ``limit_ms`` (added, or lowered)."""
    current = body.get("maxTimeMS")
    if isinstance(current, int) and 0 < current <= limit_ms:
        return payload
    if current is None:  # append the element before the body's final NUL
        element = b"\x10maxTimeMS\0" + struct.pack("<i", limit_ms)
        new_body = struct.pack("<i", len(raw_body) + len(element)) + raw_body[4:-1] + element + b"\0"
    else:
        import bson

        new_body = bson.encode({**body, "maxTimeMS": limit_ms})
    start = payload.index(raw_body)
    return payload[:start] + new_body + payload[start + len(raw_body):]


def _cursor_id(payload: bytes) -> int:
    """The cursor id in an OP_MSG reply (0 when it opens none)."""
    import bson
    from bson.codec_options import CodecOptions
    from bson.raw_bson import RawBSONDocument

    try:
        (size,) = struct.unpack_from("<i", payload, 5)
        reply = bson.decode(payload[5:5 + size], codec_options=CodecOptions(document_class=RawBSONDocument))
        cursor = reply.get("cursor")
        return int(cursor.get("id", 0)) if cursor is not None else 0
    except Exception:  # noqa: BLE001 - not a cursor reply
        return 0


def _read(sock: socket.socket, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _close(sock: Any) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass
