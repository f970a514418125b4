"""The only road from a sandbox to the checks' database: a gated, logging relay on a Unix socket.

The relay listens on ``db.sock`` in the sandbox's socket folder and forwards
MongoDB wire messages to the checks' database, but only while the grader is
calling a learner function (:meth:`Relay.call`), and only commands on that
call's databases: every ``OP_MSG`` is parsed, its ``$db`` checked, and
anything else (``listDatabases``, another database, a compressed or legacy
message) is refused with an ``Unauthorized`` error.  Between calls only the
driver's handshakes (``hello``, ``ping``) pass: any other message closes its
connection, so a learner's background thread cannot reach the checks' data
between calls (the agent's own idle connections stay open, which saves a
reconnection per call).

It also keeps the command log: each allowed command is decoded into a read or
a write (with its filter and update) and fed to the recording wrapper the
check passed for that collection, which runs its race callback before the
first write that follows a read (see :func:`course.grading.recording_feed.feed`).
"""

from __future__ import annotations

import os
import socket
import struct
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

OP_MSG, OP_QUERY, OP_COMPRESSED = 2013, 2004, 2012
MAX_MESSAGE = 48 * 1024 * 1024
_HEADER = struct.Struct("<iiii")
#: admin commands a driver needs to connect; nothing that reads or changes data
HANDSHAKE = frozenset({"hello", "ismaster", "isMaster", "ping", "buildInfo", "buildinfo", "endSessions",
                       "getLastError", "saslStart", "saslContinue"})
_SESSION_FREE = frozenset({"getMore", "killCursors"})


def parse_op_msg(payload: bytes) -> tuple[int, dict, dict[str, list[dict]]]:
    """``(flag bits, body, document sequences)`` of an OP_MSG payload (after the 16-byte header)."""
    import bson

    (flags,) = struct.unpack_from("<I", payload, 0)
    end = len(payload) - (4 if flags & 1 else 0)
    offset, body, sequences = 4, None, {}
    while offset < end:
        kind = payload[offset]
        offset += 1
        if kind == 0:
            (size,) = struct.unpack_from("<i", payload, offset)
            body = bson.decode(payload[offset:offset + size])
            offset += size
        elif kind == 1:
            (size,) = struct.unpack_from("<i", payload, offset)
            section_end = offset + size
            name_end = payload.index(b"\0", offset + 4)
            identifier = payload[offset + 4:name_end].decode()
            docs, cursor = [], name_end + 1
            while cursor < section_end:
                (doc_size,) = struct.unpack_from("<i", payload, cursor)
                docs.append(bson.decode(payload[cursor:cursor + doc_size]))
                cursor += doc_size
            sequences[identifier] = docs
            offset = section_end
        else:
            raise ValueError(f"unknown OP_MSG section kind {kind}")
    if body is None:
        raise ValueError("an OP_MSG without a body")
    return flags, body, sequences


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
    """Serves ``path`` (a Unix socket) and forwards allowed commands to ``upstream()`` (host, port)."""

    def __init__(self, path: str, upstream: Callable[[], tuple[str, int]]):
        self.path = path
        self._connect = lambda: socket.create_connection(upstream(), timeout=None)
        self._lock = threading.Lock()
        self._databases: frozenset[str] = frozenset()
        self._observer: Callable[[str, dict, dict], None] | None = None
        self._open = False
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self.refused: list[str] = []  #: what was refused, for the grader's notes
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        os.chmod(path, 0o777)  # the sandbox's user (nobody) must be able to connect
        self._listener.listen(16)
        self._closed = False
        threading.Thread(target=self._accept, name="course-relay", daemon=True).start()

    @contextmanager
    def call(self, databases: set[str], observer: Callable[[str, dict, dict], None] | None = None) -> Iterator[None]:
        """Open the relay for one call on ``databases``; ``observer(db, body, sequences)`` sees each command."""
        with self._lock:
            self._databases, self._observer, self._open = frozenset(databases), observer, True
        try:
            yield
        finally:
            with self._lock:
                self._open, self._databases, self._observer = False, frozenset(), None

    def close(self) -> None:
        """Stop listening and close every connection."""
        self._closed = True
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
            threading.Thread(target=self._downstream, args=(server, client), daemon=True).start()
            threading.Thread(target=self._upstream_loop, args=(client, server), daemon=True).start()

    def _downstream(self, server: socket.socket, client: socket.socket) -> None:
        try:
            while True:
                data = server.recv(1 << 16)
                if not data:
                    break
                client.sendall(data)
        except OSError:
            pass
        _close(client), _close(server)

    def _upstream_loop(self, client: socket.socket, server: socket.socket) -> None:
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
                verdict = self._judge(opcode, payload)
                if verdict is True:
                    server.sendall(header + payload)
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

    def _judge(self, opcode: int, payload: bytes) -> bool | str | None:
        """True to forward, a reason to refuse, None to drop the connection."""
        with self._lock:
            is_open, databases, observer = self._open, self._databases, self._observer
        if opcode == OP_QUERY:
            try:
                name, query = parse_op_query(payload)
            except (ValueError, IndexError, struct.error, Exception):
                return None
            command = next(iter(query), "")
            return True if name == "admin.$cmd" and command in HANDSHAKE else None
        if opcode != OP_MSG:
            return None  # compressed or legacy messages: not negotiated by the agent's client
        try:
            _, body, sequences = parse_op_msg(payload)
        except Exception:  # noqa: BLE001 - malformed: drop the connection
            return None
        command = next(iter(body), "")
        database = body.get("$db")
        if database == "admin" and command in HANDSHAKE:
            return True
        if not is_open:
            return None  # between calls only the driver's handshakes pass: anything else loses its connection
        if not isinstance(database, str) or database not in databases:
            return f"the checks' relay refused {command!r} on database {database!r}: only this call's " \
                   f"databases ({', '.join(sorted(databases)) or 'none'}) can be used"
        if command in ("dropDatabase", "listDatabases", "copydb", "renameCollection", "applyOps", "eval"):
            if command != "dropDatabase":
                return f"the checks' relay refused {command!r}"
        if observer is not None and command not in _SESSION_FREE:
            observer(database, body, sequences)
        return True


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
