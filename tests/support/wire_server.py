"""Run mongoeco's wire-protocol server on loopback, for the real-driver test path.

    python tests/support/wire_server.py --port 0 --port-file /tmp/port

starts ``mongoeco.wire.AsyncMongoEcoProxyServer`` over an in-memory engine,
writes the port it bound to ``--port-file`` once it accepts connections, and
serves until SIGTERM or SIGINT.  Point pymongo at it with
``mongodb://127.0.0.1:PORT/?directConnection=true``.

It only listens on loopback: the course creates and drops databases, and this
server has no authentication.  It needs Python >= 3.13 (mongoeco).

The server is single-threaded: a long command (a big ``insert_many``) blocks
everything else, including the driver's heartbeats.  Clients should use small
batches and long socket timeouts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path

from course.store.backends import is_loopback


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    parser.add_argument("--port-file", type=Path, help="write the bound port here once listening")
    args = parser.parse_args(argv)
    if not is_loopback(args.host):
        parser.error(f"--host {args.host} is not a loopback address: this server has no "
                     f"authentication and only listens on this machine")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port} is not a port number")
    return args


async def serve(host: str, port: int, port_file: Path | None) -> None:
    from mongoeco.engines.memory import MemoryEngine
    from mongoeco.wire import AsyncMongoEcoProxyServer

    from course.store.engine_imports import skip_unused_imports
    from course.store.quirks import absorb

    skip_unused_imports()
    absorb("mongoeco")  # the engine's quirks, absorbed server-side as they are in-process

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)

    proxy = AsyncMongoEcoProxyServer(engine=MemoryEngine(), host=host, port=port)
    address = await proxy.start()
    try:
        if port_file is not None:
            # Write then rename, so a reader never sees a half-written file.
            partial = port_file.with_name(port_file.name + ".partial")
            partial.write_text(f"{address.port}\n")
            os.replace(partial, port_file)
        print(f"mongoeco wire server listening on {address.uri} (pid {os.getpid()})", flush=True)
        await stop.wait()
    finally:
        await proxy.close()
        print("mongoeco wire server stopped", flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if sys.version_info < (3, 13):
        print(f"wire_server.py: mongoeco needs Python >= 3.13, this is {sys.version.split()[0]}",
              file=sys.stderr)
        return 2
    asyncio.run(serve(args.host, args.port, args.port_file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
