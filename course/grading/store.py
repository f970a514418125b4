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

Results cannot be forged on disk: every file carries an HMAC-SHA256 over its
content and its place (learner and notebook), keyed by a secret that never
enters a learner's sandbox: ``OUT/.grader-key`` (created, mode 0600, on the
first run) or the file ``--key-file`` names.  A result that fails
verification (edited, copied from another learner's slot, or written without
the key) is never reused: :func:`plan_reuse` puts it back on the list to grade
and says so, naming the learner.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import course
from course.grading.runner import Graded
from course.grading.submissions import UsageError
from course.engine.results import Result

RESULTS_DIR = "results"
FORMAT = 2  #: 2: results carry a MAC (format 1 files are graded again)
KEY_FILE = ".grader-key"
KEY_BYTES = 32
MAX_RESULT_BYTES = 16_000_000  #: a result file larger than this is not read (it was not written by us)


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


MAX_NAME = 100  #: longest file name part kept from a learner's or notebook's name (file systems allow 255 bytes)


def safe_name(text: str) -> str:
    """A file-name-safe form of ``text`` that stays unique (a short hash is added when it had to change).

    At most :data:`MAX_NAME` characters of ``text`` are kept, so a long name still makes a valid file name.
    """
    cleaned = re.sub(r"[^\w.-]+", "_", text, flags=re.ASCII).strip("._")[:MAX_NAME] or "x"
    if cleaned != text:
        cleaned += "-" + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return cleaned


def result_path(out: Path, learner: str, notebook: Path | None) -> Path:
    """Where the result of ``learner``'s ``notebook`` (None: an empty folder) is kept."""
    name = safe_name(notebook.name) if notebook is not None else "_no_notebook"
    return Path(out) / RESULTS_DIR / safe_name(learner) / f"{name}.json"


def grading_key(notebook: Path | None, code_digest: str, settings: dict[str, Any]) -> str:
    """What a result depends on: the notebook's bytes, the course version and code, and the settings."""
    digest = hashlib.sha256()
    try:
        if notebook is None:
            digest.update(b"<none>")
        else:
            with Path(notebook).open("rb") as stream:  # in blocks: a huge file is never held in memory
                for block in iter(lambda: stream.read(1 << 20), b""):
                    digest.update(block)
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


def load_key(out: Path, key_file: Path | None = None) -> bytes:
    """The grader's secret MAC key: ``key_file``, else ``OUT/.grader-key``; created (0600) when absent.

    Raises :class:`~course.grading.submissions.UsageError` when it cannot be
    created or read, is not a key this grader wrote, or others may read it.
    """
    path = Path(key_file) if key_file is not None else Path(out) / KEY_FILE
    if not path.exists():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, made = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # mode 0600
            with os.fdopen(handle, "w", encoding="ascii") as stream:
                stream.write(secrets.token_hex(KEY_BYTES) + "\n")
            try:  # linked whole into place: a run started at the same moment never reads half a key
                os.link(made, path)
            finally:
                os.unlink(made)
        except FileExistsError:
            pass  # another run made it at the same moment: read that one
        except OSError as error:
            raise UsageError(f"cannot create the grader key {path}: {error.strerror or error}") from error
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > 1000:
            raise UsageError(f"the grader key {path} is not a key file written by `course grade`")
        if info.st_mode & 0o077:
            raise UsageError(f"the grader key {path} can be read by other users: `chmod 600 {path}`")
        text = path.read_text(encoding="ascii").strip()
    except UsageError:
        raise
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read the grader key {path}: {error}") from error
    if not re.fullmatch(r"[0-9a-f]{%d,}" % (2 * KEY_BYTES), text):
        raise UsageError(f"the grader key {path} is not a key file written by `course grade` "
                         f"({2 * KEY_BYTES} or more hex digits)")
    return bytes.fromhex(text)


def prepare_out(out: Path, key_file: Path | None = None) -> bytes:
    """Make sure grading can write to ``out`` before anyone is graded; return the MAC key.

    Creates ``out`` (and ``out/results``), proves it is writable by writing and
    removing a file there, then loads or creates the key (see :func:`load_key`).
    Raises :class:`~course.grading.submissions.UsageError` with the reason.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: it is a file, not a folder")
    try:
        (out / RESULTS_DIR).mkdir(parents=True, exist_ok=True)
        probe = atomic_write(out / RESULTS_DIR / f".write-test-{secrets.token_hex(6)}", "ok\n")  # shards share out/
        probe.unlink()
    except OSError as error:
        raise UsageError(f"--out {out}: cannot write there ({error.strerror or error}); "
                         f"choose a folder you can write to") from error
    return load_key(out, key_file)


def _mac(mac_key: bytes, record: dict) -> str:
    blob = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(mac_key, blob.encode("ascii"), hashlib.sha256).hexdigest()


def _slot(learner: str, notebook: Path | None) -> str:
    return f"{learner}\0{notebook.name if notebook is not None else ''}"


def save(out: Path, key: str, graded: Graded, notebook: Path | None, run_id: str, *,
         mac_key: bytes | None = None) -> Path:
    """Save one result atomically, with its MAC (``mac_key`` default: :func:`load_key` of ``out``)."""
    mac_key = load_key(out) if mac_key is None else mac_key
    record = {"format": FORMAT, "key": key, "run": run_id, "slot": _slot(graded.learner, notebook),
              "graded": graded_to_dict(graded)}
    record["mac"] = _mac(mac_key, record)
    return atomic_write(result_path(out, graded.learner, notebook), json.dumps(record, indent=1, sort_keys=True))


@dataclass(frozen=True)
class Saved:
    """What :func:`verify` found in a result file.

    ``state`` is ``"missing"`` (no file), ``"changed"`` (verified, but graded
    under another key: the notebook or the checks changed), ``"forged"`` (the
    file exists but fails verification) or ``"ok"``.
    """

    state: str
    graded: Graded | None = None
    run: str = ""
    why: str = ""  #: for "forged": what was wrong


def verify(out: Path, learner: str, notebook: Path | None, key: str, *, mac_key: bytes | None = None) -> Saved:
    """Read and verify the saved result of ``learner``'s ``notebook`` (see :class:`Saved`)."""
    target = result_path(out, learner, notebook)
    try:
        info = target.lstat()
    except FileNotFoundError:
        return Saved("missing")
    except OSError as error:
        return Saved("forged", why=f"it cannot be read ({error.strerror or error})")
    if not stat.S_ISREG(info.st_mode):
        return Saved("forged", why="it is not a regular file")
    if info.st_size > MAX_RESULT_BYTES:
        return Saved("forged", why="it is larger than any result the grader writes")
    mac_key = load_key(out) if mac_key is None else mac_key
    try:
        record = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return Saved("forged", why="it is not a result file the grader wrote (unreadable JSON)")
    mac = record.pop("mac", None) if isinstance(record, dict) else None
    if not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(mac_key, record)):
        return Saved("forged", why="its MAC does not match: it was changed after the grader wrote it, "
                                   "or written without this grader's key")
    if record.get("format") != FORMAT or record.get("slot") != _slot(learner, notebook):
        return Saved("forged", why="it was written for another learner or notebook")
    try:
        graded = graded_from_dict(record["graded"])
    except (KeyError, TypeError, ValueError):
        return Saved("forged", why="its content cannot be read back")
    if graded.learner != learner:
        return Saved("forged", why="it was written for another learner")
    if record.get("key") != key:
        return Saved("changed", graded, str(record.get("run", "")))
    return Saved("ok", graded, str(record.get("run", "")))


def load(out: Path, learner: str, notebook: Path | None, key: str, *,
         mac_key: bytes | None = None) -> tuple[Graded, str] | None:
    """The saved result and the id of the run that made it, if it verifies and was graded under ``key``."""
    saved = verify(out, learner, notebook, key, mac_key=mac_key)
    return (saved.graded, saved.run) if saved.state == "ok" else None


@dataclass
class Reuse:
    """Which saved results a run keeps, which notebooks it grades, and what it says about them."""

    kept: dict[tuple[str, str], Graded] = field(default_factory=dict)  #: (learner, str(notebook)) -> result
    todo: list[tuple[str, Path | None, str]] = field(default_factory=list)  #: (learner, notebook, key)
    forged: list[tuple[str, Path | None, str]] = field(default_factory=list)  #: (learner, notebook, why)
    messages: list[str] = field(default_factory=list)


def plan_reuse(out: Path, items: list[tuple[str, Path | None, str]], mac_key: bytes, *,
               force: bool = False) -> Reuse:
    """Split ``items`` ((learner, notebook, key)) into results to keep and notebooks to grade.

    Only a result that verifies (MAC, slot) and was graded under the same key is
    kept; one that fails verification is graded again and a message names its
    learner; ``force`` grades everything again.
    """
    plan = Reuse()
    for learner, notebook, key in items:
        saved = Saved("missing") if force else verify(out, learner, notebook, key, mac_key=mac_key)
        if saved.state == "ok":
            plan.kept[(learner, str(notebook))] = saved.graded
            continue
        plan.todo.append((learner, notebook, key))
        if saved.state == "forged":
            plan.forged.append((learner, notebook, saved.why))
    if plan.kept:
        plan.messages.append(f"keeping {len(plan.kept)} results from an earlier run, each verified with "
                             f"the grader key (use --force to grade them again)")
    for learner, notebook, why in plan.forged:
        where = notebook.name if notebook is not None else "an empty folder"
        plan.messages.append(f"grading {learner} ({where}) again: the saved result failed verification ({why})")
    return plan
