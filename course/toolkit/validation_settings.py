"""Changing a collection's validator, level or action on any backend that has validators.

A MongoDB server does it in place with ``collMod``.  mongoeco has no
``collMod``, so on it :func:`change_validation` does the documented
equivalent: it creates a new collection with the new options, copies every
document into it (``bypass_document_validation``, as ``collMod`` does not
re-check existing documents either), recreates every index with its options,
checks that the document count and the index set match, and only then drops
the old collection and renames the new one into its place.  If any check
fails the original is left untouched and the copy is dropped.

The copy is not atomic: writes made by another client while it runs would be
lost.  The in-process engines have no other client, which is why it is
acceptable there and only there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from course.store.capabilities import Capability

LEVELS = ("off", "strict", "moderate")
ACTIONS = ("error", "warn", "errorAndLog")
_UNSET: Any = object()
_COPY_SUFFIX = "__course_rebuild"
_INDEX_OPTIONS = ("unique", "sparse", "partialFilterExpression", "expireAfterSeconds", "collation",
                  "hidden", "weights", "default_language", "language_override")


def action_as_run(action: str, backend: Any) -> str:
    """The validationAction the checks apply for ``action`` on ``backend``: ``errorAndLog`` (MongoDB 8.1) refuses
    the writes ``error`` refuses and logs them too, so on a backend without it ``error`` stands in and every
    write a setting lets through or stops is still judged (only the log line is not seen, and no exercise
    asks for it)."""
    if action == "errorAndLog" and not backend.supports(Capability.VALIDATION_ERROR_AND_LOG):
        return "error"
    return action


class ValidationChangeError(RuntimeError):
    """The change could not be made; the collection was left as it was."""


@dataclass(frozen=True)
class ValidationChange:
    """What :func:`change_validation` did."""

    collection: str
    method: str  #: "collMod" or "rebuild"
    options: dict
    documents: int
    indexes: tuple[str, ...]

    def __str__(self) -> str:
        how = ("collMod (in place)" if self.method == "collMod"
               else "rebuilt: this engine has no collMod, so the collection was copied with the new "
                    "options, its indexes recreated and both checked before the swap")
        return (f"{self.collection}: validationLevel={self.options.get('validationLevel', 'strict')}, "
                f"validationAction={self.options.get('validationAction', 'error')}, "
                f"{self.documents} documents and {len(self.indexes)} indexes kept; {how}")


def validation_options(db: Any, name: str) -> dict:
    """The collection's current validator, validationLevel and validationAction (what is set)."""
    for info in db.list_collections(filter={"name": name}):
        options = info.get("options", {})
        return {k: options[k] for k in ("validator", "validationLevel", "validationAction") if k in options}
    raise ValidationChangeError(f"collection {db.name}.{name} does not exist")


def change_validation(db: Any, name: str, backend: Any, *, validator: Mapping | None = _UNSET,
                      level: str | None = None, action: str | None = None) -> ValidationChange:
    """Set the validator and/or validationLevel/validationAction of ``db[name]``.

    Pass ``validator={}`` to remove the validator.  Raises ValidationChangeError
    on a backend without validators, for unknown settings, or when a rebuild's
    checks fail (the collection is then unchanged).
    """
    if not backend.supports(Capability.VALIDATORS):
        raise ValidationChangeError(
            f"needs validators, which {backend.name} lacks: use Python >= 3.13 (mongoeco) or a MongoDB server")
    if level is not None and level not in LEVELS:
        raise ValidationChangeError(f"validationLevel must be one of {', '.join(LEVELS)}, not {level!r}")
    if action is not None and action not in ACTIONS:
        raise ValidationChangeError(f"validationAction must be one of {', '.join(ACTIONS)}, not {action!r}")
    options = validation_options(db, name)
    if validator is not _UNSET:
        options["validator"] = dict(validator or {})
    if level is not None:
        options["validationLevel"] = level
    if action is not None:
        options["validationAction"] = action
    if backend.supports(Capability.COLLMOD):
        db.command({"collMod": name, **options})
        return ValidationChange(name, "collMod", options, db[name].estimated_document_count(),
                                tuple(db[name].index_information()))
    return _rebuild(db, name, options)


def _index_models(collection: Any) -> list:
    from pymongo import IndexModel

    models = []
    for index_name, info in collection.index_information().items():
        if index_name == "_id_":
            continue
        extra = {k: info[k] for k in _INDEX_OPTIONS if k in info}
        models.append(IndexModel(list(info["key"]), name=index_name, **extra))
    return models


def _rename(db: Any, old: str, new: str) -> None:
    """Rename ``db[old]`` to ``new``; mongoeco's wire server takes renameCollection on the database itself."""
    from pymongo.errors import OperationFailure

    try:
        db[old].rename(new)
    except OperationFailure as error:
        if "current database" not in str(error):
            raise
        db.command({"renameCollection": f"{db.name}.{old}", "to": f"{db.name}.{new}"})


def _rebuild(db: Any, name: str, options: dict) -> ValidationChange:
    source = db[name]
    copy_name = name + _COPY_SUFFIX
    db.drop_collection(copy_name)
    db.create_collection(copy_name, **options)
    target = db[copy_name]
    try:
        batch: list = []
        for document in source.find({}).sort("_id", 1):
            batch.append(document)
            if len(batch) == 1000:
                target.insert_many(batch, ordered=True, bypass_document_validation=True)
                batch = []
        if batch:
            target.insert_many(batch, ordered=True, bypass_document_validation=True)
        models = _index_models(source)
        if models:
            target.create_indexes(models)
        wanted, copied = source.count_documents({}), target.count_documents({})
        if wanted != copied:
            raise ValidationChangeError(f"the copy holds {copied} documents, the original {wanted}")
        if sorted(source.index_information()) != sorted(target.index_information()):
            raise ValidationChangeError("the copy's indexes differ from the original's")
    except Exception as error:
        db.drop_collection(copy_name)
        if isinstance(error, ValidationChangeError):
            raise ValidationChangeError(f"{db.name}.{name} left unchanged: {error}") from None
        raise ValidationChangeError(f"{db.name}.{name} left unchanged: {type(error).__name__}: {error}") from error
    indexes = tuple(target.index_information())
    db.drop_collection(name)
    _rename(db, copy_name, name)
    return ValidationChange(name, "rebuild", options, copied, indexes)
