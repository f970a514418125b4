"""What lesson 06's checks share: a fresh part of the legacy shop, one run of the repair, the audit of one kind.

Every exercise repairs one finding of the legacy shop
(:mod:`course.datasets.legacy_shop`).  Its checks seed the collections that
finding lives in (the shop is built once per size and seed; seeding only the
collections a repair touches keeps a check fast on the embedded engines), run
the application's reads, call the learner's repair, run the reads again, and
rerun the audit of that one kind.  Within one evaluation the run is made once
per data variant and shared by the assertions that only read what it left.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable

from course.store.capabilities import Capability
from course.toolkit.census import bson_type_of
from course.datasets.legacy_shop import Shop, legacy_shop, load_shop
from course.engine.exercise import Exercise, Incorrect, LearnerCodeError, LearnerRaised, Unsupported
from course.lessons.lesson04.common import error_text
from course.lessons.lesson06.text import clipped


@functools.cache
def _built(sizes: tuple) -> Shop:
    return legacy_shop(**dict(sizes))


def shop_part(names: Iterable[str], **sizes: int) -> Shop:
    """The legacy shop (built with ``sizes``, see :func:`legacy_shop`) reduced to the collections ``names``."""
    return copy.deepcopy(_built(tuple(sorted(sizes.items()))).only(names))


def audit_kind(db: Any, backend: Any, kind: str) -> list:
    """The findings of ``kind`` the audit reports for ``db`` (an empty list when it reports none)."""
    from course.audit import audit

    return audit(db, backend=backend, kinds=[kind]).of_kind(kind)


def plain_state(db: Any) -> dict:
    """Every collection of ``db``: its documents in ``_id`` order and its index keys, as plain data."""
    state = {}
    for name in sorted(db.list_collection_names()):
        documents = sorted(db[name].find({}), key=lambda d: repr(d.get("_id")))
        indexes = {k: [list(p) for p in v["key"]] for k, v in db[name].index_information().items()}
        state[name] = {"documents": documents, "indexes": indexes}
    return state


def first_change(old: Any, new: Any, path: str = "") -> str | None:
    """Where ``new`` first differs from ``old``, in words; None if equal.

    Values compare by their BSON type too (:func:`course.toolkit.census.bson_type_of`: an Int64, or an int past
    int32, is a long), so a counter that became a double is a difference and a long read back through
    pymongo as an Int64 is not.
    """
    where = path or "the value"
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in new:
                return f"{sub} is gone (it was {clipped(old[key], 60)})"
            if key not in old:
                return f"{sub} appeared ({clipped(new[key], 60)})"
            found = first_change(old[key], new[key], sub)
            if found:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return f"{where}: {len(old)} entries before, {len(new)} after"
        for k, (a, b) in enumerate(zip(old, new)):
            found = first_change(a, b, f"{path}[{k}]")
            if found:
                return found
        return None
    if bson_type_of(old) != bson_type_of(new) or old != new:
        return f"{where}: {clipped(old, 60)} before, {clipped(new, 60)} after"
    return None


@dataclass
class Run:
    """One call of the learner's repair on a freshly seeded shop."""

    db: Any
    seeded: Shop  #: what was seeded
    before: dict  #: the reads before the repair
    after: dict  #: the same reads after it
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Variant:
    """The data a check seeds: the shop's sizes and seed, and an optional change made to it first."""

    label: str
    sizes: tuple = ()
    tweak: str = ""  #: the name of an exercise method ``(shop) -> None`` that changes the seeded shop

    def size(self) -> dict:
        """The keyword arguments for :func:`legacy_shop`."""
        return dict(self.sizes)


class Repair(Exercise):
    """An exercise whose answer is one function ``repair(db)`` that repairs one finding of the legacy shop.

    Subclasses set :attr:`function` (the answer's name), :attr:`kind` (the audit kind it repairs),
    :attr:`collections` (what to seed) and define ``reads_before(db)`` and ``reads_after(db)``: the
    application's reads in the old shape and in the repaired one, each returning plain data.
    """

    function: ClassVar[str]
    kind: ClassVar[str]
    collections: ClassVar[tuple[str, ...]]
    _shared: Run | None = None
    _shared_key: Any = None
    _scenarios: dict = {}

    def evaluate(self, namespace, *, include_hidden):
        """Run the assertions (see :meth:`Exercise.evaluate`), sharing one run per variant within this call
        (and, in :attr:`_scenarios`, whatever else a subclass makes once per variant)."""
        self._shared, self._shared_key, self._scenarios = None, None, {}
        try:
            return super().evaluate(namespace, include_hidden=include_hidden)
        finally:
            self._shared, self._shared_key, self._scenarios = None, None, {}

    # ---- what subclasses provide -------------------------------------------------
    def reads_before(self, db: Any) -> dict:  # pragma: no cover - every exercise overrides it
        """The application's reads on the legacy shape."""
        raise NotImplementedError

    def reads_after(self, db: Any) -> dict:  # pragma: no cover - every exercise overrides it
        """The same reads on the repaired shape."""
        raise NotImplementedError

    # ---- running the repair ----------------------------------------------------------
    def seed(self, variant: Variant) -> tuple[Any, Shop]:
        """A fresh scratch database holding the variant's part of the legacy shop."""
        shop = shop_part(self.collections, **variant.size())
        if variant.tweak:
            getattr(self, variant.tweak)(shop)
        db = self.lab.scratch()
        load_shop(db, shop, validators=self.lab.backend.supports(Capability.VALIDATORS))
        return db, shop

    def repair(self, answer: Any, db: Any) -> Any:
        """Call the learner's function on ``db``.

        mongomock answers an update pipeline or an aggregation expression it does not implement with an
        ``OperationFailure`` ("Unrecognized expression ..."), not NotImplementedError: that is its limit,
        reported as "needs ...", never as the learner's error.
        """
        try:
            return self.call(self.function, getattr(answer, self.function), db)
        except LearnerCodeError as error:
            raised = error.raised
            if (raised is not None and self.lab.backend.name == "mongomock" and raised.is_a("OperationFailure")
                    and "Unrecognized expression" in raised.message):
                raise Unsupported(feature=f"an aggregation expression mongomock does not implement "
                                          f"({raised.message[:120]})") from None
            raise

    def run(self, answer: Any, variant: Variant) -> Run:
        """The variant seeded, read, repaired and read again (made once per evaluation and variant)."""
        if self._shared is not None and self._shared_key == variant:
            return self._shared
        self._shared, self._shared_key = None, None
        db, shop = self.seed(variant)
        before = self.reads_before(db)
        self.repair(answer, db)
        run = Run(db, shop, before, self._reads_after(db))
        self._shared, self._shared_key = run, variant
        return run

    def _reads_after(self, db: Any) -> dict | str:
        try:
            return self.reads_after(db)
        except Exception as error:  # the repaired shape cannot be read the new way: say so where it matters
            return error_text(error)

    def forget(self) -> None:
        """Drop the shared run (an assertion that changed its data calls this)."""
        self._shared, self._shared_key = None, None

    # ---- judging -----------------------------------------------------------------------
    def check_audit(self, run: Run, advice: str) -> None:
        """The audit of :attr:`kind` reports nothing any more."""
        found = audit_kind(run.db, self.lab.backend, self.kind)
        if found:
            raise Incorrect(f"after {self.function}(db) the audit still reports {self.kind}: {found[0].summary}"
                            f"{advice}")

    def check_reads(self, run: Run, advice: str = "", only: Any = None) -> None:
        """Each read (of ``only``'s names, when given) gives the same answer after the repair (in the new shape)
        as before (in the old)."""
        if isinstance(run.after, str):
            raise Incorrect(f"after {self.function}(db) the application's reads fail ({run.after}){advice}")
        for name, old in run.before.items():
            if only is not None and name not in only:
                continue
            new = run.after.get(name)
            difference = first_change(old, new)
            if difference:
                raise Incorrect(f"after {self.function}(db) the read {name!r} gives another answer ({difference})"
                                f"{advice}")

    def check_twice(self, answer: Any, variant: Variant, advice: str) -> None:
        """A second call, on what the first left, raises nothing and changes nothing."""
        run = self.run(answer, variant)
        once = plain_state(run.db)
        self.forget()
        raised = self.call(self.function, getattr(answer, self.function), run.db, expect_raise=True)
        if isinstance(raised, LearnerRaised):
            raise Incorrect(f"running {self.function}(db) a second time raised {error_text(raised)}{advice}")
        difference = first_change(once, plain_state(run.db))
        if difference:
            raise Incorrect(f"running {self.function}(db) a second time changed the database ({difference})"
                            f"{advice}")


def by_id(collection: Any, query: dict | None = None, projection: Any = None) -> list[dict]:
    """The documents of ``collection`` matching ``query``, in ``_id`` order."""
    return list(collection.find(query or {}, projection).sort("_id", 1))

