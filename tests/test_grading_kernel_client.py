"""The grader's IOPub socket bounds what a notebook's output can cost the grader's memory."""

import zmq

from course.grading.kernel_client import ENVELOPE_BYTES, client_for


def test_iopub_socket_caps_message_size(tmp_path):
    client = client_for(1_000_000)(transport="ipc", ip=str(tmp_path / "kernel"), iopub_port=5)
    sock = client.connect_iopub()
    try:
        assert sock.getsockopt(zmq.MAXMSGSIZE) == 1_000_000 + ENVELOPE_BYTES
    finally:
        sock.close(linger=0)
