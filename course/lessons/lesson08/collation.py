"""Lesson 08, exercise 08.4: a case-insensitive search that an index answers.

The learner writes the index (``create_name_index``) and returns the search's ``find`` arguments as plain
data (``name_search``), as lesson 07's pipeline exercise returns a pipeline: the check runs that ``find``
itself, through a :class:`~course.engine.recording.RecordingCollection`, so the collation it judges is the one in
the recorded command, in ``check()`` and in ``course grade`` alike.  Whether an index serves it is asked of
the planner on a server (``explain``: an IXSCAN of the lesson's index); the embedded engines have no
planner, so there MongoDB's documented rule is applied to the recorded command: an equality (or ``$in``)
on ``name`` whose collation is the index's collation (MongoDB's manual, Collation > "Collation and Index
Use": to use an index for string comparisons, an operation must specify the same collation), never a
``$regex`` (the ``$regex`` page: case-insensitive regular expressions cannot use indexes efficiently).
"""

from __future__ import annotations

import re
from typing import Any

from course.store.capabilities import Capability
from course.engine.exercise import Exercise, Incorrect, Unsupported, hidden, visible
from course.lessons.lesson04.common import data, seeded
from course.lessons.lesson08.data import named_customers
from course.engine.recording import RecordingCollection

CASE_INSENSITIVE = {"locale": "en", "strength": 2}
REFERENCE_INDEX = "name_ci"
#: a collation document's optional fields and their defaults (MongoDB's manual, Collation Document)
COLLATION_DEFAULTS = {"caseLevel": False, "caseFirst": "off", "numericOrdering": False,
                      "alternate": "non-ignorable", "maxVariable": "punct", "normalization": False,
                      "backwards": False, "strength": 3}
#: pymongo's Collation object, returned by name_search, reaches ``course grade`` only as its type's name (the
#: grader's channel carries plain data): the search cannot be run or judged there
OPAQUE_COLLATION = ("not checked by course grade: a pymongo Collation object returned by name_search reaches the "
                    "grader as its type's name only (a collation given as a dict is checked)")
FIND_OPTIONS = ("filter", "collation", "projection", "sort", "limit", "skip", "hint")


def normalised(collation: Any) -> dict | None:
    """A collation with every default filled in (``version``, the ICU release a server adds, left out)."""
    collation = getattr(collation, "document", collation)  # pymongo's Collation holds its document
    if not isinstance(collation, dict) or "locale" not in collation:
        return None
    full = {**COLLATION_DEFAULTS, **{k: v for k, v in collation.items() if k != "version"}}
    if full["locale"] == "simple":
        return None  # the simple collation is no collation: binary comparison
    return full


def matching(name: str, customers: list[dict]) -> list[int]:
    """The _ids of the customers whose name equals ``name`` ignoring case only (accents and spaces count)."""
    return sorted(c["_id"] for c in customers if c["name"].casefold() == name.casefold()
                  and _accents(c["name"]) == _accents(name))


def _accents(text: str) -> str:
    import unicodedata

    return "".join(ch for ch in unicodedata.normalize("NFD", text.lower()) if unicodedata.combining(ch))


def name_index(collection: Any) -> tuple[str, dict] | None:
    """The first index of ``collection`` whose first key is ``name``, ascending or descending, with a
    case-insensitive collation: (its name, its collation); None when there is none."""
    for index_name, spec in collection.index_information().items():
        keys = spec.get("key") or []
        if keys and keys[0][0] == "name":
            full = normalised(spec.get("collation"))
            if full is not None:
                return index_name, full
    return None


class _DictCollations(RecordingCollection):
    """A recording collection that hands mongoeco a collation as the dict pymongo would send: mongoeco's
    create_index refuses pymongo's ``Collation`` object (``collation must be a dict``), which a server, through
    pymongo, receives as its document."""

    def create_index(self, keys, *args, **kwargs):
        """``create_index``, with a ``Collation`` object given as its document."""
        if "collation" in kwargs:
            kwargs["collation"] = getattr(kwargs["collation"], "document", kwargs["collation"])
        return self.__getattr__("create_index")(keys, *args, **kwargs)


class CaseInsensitive(Exercise):
    id = "08.4"
    title = "Case-insensitive search with an index"
    answers = ("create_name_index", "name_search")
    requires = frozenset({Capability.COLLATION})
    requirements = {
        "index": "create_name_index(customers) gives customers an index on name with the collation "
                 "{'locale': 'en', 'strength': 2}, which compares letters ignoring case but not accents",
        "matches": "customers.find(**name_search(name)) returns every customer whose name is that name in any "
                   "case (not another accent, not a longer name), and no other",
        "indexed": "that find can use the index: its filter is an equality on name (no $regex) and its "
                   "collation is the index's (same locale and strength)",
    }
    hints = (
        "create_index('name', collation={'locale': 'en', 'strength': 2}).",
        "find() takes collation= as a keyword: name_search returns {'filter': ..., 'collation': ...}.",
        "A $regex with the i option matches the same names, but MongoDB cannot use an index efficiently for it.",
    )
    solution_code = """
def create_name_index(customers):
    \"\"\"An index on name that compares case-insensitively.\"\"\"
    customers.create_index("name", collation={"locale": "en", "strength": 2})


def name_search(name):
    \"\"\"The keyword arguments of the find that looks a name up in any case.\"\"\"
    return {"filter": {"name": name}, "collation": {"locale": "en", "strength": 2}}
"""

    # ---- the index ------------------------------------------------------------------------------
    def _check_index(self, answer, customers):
        db = seeded(self.lab, customers=customers)
        self.call("create_name_index", answer.create_name_index, _DictCollations(db.customers))
        found = name_index(db.customers)
        indexes = {n: s.get("collation") for n, s in db.customers.index_information().items() if n != "_id_"}
        if found is None:
            raise Incorrect(f"customers has no index on name with a collation: its indexes are "
                            f"{indexes or 'only _id'} (an index's collation is given when it is created, and an "
                            "index serves a search on name only when name is its first field)")
        _, collation = found
        want = normalised(CASE_INSENSITIVE)
        if collation["locale"] != want["locale"] or collation["strength"] != want["strength"]:
            raise Incorrect(f"the index on name has the collation locale {collation['locale']!r}, strength "
                            f"{collation['strength']}: the statement asks for locale 'en', strength 2 (strength 1 "
                            "ignores accents too, 3 is case-sensitive)")

    @visible(points=2, checks="index")
    def index_made(self, answer):
        """An index on name with the collation {locale: en, strength: 2}"""
        self._check_index(answer, data(named_customers))

    @hidden(points=1, checks="index")
    def index_on_empty(self, answer):
        """The index is made before any customer exists"""
        self._check_index(answer, [])

    # ---- the search -----------------------------------------------------------------------------
    def _spec(self, answer, name) -> dict:
        spec = self.call("name_search", answer.name_search, name)
        if not isinstance(spec, dict) or "filter" not in spec:
            raise Incorrect(f"name_search should return the keyword arguments of find, a dict such as "
                            f"{{'filter': ..., 'collation': ...}}; got {spec!r:.100}")
        unknown = sorted(set(spec) - set(FIND_OPTIONS))
        if unknown:
            raise Incorrect(f"name_search returned {', '.join(unknown)}, which the course does not pass to find: "
                            f"use {', '.join(FIND_OPTIONS)}")
        return spec

    def _searched(self, answer, name):
        """The learner's search, run by the check on customers with the lesson's index in place."""
        spec = self._spec(answer, name)
        if "collation" in spec:
            if getattr(spec["collation"], "type_name", None) == "Collation":  # crossed the grader's channel
                raise Unsupported(reason=OPAQUE_COLLATION)
            spec = {**spec, "collation": getattr(spec["collation"], "document", spec["collation"])}
        customers = data(named_customers)
        db = seeded(self.lab, customers=customers)
        db.customers.create_index("name", collation=CASE_INSENSITIVE, name=REFERENCE_INDEX)
        watched = RecordingCollection(db.customers)
        try:
            found = list(watched.find(**spec))
        except Exception as error:  # noqa: BLE001 - mongoeco's own limit is never the learner's mistake
            if not self.lab.backend.name.startswith("mongoeco") or "collation" not in str(error):
                raise Incorrect(f"find(**{spec!r:.100}) raised {type(error).__name__}: {error}") from error
            found = Unsupported(reason=f"not checked here: {self.lab.backend.name} compares strings only with the "
                                       f"'simple' and 'en' collations, so it cannot run find(**{spec!r:.100}), "
                                       f"which a MongoDB server can (the engine said: {str(error)[:100]})")
        return spec, customers, db, watched, found

    def _check_matches(self, answer, name):
        spec, customers, _, _, found = self._searched(answer, name)
        if isinstance(found, Unsupported):
            raise found
        got = sorted(d.get("_id") for d in found if isinstance(d, dict))
        want = matching(name, customers)
        if got != want:
            names = {c["_id"]: c["name"] for c in customers}
            missing = [names[i] for i in want if i not in got]
            extra = [names.get(i, i) for i in got if i not in want]
            raise Incorrect(f"find(**name_search({name!r})) returned {[names.get(i, i) for i in got]}: "
                            + (f"it misses {missing}" if missing else f"{extra} should not match")
                            + " (the same name in any case matches; another accent or a longer name does not)")

    @visible(points=2, checks="matches")
    def finds_every_case(self, answer):
        """'ana lima' finds Ana Lima in every case, and not Ána or Ana Limas"""
        self._check_matches(answer, "ana lima")

    @hidden(points=1, checks="matches")
    def finds_other_names(self, answer):
        """Other names: accents, doubled spaces, one word"""
        for name in ("JOSÉ SOUZA", "maria", "Bruno"):
            self._check_matches(answer, name)

    def _check_indexed(self, answer, name):
        spec, _, db, watched, _ = self._searched(answer, name)
        reads = [op for op in watched.ops() if op.kind == "read"]
        query, collation = reads[-1].argument("filter") or {}, reads[-1].kwargs.get("collation")
        if self.lab.backend.supports(Capability.SERVER_EXPLAIN):
            stages = _plan_indexes(db.customers.find(query, collation=collation).explain())
            if REFERENCE_INDEX not in stages:
                raise Incorrect(f"the server's plan for find({query!r:.80}, collation={collation!r}) does not use "
                                f"the index {REFERENCE_INDEX} {CASE_INSENSITIVE}: it scans "
                                f"{'the collection' if not stages else stages}")
            return
        why = rule_says(query, collation)
        if why:
            raise Incorrect(why)

    @visible(points=2, checks="indexed")
    def uses_the_index(self, answer):
        """The search's filter and collation let the index answer it"""
        self._check_indexed(answer, "ana lima")

    @hidden(points=1, checks="indexed")
    def uses_the_index_for_another(self, answer):
        """Another name"""
        self._check_indexed(answer, "JOSÉ SOUZA")


def _plan_indexes(explain: dict) -> list[str]:
    """The index names of the IXSCAN stages of a server's winning plan."""
    found, todo = [], [explain.get("queryPlanner", {}).get("winningPlan", {})]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if "IXSCAN" in str(node.get("stage", "")) and node.get("indexName"):
                found.append(node["indexName"])
            todo += [v for k, v in node.items() if k != "rejectedPlans" and isinstance(v, (dict, list))]
        elif isinstance(node, list):
            todo += node
    return found


def _condition_on_name(query: Any) -> Any:
    if not isinstance(query, dict) or "name" not in query:
        return None
    return query["name"]


def rule_says(query: Any, collation: Any) -> str:
    """"" when MongoDB's documented rule says the lesson's index serves ``find(query, collation=...)``,
    else why not (for the embedded engines, which have no planner)."""
    condition = _condition_on_name(query)
    if condition is None:
        return f"the filter {query!r:.80} does not test name, so no index on name can answer it"
    if isinstance(condition, re.Pattern) or (isinstance(condition, dict) and "$regex" in condition):
        return (f"the filter {query!r:.80} is a $regex: MongoDB cannot use an index efficiently for a "
                "case-insensitive regular expression (it reads every key, or every document); match the name by "
                "equality with the index's collation instead")
    if isinstance(condition, dict) and not (set(condition) <= {"$eq", "$in"}):
        return f"the filter on name, {condition!r:.80}, is not an equality: look the name up with it"
    index = normalised(CASE_INSENSITIVE)
    given = normalised(collation)
    if given is None:
        return (f"find({query!r:.80}) has no collation, so it compares names with the simple binary collation and "
                f"cannot use the index whose collation is {CASE_INSENSITIVE}: a find uses an index for string "
                "comparisons only when it names the index's collation")
    if given != index:
        differs = sorted(k for k in index if given.get(k) != index[k])
        return (f"the find's collation {collation!r} differs from the index's {CASE_INSENSITIVE} in "
                f"{', '.join(differs)}: MongoDB uses an index for string comparisons only when the operation "
                "specifies the same collation")
    return ""
