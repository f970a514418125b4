"""What lesson 04's checks share: seeded scratch databases and messages that name the first difference.

Seed data is built once (the generators are pure, so it is cached) and copied for each assertion, so no
assertion sees data an earlier one changed; set-up documents go in with one ``insert_many`` per collection.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Callable, Iterable

from course.engine.exercise import Exercise, Incorrect, LearnerRaised


@functools.cache
def _built(generator: Callable[..., Any], args: tuple, kwargs: tuple) -> Any:
    return generator(*args, **dict(kwargs))


def data(generator: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``generator(*args, **kwargs)`` (a pure function of hashable arguments), built once per process,
    returned as a fresh deep copy each time."""
    return copy.deepcopy(_built(generator, args, tuple(sorted(kwargs.items()))))


def seeded(lab: Any, **collections: Iterable[dict]) -> Any:
    """A fresh scratch database holding ``collections`` (name -> documents), one insert_many each."""
    db = lab.scratch()
    for name, documents in collections.items():
        documents = [dict(d) for d in documents]
        if documents:
            db[name].insert_many(documents)
    return db


def by_id(collection: Any, query: dict | None = None) -> list[dict]:
    """The documents of ``collection`` matching ``query``, in ``_id`` order."""
    return list(collection.find(query or {}).sort("_id", 1))


CHANGE = ("before", "after", "removed (it was {})", "added ({})")  #: wording for a change made by a call
COMPARE = ("expected", "found", "missing (expected {})", "not expected ({})")  #: wording for expected vs found


def first_difference(old: Any, new: Any, path: str = "", words: tuple = CHANGE) -> str | None:
    """Where ``new`` first differs from ``old``, as "path: X before, Y after" (``words`` COMPARE says
    "expected" and "found"); None when they are equal."""
    first, second, gone, extra = words
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (old, new))
    if type(old) is not type(new) and not numbers:
        return f"{path or 'the value'}: {old!r:.80} {first}, {new!r:.80} {second}"
    if isinstance(old, dict):
        for key in list(old) + [k for k in new if k not in old]:
            where = f"{path}.{key}" if path else str(key)
            if key not in new:
                return f"{where}: {gone.format(repr(old[key])[:60])}"
            if key not in old:
                return f"{where}: {extra.format(repr(new[key])[:60])}"
            found = first_difference(old[key], new[key], where, words)
            if found:
                return found
        return None
    if isinstance(old, list):
        if len(old) != len(new):
            return f"{path or 'the list'}: {len(old)} entries {first}, {len(new)} {second}"
        for k, (a, b) in enumerate(zip(old, new)):
            found = first_difference(a, b, f"{path}[{k}]", words)
            if found:
                return found
        return None
    return None if old == new else f"{path or 'the value'}: {old!r:.80} {first}, {new!r:.80} {second}"


def keyed(label: str, documents: Iterable[dict]) -> dict:
    """Documents by a readable key ("product 5": {...}), so a difference names the document."""
    return {f"{label} {d.get('_id')}": d for d in documents}


def as_list(name: str, value: Any) -> list:
    """A learner's returned list, cursor or other iterable of documents, as a list."""
    if isinstance(value, list):
        return value
    if isinstance(value, (dict, str, bytes)) or not hasattr(value, "__iter__"):
        raise Incorrect(f"{name} should return a list (or a cursor) of orders; got a {type(value).__name__}: "
                        f"{value!r:.80}")
    return list(value)


def pymongo_name(error: BaseException) -> str:
    """The name of pymongo's class that ``error`` is (``WriteError``, ``OperationFailure``...), as a learner on
    pymongo sees it: an embedded engine raises subclasses of its own (mongoeco's ``DocumentValidationFailure``)."""
    for kind in type(error).__mro__:
        if kind.__module__.split(".")[0] == "pymongo":
            return kind.__name__
    return type(error).__name__


def error_text(error: BaseException) -> str:
    """What an error says, for a message: its name and its own text, without the ``full error: {...}`` reply
    document pymongo appends to an OperationFailure (``error`` may be a :class:`LearnerRaised`)."""
    if isinstance(error, LearnerRaised):
        name, text = error.type_name, error.message
    else:
        details = getattr(error, "details", None)
        said = details.get("errmsg") if isinstance(details, dict) else None
        name, text = pymongo_name(error), str(said) if said else str(error)
    text = text.split(", full error: ")[0]
    return f"{name}: {text}" if text else name


def is_int(value: Any) -> bool:
    """True for an integer that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def ordered(values: Iterable[Any]) -> list:
    """``values`` sorted; by their text when they are of types that do not compare."""
    values = list(values)
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=repr)


class SharedRuns(Exercise):
    """An exercise whose assertions share learner runs within one evaluation.

    A run (the learner's function called on seeded data) is made once per evaluation and key; its
    resulting collections are kept, and every assertion that needs that state gets a fresh scratch
    copy of them, so no assertion sees data another one changed.  Nothing is kept between evaluations
    (the learner may have changed the function since).
    """

    _runs: dict

    def evaluate(self, namespace, *, include_hidden):
        """Run the assertions (see :meth:`Exercise.evaluate`), sharing runs only within this call."""
        self._runs = {}
        try:
            return super().evaluate(namespace, include_hidden=include_hidden)
        finally:
            self._runs = {}

    def replay(self, key: Any, collections: Iterable[str], run: Callable[[], Any]) -> Any:
        """A fresh scratch database holding ``collections`` as ``run()`` left them (run once per key)."""
        runs = getattr(self, "_runs", None)
        if runs is None:
            runs = self._runs = {}
        if key not in runs:  # the first assertion gets the run's own database, fresh as it is
            db = run()
            runs[key] = copy.deepcopy({name: list(db[name].find()) for name in collections})
            return db
        return seeded(self.lab, **copy.deepcopy(runs[key]))
