"""Shards of a class: ``course grade ... --shard K/N`` grades the K-th of N parts of a class.

A learner's shard is fixed by a hash of the learner's name (:func:`shard_of`), not by position, so a learner
never moves to another shard when others join the class.  Shards may write to one ``--out`` folder (the
result files are per learner, so two shards never write one file) or to one folder each.  A shard writes
its own reports under ``OUT/shards/K-of-N/`` and, beside them, a *manifest* (:func:`write_manifest`) that
:mod:`course.grading.merge` reads: the whole class as this shard's scan saw it (every learner, notebook and
shard, so the merge can name the learners of a shard that never ran), the grading key of each of its own
notebooks (so each result file is verified against what was graded), the rows of learners that have no
result file (empty folders, refused files), the run's messages, and whether it finished.  The manifest
carries an HMAC with the folder's grader key, like every result file.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from course.grading import store

SHARDS_DIR = "shards"
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` as ``(K, N)`` with 1 <= K <= N; raise ValueError saying what is wrong."""
    found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not found:
        raise ValueError(f"--shard {text}: expected K/N, e.g. 1/4 (the first of 4 shards)")
    k, n = int(found.group(1)), int(found.group(2))
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"--shard {text}: K must be between 1 and N (shards are numbered 1 to N)")
    return k, n


def shard_of(learner: str, count: int) -> int:
    """The shard (1 to ``count``) of ``learner``: a SHA-256 of the name, so it never depends on the others."""
    digest = hashlib.sha256(learner.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def shard_folder(out: Path, shard: tuple[int, int]) -> Path:
    """Where shard ``(K, N)`` writes its reports and manifest: ``OUT/shards/K-of-N``."""
    return Path(out) / SHARDS_DIR / f"{shard[0]}-of-{shard[1]}"


def select(found, shard: tuple[int, int], lab: str | None = None):
    """(``found`` keeping only the learners of ``shard``, the whole class as rows for the manifest).

    ``found`` is a :class:`course.grading.submissions.Found`; its run messages are kept whole (they are the
    same in every shard, and the merge keeps one copy).
    """
    from course.grading.runner import _known_lab_from_name
    from course.grading.submissions import Found

    k, n = shard
    everyone = [{"learner": learner, "path": str(path), "shard": shard_of(learner, n),
                 "lab": lab or _known_lab_from_name(path) or ""}
                for learner, path in found.submissions]
    everyone += [{"learner": learner, "path": str(path), "shard": shard_of(learner, n), "lab": lab or ""}
                 for learner, path in found.empty]
    everyone += [{"learner": learner, "path": str(path), "shard": shard_of(learner, n), "lab": lab or ""}
                 for learner, path, _ in found.refused]
    mine = Found([(lr, p) for lr, p in found.submissions if shard_of(lr, n) == k],
                 [(lr, p) for lr, p in found.empty if shard_of(lr, n) == k],
                 [(lr, p, why) for lr, p, why in found.refused if shard_of(lr, n) == k],
                 list(found.messages))
    return mine, sorted(everyone, key=lambda row: (row["learner"], row["path"]))


def write_manifest(out: Path, shard: tuple[int, int], everyone: list[dict], items: list[tuple], results: dict,
                   messages: list[str], mac_key: bytes, *, labs: dict | None = None, complete: bool) -> Path:
    """Write shard ``shard``'s manifest (atomically, with its MAC); return its path.

    ``items`` are the (learner, notebook, grading key) this shard grades, whose results are files;
    ``results`` maps (learner, str(path)) to every :class:`~course.grading.runner.Graded` of the shard, of
    which those with no result file (empty folders, refused files) are kept in the manifest itself.
    ``labs`` maps a lab id to its title and exercises (id, title, points), for the rows of learners a
    missing shard did not grade.
    """
    filed = {(learner, str(notebook)) for learner, notebook, _ in items}
    record = {
        "format": MANIFEST_FORMAT, "shard": list(shard), "complete": complete, "class": everyone,
        "items": [{"learner": learner, "path": str(notebook), "key": key} for learner, notebook, key in items],
        "rows": [store.graded_to_dict(g) for slot, g in sorted(results.items()) if slot not in filed],
        "messages": list(messages), "labs": labs or {},
    }
    record["mac"] = store._mac(mac_key, record)
    return store.atomic_write(shard_folder(out, shard) / MANIFEST, json.dumps(record, indent=1, sort_keys=True))


def read_manifest(path: Path, mac_key: bytes) -> tuple[dict | None, str]:
    """(the manifest at ``path``, "") when it verifies with ``mac_key``, else (None, why)."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as error:
        return None, f"it cannot be read ({error})"
    mac = record.pop("mac", None) if isinstance(record, dict) else None
    if not isinstance(mac, str) or not store.hmac.compare_digest(mac, store._mac(mac_key, record)):
        return None, "its MAC does not match: it was changed after the grader wrote it, or written with another key"
    if record.get("format") != MANIFEST_FORMAT:
        return None, "it is not a manifest this grader wrote"
    return record, ""


def lab_table(everyone: list[dict], secret) -> dict:
    """lab id -> {"title", "exercises": [[id, title, points]]} for every lab the class's notebooks name."""
    from course.grading.runner import lab_exercises

    table = {}
    for which in sorted({row["lab"] for row in everyone} - {""}):
        try:
            title, exercises = lab_exercises(which, secret)
        except (ValueError, ImportError):
            continue
        table[which] = {"title": title, "exercises": [[e.id, e.title, e.max_points] for e in exercises]}
    return table
