"""The grader's client of a learner kernel: its IOPub socket bounds what one message can cost.

The output cap (``--max-output-kb``) decides what is kept, in two places.  In
the kernel the launcher cuts what ``print`` and the streams write past the cap
(:func:`course.grading.launcher.cap_output`), so an ordinary flood arrives as
a few small messages and a note.  That part runs in the learner's process and
can be undone; this client is the part the learner cannot reach: its IOPub
socket (outside the sandbox) refuses any single message larger than
:func:`largest_message` (``zmq.MAXMSGSIZE``: a longer message drops that
connection, which ZMQ then makes again), so jupyter_client never receives and
decodes a 300 MB message.  The queue keeps ZMQ's default length (a shorter
one dropped ordinary output under a burst).

It is also ready sooner: jupyter_client's ``wait_for_ready`` ends by reading
IOPub until 0.2 s pass with no message, which every notebook graded would
wait out with both cores idle; this client reads up to the kernel's last word
on its ``kernel_info`` request (that request's ``idle`` status) instead.
"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient

#: seconds of IOPub silence after which jupyter_client takes IOPub for not connected yet, or drained
IOPUB_SILENCE = 0.2

#: headroom over the output cap for one message's envelope (header, metadata, JSON escaping)
ENVELOPE_BYTES = 256 * 1024
#: the smallest largest-message: room for ordinary rich output (an image, a table) whatever the cap
FLOOR_BYTES = 4 * 1024 * 1024


def largest_message(max_output_bytes: int) -> int:
    """The largest IOPub message the grader accepts under an output cap of ``max_output_bytes``.

    Twice the cap (so output the kernel's own cut let through never meets it), at least
    :data:`FLOOR_BYTES`, plus the envelope.
    """
    return max(2 * int(max_output_bytes), FLOOR_BYTES) + ENVELOPE_BYTES


class CappedKernelClient(AsyncKernelClient):
    """An AsyncKernelClient whose IOPub socket refuses messages over ``max_message_bytes``."""

    max_message_bytes = FLOOR_BYTES + ENVELOPE_BYTES

    def connect_iopub(self, identity=None):
        """The IOPub socket, capped before it connects (options set later would not apply)."""
        import zmq

        url = self._make_url("iopub")
        sock = self.context.socket(zmq.SUB)
        sock.linger = 1000
        sock.setsockopt(zmq.MAXMSGSIZE, int(self.max_message_bytes))
        if identity:
            sock.identity = identity
        if self.curve_publickey is not None:  # as jupyter_client's own connection does
            sock.curve_secretkey = self.curve_secretkey
            sock.curve_publickey = self.curve_publickey
            sock.curve_serverkey = self.curve_publickey
        sock.connect(url)
        sock.setsockopt(zmq.SUBSCRIBE, b"")
        return sock

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Return once the kernel answers ``kernel_info`` and IOPub has delivered that request's ``idle``.

        As jupyter_client's own wait (kernel_info again until a reply comes with IOPub connected; an
        error if the kernel dies or ``timeout`` passes), without its closing 0.2 s of silence: what the
        kernel published up to that ``idle`` has been read, and nbclient reads only the messages of
        the cells it runs after it.
        """
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        asked: set[str] = set()
        while True:
            asked.add(self.kernel_info())
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                reply = None
            if reply is not None and reply["msg_type"] == "kernel_info_reply" and await self._iopub_settled(asked):
                self._handle_kernel_info_reply(reply)
                return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")

    async def _iopub_settled(self, asked: set[str]) -> bool:
        """Read IOPub up to the ``idle`` status of one of the ``asked`` requests (True).  False when
        IOPub stays silent from the start (not connected yet: ask again); True when it falls silent
        after a message without that status (what jupyter_client's own wait accepts).  IOPub's welcome
        (ipykernel >= 7) says the subscription has just begun: the kernel is asked once more then, since
        the statuses of the requests before may have gone out before it."""
        heard = False
        while True:
            try:
                message: Any = await self.iopub_channel.get_msg(timeout=IOPUB_SILENCE)
            except Empty:
                return heard
            heard = True
            if message["msg_type"] == "iopub_welcome":  # subscribed only now: the statuses sent before are lost
                asked.add(self.kernel_info())  # so ask once more, rather than wait out a silence
            elif (message["msg_type"] == "status" and message["content"].get("execution_state") == "idle"
                    and message["parent_header"].get("msg_id") in asked):
                return True


def client_for(max_output_bytes: int) -> type:
    """A CappedKernelClient class whose largest IOPub message is :func:`largest_message` of the cap."""
    return type("CappedKernelClient", (CappedKernelClient,),
                {"max_message_bytes": largest_message(max_output_bytes)})
