"""Lesson 07, exercise 07.4: document versioning, the current version in one collection, the history in another.

Each update copies the version it replaces into ``db.policies_history`` (its ``_id`` kept as ``policyId``,
beside its ``revision``) before changing the current document, so reads of the current version stay
one ``find_one`` on ``db.policies`` and the past is one query on the history.  The update names the
revision it read in its filter (the lesson's rule): the check lets another client update the policy between
the learner's read and write, and the learner's update must then change nothing.
"""

from __future__ import annotations

import datetime

from course.datasets.more_patterns import policies
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04.common import COMPARE, data, first_difference, seeded
from course.lessons.lesson06.text import clipped
from course.engine.recording import RecordingDatabase

CHANGES = ({"premium": 610_000, "updatedAt": datetime.datetime(2026, 4, 1)},
           {"coverage": 45_000_000, "updatedAt": datetime.datetime(2026, 5, 1)},
           {"holder": "Linh Tran", "premium": 640_000, "updatedAt": datetime.datetime(2026, 6, 1)})


def versions(policy: dict, changes: tuple = CHANGES) -> list[dict]:
    """Every version of ``policy`` after each change in turn, revision 1 first (pure)."""
    found = [dict(policy)]
    for change in changes:
        found.append({**found[-1], **change, "revision": found[-1]["revision"] + 1})
    return found


class History(Exercise):
    id = "07.4"
    title = "Document versioning: the current policy, and every past revision"
    answers = ("update_policy", "policy_at")
    requirements = {
        "history": "before changing a policy, update_policy inserts the version it replaces into "
                   "db.policies_history: every field of it, its _id stored as policyId (the history document "
                   "has an _id of its own)",
        "current": "the policy in db.policies gets the changes and its revision goes up by 1; its other fields "
                   "stay",
        "guarded": "the update's filter names the revision update_policy read: when another client changes the "
                   "policy between that read and the update, the update changes nothing",
        "read": "policy_at(db, policy_id, revision) returns that revision's fields (without _id or policyId) "
                "from db.policies when it is the current one, from the history otherwise, and None when the "
                "revision does not exist",
    }
    hints = (
        "Read the current version, insert it into the history with _id renamed policyId, then update.",
        "The update: update_one({'_id': policy_id, 'revision': current['revision']}, {'$set': changes, '$inc': "
        "{'revision': 1}}): the revision read in the filter makes it match nothing if another client changed the "
        "policy in between.",
        "policy_at: try db.policies.find_one({'_id': id, 'revision': r}), then "
        "db.policies_history.find_one({'policyId': id, 'revision': r}); drop _id and policyId.",
    )
    solution_code = """
def update_policy(db, policy_id, changes):
    \"\"\"Keep the current version in the history, then apply the changes as the next revision.\"\"\"
    current = db.policies.find_one({"_id": policy_id})
    old = {key: value for key, value in current.items() if key != "_id"}
    db.policies_history.insert_one({"policyId": policy_id, **old})
    db.policies.update_one({"_id": policy_id, "revision": current["revision"]},
                           {"$set": changes, "$inc": {"revision": 1}})


def policy_at(db, policy_id, revision):
    \"\"\"The policy's fields as they were at that revision, or None.\"\"\"
    found = db.policies.find_one({"_id": policy_id, "revision": revision}, {"_id": 0})
    if found is None:
        found = db.policies_history.find_one({"policyId": policy_id, "revision": revision},
                                             {"_id": 0, "policyId": 0})
    return found
"""

    def _updated(self, answer, times, which=0):
        """The policy updated ``times`` times, and the versions db.policies held before each update."""
        seed = data(policies)
        db = seeded(self.lab, policies=seed)
        policy = seed[which]
        replaced = []
        for change in CHANGES[:times]:
            replaced.append(db.policies.find_one({"_id": policy["_id"]}))
            self.call("update_policy", answer.update_policy, db, policy["_id"], dict(change))
        return db, policy, replaced

    @staticmethod
    def _fields(version: dict) -> dict:
        return {k: v for k, v in version.items() if k != "_id"}

    def _check_history(self, answer, times, which=0):
        db, policy, replaced = self._updated(answer, times, which)
        stored = list(db.policies_history.find({"policyId": policy["_id"]}))
        if not stored:
            found = db.policies_history.find_one({})
            raise Incorrect(f"after {times} update(s) of policy {policy['_id']} db.policies_history has no document "
                            f"with policyId {policy['_id']!r}" + (f"; it holds {clipped(found, 100)}" if found else
                                                                  ": insert the old version there first"))
        if any(s.get("_id") == policy["_id"] for s in stored):
            raise Incorrect("a history document reuses the policy's _id: keep it in policyId, and let the history "
                            "document have its own _id")
        left = [self._fields(s) for s in stored]
        for k, version in enumerate(replaced, start=1):
            want = {"policyId": policy["_id"], **self._fields(version)}
            if want in left:
                left.remove(want)
                continue
            near = next((s for s in left if s.get("revision") == version.get("revision")), left[0] if left else None)
            difference = first_difference(want, near, words=COMPARE) if near else "no document left"
            raise Incorrect(f"update {k} replaced revision {version.get('revision')!r} of policy {policy['_id']}, "
                            f"but db.policies_history has no copy of it ({difference}): store every field of the "
                            "version replaced, as it was")
        if left:
            raise Incorrect(f"after {times} update(s) db.policies_history holds {len(stored)} versions of policy "
                            f"{policy['_id']}, expected {times}: one per update, the version it replaced")

    @visible(points=2, checks="history")
    def one_update(self, answer):
        """One update: revision 1 is in the history, whole, under policyId"""
        self._check_history(answer, 1)

    @visible(points=1, checks="history")
    def three_updates(self, answer):
        """Three updates: each version replaced is in the history"""
        self._check_history(answer, 3)

    @hidden(points=1, checks="history")
    def another_policy(self, answer):
        """Two updates of another policy"""
        self._check_history(answer, 2, which=2)

    def _check_current(self, answer, times, which=0):
        db, policy, _ = self._updated(answer, times, which)
        want = versions(policy)[times]
        got = db.policies.find_one({"_id": policy["_id"]})
        difference = first_difference(want, got, words=COMPARE)
        if difference:
            raise Incorrect(f"after {times} update(s) policy {policy['_id']} in db.policies differs from the "
                            f"expected revision {want['revision']} ({difference}): each update sets the changes and "
                            "adds 1 to the revision")
        for other in data(policies):
            if other["_id"] != policy["_id"] and first_difference(other, db.policies.find_one({"_id": other["_id"]})):
                raise Incorrect(f"updating policy {policy['_id']} changed policy {other['_id']}")

    @visible(points=2, checks="current")
    def current_after_one(self, answer):
        """One update: the policy has the change and revision 2"""
        self._check_current(answer, 1)

    @hidden(points=1, checks="current")
    def current_after_three(self, answer):
        """Three updates: revision 4 with every change"""
        self._check_current(answer, 3, which=1)

    def _check_guarded(self, answer, which, competing):
        """Another client updates the policy (history first, then revision + 1) between the learner's read and
        its write; the learner's update must leave the other client's revision as it wrote it."""
        seed = data(policies)
        db = seeded(self.lab, policies=seed)
        policy_id = seed[which]["_id"]

        theirs: list[dict] = []  #: the policy as the other client left it

        def another_client():
            current = db.policies.find_one({"_id": policy_id})
            db.policies_history.insert_one({"policyId": policy_id, **self._fields(current)})
            db.policies.update_one({"_id": policy_id, "revision": current["revision"]},
                                   {"$set": dict(competing), "$inc": {"revision": 1}})
            theirs.append(db.policies.find_one({"_id": policy_id}))

        watched = RecordingDatabase(db, race=another_client)
        # raising when the update matched nothing tells the caller: allowed, the data is what is judged
        self.call("update_policy", answer.update_policy, watched, policy_id, dict(CHANGES[0]), expect_raise=True)
        if not watched.raced:
            return  # no write followed a read: nothing another client could slip in between
        theirs = theirs[0]
        difference = first_difference(theirs, db.policies.find_one({"_id": policy_id}), words=COMPARE)
        if difference:
            raise Incorrect(f"another client updated policy {policy_id} to revision {theirs['revision']} between "
                            f"update_policy's read and its update, and the update then wrote over it ({difference}):"
                            f" revision {theirs['revision']} is in no history; once the policy is no longer the "
                            "revision update_policy read, its update must change nothing")

    @visible(points=1, checks="guarded")
    def another_client_in_between(self, answer):
        """Another client updates the policy between the read and the update: its revision stays"""
        self._check_guarded(answer, 0, {"premium": 999_000, "updatedAt": datetime.datetime(2026, 3, 15)})

    @hidden(points=1, checks="guarded")
    def another_client_changes_other_fields(self, answer):
        """The same for another policy, the other client changing its holder"""
        self._check_guarded(answer, 3, {"holder": "Ada Obi", "updatedAt": datetime.datetime(2026, 3, 20)})

    def _check_read(self, answer, times, revisions):
        seed = data(policies)
        policy = seed[0]
        every = versions(policy)
        stored = [{"policyId": policy["_id"], **self._fields(v)} for v in every[:times]]
        current = [dict(p) for p in seed]
        current[0] = every[times]
        db = seeded(self.lab, policies=current, policies_history=stored)
        for revision in revisions:
            got = self.call("policy_at", answer.policy_at, db, policy["_id"], revision)
            want = self._fields(every[revision - 1]) if 1 <= revision <= times + 1 else None
            if want is None:
                if got is not None:
                    raise Incorrect(f"policy {policy['_id']} has no revision {revision}; policy_at returned "
                                    f"{clipped(got, 80)} instead of None")
                continue
            where = "the current one, in db.policies" if revision == times + 1 else "in db.policies_history"
            if not isinstance(got, dict):
                raise Incorrect(f"policy_at(db, {policy['_id']!r}, {revision}) should return a dict of that "
                                f"revision's fields; got {clipped(got, 80)} (revision {revision} is {where})")
            difference = first_difference(want, got, words=COMPARE)
            if difference:
                raise Incorrect(f"policy_at(db, {policy['_id']!r}, {revision}) differs from revision {revision} "
                                f"({difference}); it is {where}")

    @visible(points=2, checks="read")
    def reads_past_and_current(self, answer):
        """Three past revisions in the history: revisions 1, 3, 4 (current) and 9 (none)"""
        self._check_read(answer, 3, (1, 3, 4, 9))

    @hidden(points=1, checks="read")
    def never_updated(self, answer):
        """A policy never updated: revision 1 is the current one, 2 does not exist"""
        self._check_read(answer, 0, (1, 2, 0))
