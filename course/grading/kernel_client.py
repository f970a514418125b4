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
"""

from __future__ import annotations

from jupyter_client.asynchronous.client import AsyncKernelClient

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


def client_for(max_output_bytes: int) -> type:
    """A CappedKernelClient class whose largest IOPub message is :func:`largest_message` of the cap."""
    return type("CappedKernelClient", (CappedKernelClient,),
                {"max_message_bytes": largest_message(max_output_bytes)})
