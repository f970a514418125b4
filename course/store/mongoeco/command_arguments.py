"""pymongo's call signatures where mongoeco's differ (quirks absorbed by :mod:`course.store.quirks`).

**Database.command.**  pymongo's is ``command(command, value=1, check=True, allowable_errors=None,
read_preference=None, codec_options=None, session=None, comment=None, **kwargs)``: a command named by a
string takes its value positionally (``db.command("dropIndexes", "products", index="category_1")``,
``db.command("collStats", "readings")``) and keyword arguments are added to the command, a mapping's too.
mongoeco's takes no value (TypeError: "takes 2 positional arguments but 3 were given") and refuses keyword
arguments with a mapping.  :func:`command_value_positional` builds the command document as pymongo does
(``{name: value, **kwargs}``, ``comment`` added) and hands it to mongoeco; ``check=False`` returns the
error document instead of raising, as pymongo does.

**Collection.rename.**  pymongo's is ``rename(new_name, session=None, comment=None, **kwargs)``, the keyword
arguments sent with the ``renameCollection`` command (``dropTarget=True`` drops an existing target first);
mongoeco's takes no keyword but ``session``.  :func:`rename_options` drops the target when ``dropTarget`` is
true, accepts ``comment`` and ``writeConcern``, and refuses another field as a server does (code 40415).

**Collation objects.**  pymongo takes a ``pymongo.collation.Collation`` wherever it takes a collation and
sends its ``.document``; mongoeco takes only a document ("collation must be a document").
:func:`collation_as_document` turns a ``Collation`` keyword into its document before mongoeco sees it
(``course.store.quirks`` does the same in the ``aggregate``, ``create_index`` and ``create_collection`` it already
patches).
"""

from __future__ import annotations

from typing import Callable

from course.store.patch_check import written_for


def collation_document(kwargs: dict) -> dict:
    """``kwargs`` with a ``Collation`` object under ``collation`` replaced by its document (pymongo's
    ``validate_collation_or_none``)."""
    collation = kwargs.get("collation")
    if collation is not None and not isinstance(collation, dict) and hasattr(collation, "document"):
        from pymongo.collation import Collation

        if isinstance(collation, Collation):
            kwargs["collation"] = collation.document
    return kwargs


@written_for("0ed13d5f84c7afe9")  # the source digest of mongoeco 4.11's sync Database.command
def command_value_positional(original: Callable) -> Callable:
    """``Database.command`` with pymongo's signature (module docstring)."""
    from mongoeco.errors import OperationFailure

    def command(self, command, value=1, check=True, allowable_errors=None, read_preference=None,
                codec_options=None, session=None, comment=None, **kwargs):
        document = {command: value} if isinstance(command, str) else command
        if kwargs or comment is not None:
            document = {**document, **kwargs}
            if comment is not None:
                document["comment"] = comment
        if check:
            return original(self, document, session=session)
        try:
            return original(self, document, session=session)
        except OperationFailure as failure:
            return failure.details or {"ok": 0.0, "errmsg": str(failure), "code": failure.code}

    return command


_RENAME_FIELDS = {"dropTarget", "writeConcern"}  #: renameCollection fields a keyword of rename may carry


@written_for("f12a7c822df48f38")  # the source digest of mongoeco 4.11's sync Collection.rename
def rename_options(original: Callable) -> Callable:
    """``Collection.rename`` with pymongo's keyword arguments (module docstring)."""
    from mongoeco.errors import OperationFailure

    def rename(self, new_name, session=None, comment=None, **kwargs):
        for field in kwargs:
            if field not in _RENAME_FIELDS:
                raise OperationFailure(f"BSON field 'renameCollection.{field}' is an unknown field.", code=40415)
        if kwargs.get("dropTarget") and isinstance(new_name, str) and new_name != self.name \
                and self.name in self.database.list_collection_names(session=session) \
                and new_name in self.database.list_collection_names(session=session):
            self.database.drop_collection(new_name, session=session)
        return original(self, new_name, session=session)

    return rename


@written_for("b6016044d5b34f4a", "30ba46a29880103f", "a45205daf8028b52", "c30df330361369c8", "e6f452b229d22a0b",
             "1cd52f543ce46662", "2707e27b1eebed76", "d6d4546e1bb545d0", "df1fe340377c137a", "bb32a8f33caffa94",
             "5f8d4d5b17c05670", "9077fc7083fbe724")  # mongoeco 4.11's sync Collection methods of COLLATED
def collation_as_document(original: Callable) -> Callable:
    """A ``Collection`` method taking ``collation=``, also taking a pymongo ``Collation``."""

    def method(self, *args, **kwargs):
        return original(self, *args, **collation_document(kwargs))

    return method


#: the sync Collection methods taking collation= that course.store.quirks does not already patch
COLLATED = ("find", "find_one", "count_documents", "distinct", "update_one", "update_many", "delete_one",
            "delete_many", "replace_one", "find_one_and_update", "find_one_and_replace", "find_one_and_delete")


def patches() -> list[tuple]:
    """The (owner, attribute, patch maker) triples this module adds to :func:`course.store.quirks.absorb` for mongoeco."""
    from mongoeco.api._sync.client import Database
    from mongoeco.api._sync.collection import Collection

    return [(Database, "command", command_value_positional), (Collection, "rename", rename_options),
            *((Collection, name, collation_as_document) for name in COLLATED)]
