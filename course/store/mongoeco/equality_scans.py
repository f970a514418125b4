"""mongoeco's equality filters and unique checks on plain fields at the cost of a comparison, not of a full
match (quirks absorbed by :mod:`course.store.quirks`).

**Filters.**  A find, update, upsert or delete whose filter is an equality on fields that no single-field
index serves (``{"customer_id": 7, "order_no": 1042}``) reads every document of the collection, as a
server's collection scan does; but mongoeco matches each document through its whole query machinery, some
ten microseconds a document.  A loop of such upserts is quadratic in that cost: lesson 06's repair by
idempotent upserts, 804 of them, took 2 s in-process, and the lab's own shop (11,918 entries) minutes.
:func:`equal_fields_compared_first` answers "no match" at once for a document whose top-level field holds
a ``str`` or an ``int`` of the same type as the filter's value and another value, or does not hold the field
at all: those are the only cases it decides, and in each of them a server answers the same; every other
document (a number of another type, an array, a date, a string under a collation, ...) goes through the
engine's own match, so no result changes.

**Unique indexes.**  Each write to a collection with a compound unique index (``[("customer_id", 1),
("order_no", 1)]``, what makes an upsert by those fields safe to retry) compares the written document with
every stored one, computing both documents' index keys each time (17 s for the same 804 upserts).
:func:`unique_keys_compared_first` decides "no conflict" at once when one of the index's top-level fields
holds a ``str`` or an ``int`` in both documents, of the same type and different (or in one of them only),
and otherwise leaves the comparison to the engine, so the same duplicate is refused with the same error.

**Compound indexes.**  mongoeco looks a filter's candidates up in single-field indexes only: with an index
on ``(customer_id, order_no)`` an upsert by those two fields still reads every document.
:func:`compound_equalities_looked_up` looks such a filter up in the compound index when every field of the
index is a top-level field the filter compares, by equality, with a ``str`` or an ``int``, and the index
holds no document with an array in those fields (:func:`array_keys_remembered` marks an index map the
moment a key holding an array enters it, and its copies keep the mark: an array field matches by any of
its elements, which the compound map does not list).  The engine then matches the candidates as before.
"""

from __future__ import annotations

from typing import Any, Callable

from course.store.patch_check import written_for

_PLAIN = (str, int)  #: the types decided here (exact types: a bool or a long is left to the engine)
_ABSENT = object()


def _differ(first: Any, second: Any, *, strings: bool = True) -> bool:
    """True when two top-level field values (``_ABSENT`` for a missing field) are certainly not equal in BSON:
    both plain and of the same type with different values, or only one of them present and plain."""
    kinds = (str, int) if strings else (int,)
    if first is _ABSENT or second is _ABSENT:
        present = second if first is _ABSENT else first
        return present is not _ABSENT and type(present) in kinds
    return type(first) is type(second) and type(first) in kinds and first != second


def _top_level(field: Any) -> bool:
    return isinstance(field, str) and "." not in field and not field.startswith("$")


@written_for("49e0fdfe741e6069")  # the source digest of mongoeco 4.11's QueryEngine.match_plan
def equal_fields_compared_first(original: Callable) -> Callable:
    """``QueryEngine.match_plan``, answering False at once where a top-level equality certainly fails."""
    from mongoeco.core.query_plan import AndCondition, EqualsCondition

    known: dict[int, tuple[Any, tuple]] = {}  #: id(plan) -> (plan, its (field, value) pairs decided here)

    def decided(plan: Any) -> tuple:
        entry = known.get(id(plan))
        if entry is not None and entry[0] is plan:
            return entry[1]
        clauses = (plan,) if type(plan) is EqualsCondition else plan.clauses if type(plan) is AndCondition else ()
        pairs = tuple((c.field, c.value) for c in clauses
                      if type(c) is EqualsCondition and _top_level(c.field) and type(c.value) in _PLAIN)
        if len(known) > 256:
            known.clear()
        known[id(plan)] = (plan, pairs)  # the plan is held, so its id is not reused while it is known
        return pairs

    def match_plan(document, plan, *args, **kwargs):
        if isinstance(document, dict):
            strings = kwargs.get("collation") is None
            for field, value in decided(plan):
                if _differ(value, document.get(field, _ABSENT), strings=strings):
                    return False
        return original(document, plan, *args, **kwargs)

    return match_plan


@written_for("571c0c31dd32c6bb")  # the source digest of mongoeco 4.11's MemoryEngine._unique_index_conflict
def unique_keys_compared_first(original: Callable) -> Callable:
    """``MemoryEngine._unique_index_conflict``, answering "no conflict" at once where a top-level field of the
    index certainly differs."""

    def _unique_index_conflict(self, candidate, existing, index):
        if index.get("collation") is None and isinstance(candidate, dict) and isinstance(existing, dict):
            for field in index.get("fields") or ():
                if _top_level(field) and _differ(candidate.get(field, _ABSENT), existing.get(field, _ABSENT)):
                    return None
        return original(self, candidate, existing, index)

    return _unique_index_conflict


_ARRAYS = "_course_holds_array_keys"  #: set on an index map once a key holding an array has entered it


def _holds_array(key: Any) -> bool:
    """True when an index key (a tuple of equality keys) has an array in it (mongoeco tags those ``list``)."""
    return isinstance(key, tuple) and any(isinstance(part, tuple) and part[:1] == ("list",) for part in key)


@written_for("e07fa5d11a2d650b")  # the source digest of mongoeco 4.11's MemoryIndexMap.add
def array_keys_remembered(original: Callable) -> Callable:
    """``MemoryIndexMap.add``, marking the map when the key it adds holds an array (the mark is never cleared)."""

    def add(self, key, storage_key, *args, **kwargs):
        if not self.__dict__.get(_ARRAYS) and _holds_array(key):
            self.__dict__[_ARRAYS] = True
        return original(self, key, storage_key, *args, **kwargs)

    return add


def _mark_kept(original: Callable) -> Callable:
    def copied(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        if self.__dict__.get(_ARRAYS):
            result.__dict__[_ARRAYS] = True
        return result

    return copied


@written_for("9987fb396e17e2d6")  # the source digest of mongoeco 4.11's MemoryIndexMap.copy
def copies_keep_the_mark(original: Callable) -> Callable:
    """``MemoryIndexMap.copy``, the copy marked as holding array keys when the map is."""
    return _mark_kept(original)


@written_for("051dc2f1320bdfd1")  # the source digest of mongoeco 4.11's MemoryIndexMap.__deepcopy__
def deep_copies_keep_the_mark(original: Callable) -> Callable:
    """``MemoryIndexMap.__deepcopy__``, the copy marked as holding array keys when the map is."""
    return _mark_kept(original)


@written_for("29ed2fa5c841d3d9")  # mongoeco 4.11's MemoryEngine._indexed_candidate_storage_keys_for_plan_locked
def compound_equalities_looked_up(original: Callable) -> Callable:
    """``MemoryEngine._indexed_candidate_storage_keys_for_plan_locked``, also using a compound index (module
    docstring) where the engine would use none."""
    from mongoeco.core.query_plan import AndCondition, EqualsCondition
    from mongoeco.engines._memory_collection import MemoryIndexMap
    from mongoeco.engines.memory import _MemoryIndexedCandidates
    from mongoeco.engines.virtual_indexes import query_can_use_index

    def _indexed_candidate_storage_keys_for_plan_locked(self, indexes, index_data, query_plan, *, dialect,
                                                        collation):
        found = original(self, indexes, index_data, query_plan, dialect=dialect, collation=collation)
        if found is not None or collation is not None or type(query_plan) is not AndCondition:
            return found
        equal = {c.field: c.value for c in query_plan.clauses
                 if type(c) is EqualsCondition and _top_level(c.field) and type(c.value) in _PLAIN}
        for index in indexes:
            fields = index.get("fields") or [name for name, _ in index.get("key", ())]
            index_map = index_data.get(index.get("name"))
            if len(fields) < 2 or not all(field in equal for field in fields) or index.get("collation") \
                    or not isinstance(index_map, MemoryIndexMap) or index_map.__dict__.get(_ARRAYS) \
                    or not query_can_use_index(index, query_plan, dialect=dialect, collation=collation):
                continue
            key = tuple(self._index_equality_key(equal[field]) for field in fields)
            return _MemoryIndexedCandidates(index_map.get(key, set()), index_map=index_map, index_key=key)
        return None

    return _indexed_candidate_storage_keys_for_plan_locked


def patches() -> list[tuple]:
    """The (owner, attribute, patch maker) pairs this module adds to :func:`course.store.quirks.absorb` for mongoeco."""
    from mongoeco.core.filtering import QueryEngine
    from mongoeco.engines._memory_collection import MemoryIndexMap
    from mongoeco.engines.memory import MemoryEngine

    return [(QueryEngine, "match_plan", equal_fields_compared_first),
            (MemoryEngine, "_unique_index_conflict", unique_keys_compared_first),
            (MemoryIndexMap, "add", array_keys_remembered),
            (MemoryIndexMap, "copy", copies_keep_the_mark),
            (MemoryIndexMap, "__deepcopy__", deep_copies_keep_the_mark),
            (MemoryEngine, "_indexed_candidate_storage_keys_for_plan_locked", compound_equalities_looked_up)]
