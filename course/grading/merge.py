"""``course merge DIR... --out FINAL``: one gradebook from the shards of a class, trusting nothing unverified.

Each folder's shards (``DIR/shards/K-of-N/manifest.json``, :mod:`course.grading.shards`) are read with that
folder's own grader key (``DIR/.grader-key``, or the ``--key-file`` the shards shared); a manifest that fails
verification is refused and named.  Every result a manifest lists is verified the same way
(:func:`course.grading.store.verify`, against the grading key it was graded under):

* a result that fails verification is refused: its learner gets error rows, is listed for review, and the
  file is named;
* two verified results for one notebook (the same shard merged from two folders) that disagree are both
  refused, the same way; two that agree count once;
* a learner whose shard never reported, did not finish, or left no result gets error rows saying so (the
  class is known from any shard's manifest), and ``summary.md`` names the shard: nothing is silently omitted.

The reports are written by :func:`course.grading.gradebook.write_reports` from the results, so a complete
merge writes the same ``gradebook.csv``, ``totals.csv``, ``summary.md`` and ``feedback/`` as one unsharded
run of the class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from course.grading import store
from course.grading.gradebook import write_reports
from course.grading.runner import ExerciseInfo, Graded, error_result
from course.grading.shards import MANIFEST, SHARDS_DIR, read_manifest
from course.grading.submissions import UsageError
from course.engine.results import Result, Status


@dataclass
class MergeReport:
    """What a merge found and wrote."""

    graded: list[Graded]
    written: dict
    messages: list[str] = field(default_factory=list)  #: what was refused or missing, as in summary.md
    missing: list[str] = field(default_factory=list)  #: learners with a notebook no shard graded
    refused: list[str] = field(default_factory=list)  #: learners whose result was refused (to review)

    def summary(self) -> str:
        """One line of counts, then what was refused or missing."""
        learners = {g.learner for g in self.graded}
        line = f"merged {len(self.graded)} notebooks for {len(learners)} learners"
        if self.missing:
            line += f"; not graded (missing shard or result): {', '.join(sorted(set(self.missing)))}"
        if self.refused:
            line += f"; refused results, to review: {', '.join(sorted(set(self.refused)))}"
        return "\n".join([line, *self.messages])


def _folder_key(folder: Path, key_file: Path | None) -> bytes:
    """The grader key the shards in ``folder`` used; never created here (a merge writes no results)."""
    path = Path(key_file) if key_file is not None else folder / store.KEY_FILE
    if not path.exists():
        raise UsageError(f"{folder}: no grader key ({path} does not exist): the results there cannot be "
                         f"verified; pass the --key-file the shards were graded with")
    return store.load_key(folder, key_file)


def _log_hint(folders: list[Path], k: int) -> str:
    """The last line of the newest Slurm log of shard ``k`` in ``folders`` (see :mod:`course.grading.slurm`)."""
    logs = sorted((log for folder in folders for log in (folder / "slurm" / "logs").glob(f"grade-*_{k}.out")),
                  key=lambda log: log.stat().st_mtime)
    if not logs:
        return ""
    lines = [line.strip() for line in logs[-1].read_text(errors="replace").splitlines() if line.strip()]
    return f" (its log {logs[-1]} ends: {lines[-1][:300]})" if lines else f" (its log {logs[-1]} is empty)"


def _error_rows(learner: str, path: str, lab: str, labs: dict, reason: str) -> Graded:
    """Error rows for a notebook the merge has no trusted result for: one per exercise when its lab is known."""
    info = labs.get(lab)
    if info:
        exercises = [ExerciseInfo(e[0], e[1], float(e[2])) for e in info["exercises"]]
        return Graded(learner, Path(path), lab, [error_result(e, reason) for e in exercises], [], reason,
                      info["title"])
    return Graded(learner, Path(path), "-", [Result("-", "", Status.ERROR, reason, 0.0, 0.0)], [], reason)


def _same(a: Graded, b: Graded) -> bool:
    one, two = store.graded_to_dict(a), store.graded_to_dict(b)
    one.pop("path"), two.pop("path")
    return one == two


def merge(folders: list[Path], out: Path, key_file: Path | None = None) -> MergeReport:
    """Merge the shards in ``folders`` into ``out``'s reports (see the module docstring).

    Raises :class:`~course.grading.submissions.UsageError` when a folder is not a folder of shards, has no
    key, or the folders hold shards of different splits of a class.
    """
    folders = [Path(f) for f in folders]
    manifests, messages = [], []
    for folder in folders:
        if not folder.is_dir():
            raise UsageError(f"{folder} is not a folder")
        key = _folder_key(folder, key_file)
        paths = sorted((folder / SHARDS_DIR).glob(f"*/{MANIFEST}"))
        if not paths:
            raise UsageError(f"{folder} holds no shard ({SHARDS_DIR}/K-of-N/{MANIFEST}): grade the class there "
                             f"with `course grade ... --shard K/N` first")
        for path in paths:
            record, why = read_manifest(path, key)
            if record is None:
                messages.append(f"refused the shard manifest {path}: {why}")
            else:
                manifests.append((folder, key, record))
    splits = {record["shard"][1] for _, _, record in manifests}
    if len(splits) > 1:
        raise UsageError(f"the folders hold shards of different splits of the class (N = "
                         f"{', '.join(map(str, sorted(splits)))}): merge the shards of one run")
    if not manifests:
        raise UsageError("no shard manifest could be verified: nothing to merge (see above)")
    count = splits.pop()
    manifests.sort(key=lambda entry: (entry[2]["shard"][0], str(entry[0])))

    everyone: dict[tuple[str, str], dict] = {}
    labs: dict = {}
    started: dict[int, list[dict]] = {}
    for _, _, record in manifests:
        for row in record["class"]:
            everyone.setdefault((row["learner"], Path(row["path"]).name), row)
        for lab, info in record["labs"].items():
            labs.setdefault(lab, info)
        started.setdefault(record["shard"][0], []).append(record)

    chosen: dict[tuple[str, str], tuple[Graded, str]] = {}
    disagree: dict[tuple[str, str], list[str]] = {}
    forged: dict[tuple[str, str], list[str]] = {}
    for folder, key, record in manifests:
        source = f"{folder} (shard {record['shard'][0]}/{count})"
        offered = []
        for item in record["items"]:
            notebook = Path(item["path"])
            saved = store.verify(folder, item["learner"], notebook, item["key"], mac_key=key)
            if saved.state == "ok":
                offered.append(saved.graded)
            elif saved.state == "forged":
                where = store.result_path(folder, item["learner"], notebook)
                forged.setdefault((item["learner"], notebook.name), []).append(f"{where}: {saved.why}")
        offered += [store.graded_from_dict(row) for row in record["rows"]]
        for graded in offered:
            slot = (graded.learner, graded.path.name)
            everyone.setdefault(slot, {"learner": graded.learner, "path": str(graded.path),
                                       "shard": record["shard"][0], "lab": graded.lab})
            if slot not in chosen:
                chosen[slot] = (graded, source)
            elif not _same(chosen[slot][0], graded):
                disagree.setdefault(slot, [chosen[slot][1]]).append(source)

    results: dict[tuple[str, str], Graded] = {}
    missing, refused, lost_by_shard = [], [], {}
    for slot, row in sorted(everyone.items()):
        learner, path, k = row["learner"], row["path"], row["shard"]
        if slot in disagree:
            reason = (f"not graded: two results for this notebook disagree ({' and '.join(disagree[slot])}); "
                      f"both refused: grade it again")
            graded = _error_rows(learner, path, row["lab"], labs, reason)
            graded.flags.append(reason)
            refused.append(learner)
        elif slot in forged:
            why = "; ".join(forged[slot])
            if slot in chosen:
                graded = chosen[slot][0]
                graded.flags.append(f"another copy of its result failed verification and was refused ({why})")
            else:
                reason = f"not graded: its result failed verification and was refused ({why}): grade it again"
                graded = _error_rows(learner, path, row["lab"], labs, reason)
                graded.flags.append(reason)
            refused.append(learner)
        elif slot in chosen:
            graded = chosen[slot][0]
        else:
            state = ("never reported (no manifest)" if k not in started else
                     "did not finish" if not any(r["complete"] for r in started[k]) else
                     "finished without a result for it (its grading was stopped by a limit of the grader)")
            reason = f"not graded: shard {k}/{count} {state}; grade it again with `course grade ... --shard {k}/{count}`"
            graded = _error_rows(learner, path, row["lab"], labs, reason)
            missing.append(learner)
            lost_by_shard.setdefault((k, state), []).append(learner)
        results[(learner, path)] = graded
    seen = set()
    for _, _, record in manifests:  # every shard saw the same run-level messages: keep one copy of each
        for line in record["messages"]:
            if line not in seen:
                seen.add(line)
                messages.insert(len(seen) - 1, line)
    for (k, state), learners in sorted(lost_by_shard.items()):
        messages.append(f"shard {k}/{count} {state}{_log_hint(folders, k)}: its learners "
                        f"{', '.join(sorted(set(learners)))} are not graded (error rows in the gradebook)")
    for slot in sorted(forged):
        messages.append(f"refused the result of {slot[0]} ({slot[1]}): {'; '.join(forged[slot])}")
    graded = [results[slot] for slot in sorted(results)]
    written = write_reports(graded, out, messages)
    return MergeReport(graded, written, messages[len(seen):], missing, refused)
