"""Benchmark: how much faster two cores finish two equal pieces of pure CPU work than one core finishes one.

Not a timed test: run it by hand and copy its line into the issue note.

    python tests/benchmarks/two_cores.py            # 9 rounds
    python tests/benchmarks/two_cores.py --rounds 3

It calibrates ``grading_sandbox.py``'s speed-up from ``--jobs 1`` to 2: the
same loop of Python arithmetic runs in one process kept to the first core,
then in two processes at once, one on each of the first two cores; the
speed-up of a round is twice the time of one alone over the time the pair
takes, and the script prints the median and the range over its rounds.  On a
quiet machine with two real cores the figure is 2.00; on a shared virtual
machine it shows how far the machine's own speed moves from one minute to the
next, which no single timed run of a program can tell apart from the
program's own scaling.  (The loop fits in a core's cache: work that shares
the caches and memory feels two busy cores more than it does.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

LOOP = "x = 0\nfor i in range({n}):\n    x += i * i % 7\n"


def once(cores: list[int], iterations: int) -> float:
    """Seconds until the loop has run once on each of ``cores``, all at the same time."""
    started = time.perf_counter()
    processes = [subprocess.Popen([sys.executable, "-c", LOOP.format(n=iterations)],
                                  preexec_fn=lambda core=core: os.sched_setaffinity(0, {core}))
                 for core in cores]
    for process in processes:
        if process.wait() != 0:
            raise SystemExit("the loop failed")
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Print the median speed-up of two cores over one, and its range, over ``--rounds`` rounds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--iterations", type=int, default=30_000_000, help="loop length (about 3 s here)")
    args = parser.parse_args(argv)
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        raise SystemExit("this process may use only one core")
    speed_ups = []
    for number in range(args.rounds):
        order = [[cores[0]], cores[:2]] if number % 2 == 0 else [cores[:2], [cores[0]]]
        seconds = {len(used): once(used, args.iterations) for used in order}
        speed_ups.append(2 * seconds[1] / seconds[2])
        print(f"round {number + 1}: one core {seconds[1]:.2f} s, two {seconds[2]:.2f} s, "
              f"speed-up {speed_ups[-1]:.2f}x", file=sys.stderr, flush=True)
    print(f"two equal CPU-bound processes, one per core, against one alone: speed-up {statistics.median(speed_ups):.2f}x "
          f"(median of {args.rounds} rounds; range {min(speed_ups):.2f}-{max(speed_ups):.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
