"""The grader's client of a learner kernel: its IOPub socket bounds what a notebook's output can cost.

The output cap (``--max-output-kb``) decides what is kept, but jupyter_client
receives and decodes every message first, and ZMQ queues up to a thousand of
them: a cell printing 300 MB at once took the grader to 928 MB.  This client
sets, on its own IOPub socket (outside the sandbox, where the learner cannot
undo it), a largest message size (``zmq.MAXMSGSIZE``: a longer message drops
that connection, which ZMQ then makes again), so no single message can cost
more than the cap and its envelope.  The queue keeps ZMQ's default length:
a shorter one dropped ordinary output under a burst and, with it, the
"printed too much" note the learner's feedback needs.
"""

from __future__ import annotations

from jupyter_client.asynchronous.client import AsyncKernelClient

#: headroom over the output cap for one message's envelope (header, metadata, JSON escaping)
ENVELOPE_BYTES = 256 * 1024


class CappedKernelClient(AsyncKernelClient):
    """An AsyncKernelClient whose IOPub socket refuses messages over ``max_message_bytes``."""

    max_message_bytes = 4 * 1024 * 1024

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
    """A CappedKernelClient class whose largest IOPub message is the output cap plus an envelope."""
    return type("CappedKernelClient", (CappedKernelClient,),
                {"max_message_bytes": max(int(max_output_bytes), 64 * 1024) + ENVELOPE_BYTES})
