"""Per-learner result files: what makes a grading run resumable.

Each graded notebook is saved, as soon as it is graded, to
``OUT/results/<learner>/<notebook>.json`` (written to a temporary file and
moved into place with :func:`os.replace`, so a killed run leaves either the
old file or the new one, never half of one).  The file records the *key* it
was graded under: the SHA-256 of the notebook's bytes, the course version,
the digest of the course code that grades its lab, the secret tests and the
lab being graded.  (Limits are not part of it: to grade again with other
limits, use ``--force``.)  A later run reuses a result whose key still matches and grades
everything else; ``--force`` grades everything again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import course
from course.grading.runner import Graded
from course.results import Result

RESULTS_DIR = "results"
FORMAT = 1


def atomic_write(target: Path, text: str) -> Path:
    """Write ``text`` to ``target`` through a temporary file in the same folder and ``os.replace``."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    return target


def safe_name(text: str) -> str:
    """A file-name-safe form of ``text`` that stays unique (a short hash is added when it had to change)."""
    cleaned = re.sub(r"[^\w.-]+", "_", text).strip("._") or "x"
    if cleaned != text:
        cleaned += "-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return cleaned


def result_path(out: Path, learner: str, notebook: Path | None) -> Path:
    """Where the result of ``learner``'s ``notebook`` (None: an empty folder) is kept."""
    name = safe_name(notebook.name) if notebook is not None else "_no_notebook"
    return Path(out) / RESULTS_DIR / safe_name(learner) / f"{name}.json"


def grading_key(notebook: Path | None, code_digest: str, settings: dict[str, Any]) -> str:
    """What a result depends on: the notebook's bytes, the course version and code, and the settings."""
    digest = hashlib.sha256()
    try:
        digest.update(notebook.read_bytes() if notebook is not None else b"<none>")
    except OSError as error:
        digest.update(f"<unreadable {error.errno}>".encode())
    blob = json.dumps({"course": course.__version__, "code": code_digest, "settings": settings,
                       "format": FORMAT}, sort_keys=True)
    digest.update(blob.encode("utf-8"))
    return digest.hexdigest()


def graded_to_dict(graded: Graded) -> dict:
    """A JSON-ready form of ``graded``."""
    return {
        "learner": graded.learner, "path": str(graded.path), "lab": graded.lab,
        "results": [r.to_dict() for r in graded.results], "notes": list(graded.notes),
        "skipped": graded.skipped, "lab_title": graded.lab_title, "flags": list(graded.flags),
    }


def graded_from_dict(data: dict) -> Graded:
    """Rebuild a :class:`Graded` from :func:`graded_to_dict`."""
    return Graded(data["learner"], Path(data["path"]), data["lab"],
                  [Result.from_dict(r) for r in data["results"]], list(data.get("notes", [])),
                  data.get("skipped", ""), data.get("lab_title", ""), list(data.get("flags", [])))


def save(out: Path, key: str, graded: Graded, notebook: Path | None, run_id: str) -> Path:
    """Save one result atomically."""
    record = {"format": FORMAT, "key": key, "run": run_id, "graded": graded_to_dict(graded)}
    return atomic_write(result_path(out, graded.learner, notebook), json.dumps(record, indent=1, sort_keys=True))


def load(out: Path, learner: str, notebook: Path | None, key: str) -> tuple[Graded, str] | None:
    """The saved result and the id of the run that made it, if it exists and was graded under ``key``."""
    target = result_path(out, learner, notebook)
    try:
        record = json.loads(target.read_text(encoding="utf-8"))
        if record.get("format") != FORMAT or record.get("key") != key:
            return None
        return graded_from_dict(record["graded"]), str(record.get("run", ""))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or damaged: grade again
