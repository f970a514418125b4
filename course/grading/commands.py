"""The command lines of ``course merge``, ``course export`` and ``course grade --shard/--slurm`` (for cli.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_merge_arguments(parser: argparse.ArgumentParser) -> None:
    """``course merge DIR... --out FINAL [--key-file FILE]``."""
    parser.add_argument("folders", nargs="+", type=Path, metavar="DIR",
                        help="--out folders of `course grade --shard K/N` (one shared, or one per shard)")
    parser.add_argument("--out", type=Path, required=True, metavar="FINAL",
                        help="folder for gradebook.csv, totals.csv, summary.md and feedback/ (may be a DIR)")
    parser.add_argument("--key-file", type=Path, default=None, metavar="FILE",
                        help="the grader key the shards shared (default: each DIR's own .grader-key)")


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    """``course export DIR --lms canvas|moodle --roster ROSTER.csv --out FILE.csv``."""
    parser.add_argument("folder", type=Path, metavar="DIR", help="a folder with gradebook.csv")
    parser.add_argument("--lms", required=True, choices=("canvas", "moodle"), help="the LMS to import into")
    parser.add_argument("--roster", type=Path, required=True, metavar="ROSTER.csv",
                        help="the LMS's list of learners (Canvas: a gradebook export; Moodle: a participants "
                             "export with username or email)")
    parser.add_argument("--out", type=Path, required=True, metavar="FILE.csv", help="the import file to write")
    parser.add_argument("--per-exercise", action="store_true", help="one column per exercise, not per lab")
    parser.add_argument("--match", default=None, metavar="COLUMN",
                        help="the roster column holding the learners' names as graded (default: canvas "
                             "'SIS Login ID', moodle 'username')")


def run(args: argparse.Namespace) -> int:
    """Run ``course merge`` or ``course export``; the exit code."""
    from course.grading.submissions import UsageError

    try:
        if args.command == "merge":
            from course.grading.merge import merge

            report = merge(args.folders, args.out, args.key_file)
            print(f"wrote {report.written['gradebook']}, {report.written['totals']}, {report.written['summary']} "
                  f"and {len(report.written['feedback'])} feedback files in {args.out / 'feedback'}")
            print(report.summary())
            return 1 if report.missing or report.refused else 0
        from course.grading.lms_export import export

        done = export(args.folder, args.lms, args.roster, args.out, per_exercise=args.per_exercise,
                      match=args.match)
    except UsageError as error:
        print(f"course {args.command}: {error}", file=sys.stderr)
        return 2
    print(f"wrote {done.target}: {done.rows} learners, columns {', '.join(done.columns)}")
    if done.ungraded:
        print(f"in the roster but not graded (empty cells): {', '.join(done.ungraded)}")
    if done.unmatched:
        print(f"course export: graded but not in the roster, not exported (listed in {args.folder / 'summary.md'}): "
              f"{', '.join(done.unmatched)}", file=sys.stderr)
    return 0


def run_sharded(args: argparse.Namespace) -> int | None:
    """``course grade --slurm N`` (submits; an exit code) or ``--shard K/N`` (checked; None: grade on)."""
    from course.grading.shards import parse_shard
    from course.grading.submissions import UsageError

    if args.slurm is not None and args.shard is not None:
        print("course grade: --slurm submits every shard itself: give --slurm N or --shard K/N, not both",
              file=sys.stderr)
        return 2
    if args.shard is not None:
        try:
            args.shard_pair = parse_shard(args.shard)
        except ValueError as error:
            print(f"course grade: {error}", file=sys.stderr)
            return 2
        return None
    from course.grading.slurm import forwarded_arguments, submit, task_memory_mb

    try:
        done = submit(args.submissions, args.out, args.slurm, forwarded_arguments(args),
                      memory_mb=task_memory_mb(args.memory_mb, args.grader_memory_mb),
                      slurm_args=args.slurm_args, key_file=args.key_file)
    except UsageError as error:
        print(f"course grade: {error}", file=sys.stderr)
        return 2
    print(done.describe())
    return 0
