"""Backend quirks the course absorbs, declared once, beside :mod:`course.capabilities`.

A quirk is a place where an embedded engine behaves differently from a MongoDB
server on a call that a correct answer may well make.  Where the difference
can be removed without hiding anything a lesson teaches, the course removes it
here, when the backend is opened, so that no learner ever meets it; where it
cannot, the backend lacks a capability (see :mod:`course.capabilities`) and
the exercise reports "needs ...".

``QUIRKS`` lists them for ``course doctor`` and the README; ``absorb(name)``
applies those of one backend (idempotent: a class is patched once).

Every patch first checks that the function it replaces is the one it was written
for (:mod:`course.patch_check`: each maker carries the source digest of its
target, for the releases pyproject.toml pins), and raises ``PatchMismatch``
instead of patching another release's function.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from course.patch_check import check_absent, check_replaced, written_for

#: backend name -> what the course does about each of its quirks
QUIRKS: dict[str, tuple[str, ...]] = {
    "mongoeco": (
        "an aggregate ending in $merge or $out runs only when its cursor is read (a server runs it when "
        "aggregate is called): the course reads the cursor at once",
        "$out is not implemented: the course runs the pipeline and replaces the target collection's "
        "documents with its results, as $out does on a server (indexes kept)",
        "cursors are iterables but not iterators, so next(cursor) raises TypeError: the course gives "
        "find() and aggregate() cursors __next__ and next(), as pymongo's have",
        "create_index() takes snake_case options only (partial_filter_expression=...): the course also "
        "accepts pymongo's camelCase spelling (partialFilterExpression=, expireAfterSeconds=, ...)",
        "the $type aggregation expression reports a small Int64 as 'int': the course reports 'long', "
        "as a server does",
        "$jsonSchema enum refuses an Int64 equal to a listed number: the course compares numbers by "
        "value, as a server does",
        "$jsonSchema ignores exclusiveMinimum/exclusiveMaximum: true (draft 4): the course refuses "
        "a value equal to the bound, as a server does",
        "$jsonSchema accepts format, $ref, $schema, default, definitions and id, which a server refuses when "
        "the validator is set (the manual's $jsonSchema omissions): the course refuses them too",
        "cursors cannot be sliced (find()[a:b]) or indexed: the course gives them pymongo's slicing "
        "(skip and limit) and indexing",
        "through its wire server, an aggregate ending in $out fails: the server-side course code clears "
        "the target and merges the results into it, as $out does",
        "session.start_transaction() returns None, so `with session.start_transaction():` fails, and "
        "sessions have no end_session(): the course returns pymongo's context manager (commit on "
        "success, abort on an exception) and adds end_session()",
        "a validator holding tuples (enum: CATEGORIES) is refused, where BSON would send arrays: the "
        "course passes lists, as pymongo's encoding does",
        "$toLong and $convert to 'long' return a small value as an int, and an update pipeline or $merge "
        "that changes only a value's numeric type (5 to 5L, 5.0 to 5L) writes nothing: the course returns "
        "a long and writes the new type, as a server does",
        "drop_index(keys) finds the index by its keys, where pymongo drops the index of the default name "
        "(category_1) and a server answers IndexNotFound for an index named otherwise: the course drops by "
        "that name, as pymongo does",
        "$inc narrows its result to the smallest type that holds it (a long plus 0 becomes an int): the "
        "course keeps the wider operand's type (an int plus a long is a long), as a server does",
        "through its wire server, an insert command stores its documents one at a time, each compared with "
        "every stored document (0.6 s for 300 products, ten times the engine's own insert_many): the course "
        "inserts them as one batch, and a document that fails, with those after it, as the server does",
        "insert_one compares the new _id with every stored _id (seconds for a loop of a few thousand "
        "inserts): for an ObjectId or string _id, which only an identical key can equal, the course looks "
        "the key up instead",
        "its document encoder validates a value again at every level it is nested in, and tests a plain "
        "string or number against some thirty types (2 s of the 3 s lesson 06's shop takes to load): the "
        "course validates each document once and returns a plain scalar as it is, with the same result "
        "and the same errors",
        "a unique index built on a collection compares every document with each one before it, working out "
        "both documents' keys again each time (over a second for 300 customers): the course works each "
        "document's keys out once per build and keeps the comparisons, so the same duplicate is refused",
        "a find, update or delete by an _id that is not stored reads every document of the collection (a loop of "
        "upserts of new _ids is quadratic: 17 s for lesson 06's 800): for an ObjectId or string _id, which only "
        "an identical key can equal, the course answers 'no document' from the key; for a document _id "
        "({customer_id: 7, order_no: 1042}; 1,000 replace_one upserts took 24 s), it compares the stored keys and "
        "hands the engine only the documents whose _id may equal it (same fields in the same order, numbers by "
        "value), for the lookup and for the insert's duplicate check",
        "a database has no client attribute, so db.client is taken for a collection named 'client' "
        "(db.client.drop_database(...) fails with 'Collection' object is not callable): the course gives "
        "databases pymongo's client attribute",
        "at import it loads shapely, numpy, cxp and jsonschema, for geospatial queries, vector search and its "
        "capability catalogue, which no lesson's start needs: the course loads each when it is first used "
        "(course/engine_imports.py), and skips jsonschema's format checkers, which $jsonSchema ignores",
        "a find, update, upsert or delete by equality on unindexed fields matches every document through its "
        "whole query machinery (minutes for lesson 06's repair of 804 upserts over the lab's shop): the course "
        "answers 'no match' at once for a document holding another str or int, or not the field, and leaves "
        "every other document to the engine",
        "each write to a collection with a compound unique index compares the document with every stored one, "
        "working out both keys each time (17 s for 804 upserts): the course decides 'no conflict' at once when "
        "a top-level str or int field of the index differs, and leaves the rest to the engine's own check",
        "a filter is looked up in single-field indexes only, so an upsert by (customer_id, order_no) reads every "
        "document even with that compound index: the course looks such an equality up in the compound index "
        "while the index holds no array in those fields",
        "$merge accepts only on: '_id' (\"$merge currently supports only omitted on or on: '_id'\"): the course "
        "merges on any fields a unique index of the target covers, with a server's errors (51183 no such index, "
        "51132 a missing or array on field, 13113 whenNotMatched: fail, 11000 whenMatched: fail)",
        "db[name] and db.get_collection(name) take any name: db[None] writes a collection named None, after which "
        "dropping or listing the database fails inside the engine ('<' not supported between 'str' and "
        "'NoneType'): the course refuses a name that is not a str with pymongo's TypeError (\"name must be an "
        "instance of str\")",
        "a long held as a Python int (2147483648 after an $inc past int32, a $sum, an int past int32 a learner "
        "inserted) comes back from find or aggregate as an int, where pymongo decodes every BSON long as Int64 "
        "($type says 'long'): the course returns it as an Int64 (course/numeric_types.py)",
        "$add, $subtract, $multiply, $sum and $mul of an int and a long give an int when the result fits one: the "
        "course gives a long, the wider type, as a server does",
        "an $inc past int64 raises mongoeco's own BsonScalarOverflowError: the course raises the server's error "
        "(code 2, 'Failed to apply $inc operations to current value ((NumberLong)...) for document {_id: ...}'), "
        "a WriteError from update_one as pymongo's",
        "Database.command takes no positional value (db.command('dropIndexes', 'products', index='category_1') "
        "raises TypeError) nor keyword arguments with a mapping: the course takes pymongo's signature "
        "(course/command_arguments.py)",
        "Collection.rename takes no keyword arguments (dropTarget=True raises TypeError): the course takes "
        "pymongo's, dropping an existing target for dropTarget",
        "a pymongo Collation object is refused wherever a collation is taken ('collation must be a document'): "
        "the course passes its document, as pymongo sends it",
    ),
    "mongomock": (
        "index keys given as a dict raise TypeError: the course passes them as a list of pairs",
        "index_information() returns IndexModel keys as dict_items: the course returns lists of pairs",
        "bulk_write with pymongo >= 4.11 operations raises TypeError (the new 'sort' argument): "
        "the course accepts operations without a sort",
        "an empty cursor slice (find()[3:3]) returns everything from 3 on: the course returns nothing, "
        "as pymongo does",
        "an array literal in an aggregation expression (['$_id']) is returned unevaluated: the course "
        "evaluates each element, as a server does",
        "$inc of an Int64 gives a plain int (an int plus a long, even a long plus 0): the course stores a long, "
        "as a server does",
    ),
}

_PATCHED = "_course_quirk_absorbed"


def _writes_output(pipeline: Any) -> bool:
    """True when ``pipeline``'s last stage is ``$merge`` or ``$out``."""
    if not isinstance(pipeline, (list, tuple)) or not pipeline:
        return False
    last = pipeline[-1]
    return isinstance(last, dict) and bool({"$merge", "$out"} & set(last))


Patch = tuple  #: (owner, attribute name, patch maker): ``owner.name`` becomes ``make(owner.name)``


def _check(package: str, patches: list[Patch], added: tuple[tuple[Any, str], ...] = ()) -> None:
    """Check every patch not yet applied, and every attribute the course adds, before anything is patched
    (so that a mismatch leaves the package as it was): raises ``PatchMismatch``."""
    for owner, name, make in patches:
        original = getattr(owner, name)
        if not getattr(original, _PATCHED, False):
            check_replaced(original, make, package, _name(owner, name))
    for owner, name in added:
        current = getattr(owner, name, None)
        if not getattr(getattr(current, "fget", current), _PATCHED, False):
            check_absent(owner, name, package)


def _patch(owner: Any, name: str, make: Callable[[Callable], Callable], package: str = "mongoeco") -> None:
    """Replace ``owner.name`` with ``make(original)``, once, after checking it is what ``make`` was written for."""
    original = getattr(owner, name)
    if getattr(original, _PATCHED, False):
        return
    check_replaced(original, make, package, _name(owner, name))
    replacement = functools.wraps(original)(make(original))
    setattr(replacement, _PATCHED, True)
    setattr(owner, name, replacement)


def _name(owner: Any, name: str) -> str:
    """``Owner.name`` (a class's qualified name, or a module's last component)."""
    return f"{getattr(owner, '__qualname__', owner.__name__.rsplit('.', 1)[-1])}.{name}"


def _ours(function: Callable) -> Callable:
    """``function``, marked as the course's (an attribute the course adds)."""
    setattr(function, _PATCHED, True)
    return function


def _out_target(self: Any, stage: Any) -> Any:
    """The collection a ``$out`` stage names (a name, or ``{"db": ..., "coll": ...}``)."""
    if isinstance(stage, dict):
        return self.database.client[stage.get("db", self.database.name)][stage["coll"]]
    return self.database[stage]


@written_for("aa9d8a9e29eafac7")
def _eager_output_stage(original: Callable) -> Callable:
    from course.command_arguments import collation_document

    def aggregate(self, pipeline, *args, **kwargs):
        kwargs = collation_document(kwargs)
        if _writes_output(pipeline) and "$out" in pipeline[-1]:
            results = list(original(self, list(pipeline[:-1]), *args, **kwargs))
            target = _out_target(self, pipeline[-1]["$out"])
            target.delete_many({})
            if results:
                target.insert_many(results)
            return original(self, [{"$match": {"$expr": False}}])  # what a server returns: no documents
        cursor = original(self, pipeline, *args, **kwargs)
        if _writes_output(pipeline):
            for _ in cursor:  # a $merge/$out pipeline returns no documents; reading it runs the stage
                pass
        return cursor

    return aggregate


def _key_pairs(keys: Any) -> Any:
    """Index keys as a list of (field, direction) pairs when they came as a mapping or dict_items."""
    if isinstance(keys, dict) or type(keys).__name__ == "dict_items":
        return list(dict(keys).items())
    return keys


@written_for("d0a71299f9569c86")
def _keys_as_pairs(original: Callable) -> Callable:
    def create_index(self, key_or_list, *args, **kwargs):
        return original(self, _key_pairs(key_or_list), *args, **kwargs)

    return create_index


@written_for("5f99fe629ff42b8e")
def _information_as_pairs(original: Callable) -> Callable:
    def index_information(self, *args, **kwargs):
        info = original(self, *args, **kwargs)
        for spec in info.values():
            if "key" in spec:
                spec["key"] = list(_key_pairs(spec["key"]))
        return info

    return index_information


@written_for("d5a4a4a7f03b1608", "52322472cc35f7d4")
def _accepts_no_sort(original: Callable) -> Callable:
    def add(self, *args, sort=None, **kwargs):
        if sort is not None:
            raise NotImplementedError("mongomock cannot apply a bulk update with a sort")
        return original(self, *args, **kwargs)

    return add


_CAMEL_INDEX_OPTIONS = {
    "partialFilterExpression": "partial_filter_expression", "expireAfterSeconds": "expire_after_seconds",
    "wildcardProjection": "wildcard_projection", "defaultLanguage": "default_language",
    "languageOverride": "language_override",
}


@written_for("1babb1dc2a77a039")
def _snake_case_index_options(original: Callable) -> Callable:
    from course.command_arguments import collation_document

    def create_index(self, keys, *args, **kwargs):
        kwargs = collation_document(kwargs)
        for camel, snake in _CAMEL_INDEX_OPTIONS.items():
            if camel in kwargs:
                kwargs[snake] = kwargs.pop(camel)
        return original(self, keys, *args, **kwargs)

    return create_index


def _iterator_protocol(cursor_class: type) -> None:
    if getattr(cursor_class, _PATCHED, False):
        return

    def __next__(self):
        iterator = self.__dict__.get("_course_iterator")
        if iterator is None:
            iterator = self._course_iterator = iter(self)
        return next(iterator)

    cursor_class.__next__ = _ours(__next__)
    if not hasattr(cursor_class, "next"):
        cursor_class.next = __next__
    setattr(cursor_class, _PATCHED, True)


@written_for("41a5c24c007b1ea3")
def _long_for_int64(original: Callable) -> Callable:
    import bson

    def type_name(value, *args, **kwargs):
        if isinstance(value, bson.Int64):
            return "long"
        return original(value, *args, **kwargs)

    return type_name


def _numeric_value(value: Any) -> Any:
    from mongoeco.core.bson_scalars import unwrap_bson_numeric

    value = unwrap_bson_numeric(value)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else value


@written_for("aac00bab71fb3cf3")
def _enum_by_value(original: Callable) -> Callable:
    def validate_schema(self, schema, value, path):
        enum = schema.get("enum") if isinstance(schema, dict) else None
        if not isinstance(enum, list) or isinstance(value, bool):
            return original(self, schema, value, path)
        issues = original(self, {k: v for k, v in schema.items() if k != "enum"}, value, path)
        plain = _numeric_value(value)
        if not any(_numeric_value(choice) == plain and isinstance(choice, bool) == isinstance(value, bool)
                   for choice in enum):
            from mongoeco.core.schema_validation import SchemaValidationIssue

            issues.append(SchemaValidationIssue(path, "value is not in enum"))
        return issues

    return validate_schema


@written_for("a6edfd72a70cedcc")
def _draft4_exclusive_bounds(original: Callable) -> Callable:
    def validate_numeric(self, schema, value, path):
        issues = original(self, schema, value, path)
        from mongoeco.core.schema_validation import SchemaValidationIssue

        current = self._as_decimal(value)
        for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if schema.get(flag) is True and schema.get(bound) is not None \
                    and current == self._as_decimal(schema[bound]):
                issues.append(SchemaValidationIssue(path, f"equal to the exclusive {bound}"))
        return issues

    return validate_numeric


def _as_bson_arrays(value: Any) -> Any:
    """``value`` with every tuple turned into a list, as BSON encoding turns them into arrays."""
    if isinstance(value, (list, tuple)):
        return [_as_bson_arrays(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_bson_arrays(item) for key, item in value.items()}
    return value


@written_for("f9f1169a8786c938")
def _validator_as_bson(original: Callable) -> Callable:
    from course.command_arguments import collation_document

    def create_collection(self, name, *args, **kwargs):
        kwargs = collation_document(kwargs)
        if "validator" in kwargs:
            kwargs["validator"] = _as_bson_arrays(kwargs["validator"])
        return original(self, name, *args, **kwargs)

    return create_collection


@written_for("0cc262c53655ff3e")
def _out_as_merge_command(original: Callable) -> Callable:
    """The wire server's ``aggregate`` ending in ``$out``: clear the target, then ``$merge`` into it."""
    import dataclasses

    async def execute_prepared(self, context):
        document = context.command_document
        pipeline = document.get("pipeline") if context.command_name == "aggregate" else None
        if not _writes_output(pipeline) or "$out" not in pipeline[-1]:
            return await original(self, context)
        out = pipeline[-1]["$out"]
        target = {"db": out.get("db", context.db_name), "coll": out["coll"]} if isinstance(out, dict) \
            else {"db": context.db_name, "coll": out}
        clear = self._build_request_context(
            {"delete": target["coll"], "deletes": [{"q": {}, "limit": 0}], "$db": target["db"]},
            connection=context.connection, db_name=target["db"])
        await original(self, clear)
        merge = {"$merge": {"into": target, "whenMatched": "replace", "whenNotMatched": "insert"}}
        rewritten = {**document, "pipeline": [*pipeline[:-1], merge]}
        return await original(self, dataclasses.replace(context, command_document=rewritten,
                                                        raw_body={**context.raw_body, **rewritten}))

    return execute_prepared


def _sliceable(original: Callable | None) -> Callable:
    def __getitem__(self, index):
        if isinstance(index, slice):
            if index.step not in (None, 1) or (index.start or 0) < 0 or (index.stop is not None and index.stop < 0):
                raise IndexError("a cursor takes slices with non-negative bounds and no step")
            start = index.start or 0
            cursor = self.skip(start) if start else self
            if index.stop is not None:
                # an empty slice is a cursor past the end, as pymongo's is
                cursor = cursor.limit(index.stop - start) if index.stop > start else self.skip(1 << 40)
            return cursor
        if isinstance(index, int) and not isinstance(index, bool):
            if index < 0:
                raise IndexError("a cursor does not take negative indexes")
            for document in self.clone().skip(index).limit(1):
                return document
            raise IndexError("no such item for Cursor instance")
        if original is not None:
            return original(self, index)
        raise TypeError(f"cursor indexes must be ints or slices, not {type(index).__name__}")

    return __getitem__


class _Transaction:
    """What pymongo's ``start_transaction()`` returns: commit when the block ends, abort on an exception."""

    def __init__(self, session: Any):
        self._session = session

    def __enter__(self) -> "_Transaction":
        return self

    def __exit__(self, kind, error, trace) -> None:
        if not self._session.in_transaction:
            return
        if kind is None:
            self._session.commit_transaction()
        else:
            self._session.abort_transaction()


@written_for("9ebc5b85c2a3ca10")
def _transaction_context(original: Callable) -> Callable:
    def start_transaction(self, *args, **kwargs):
        returned = original(self, *args, **kwargs)
        return _Transaction(self) if returned is None else returned

    return start_transaction


@written_for("00923d10725dfec8")
def _long_conversion_result(original: Callable) -> Callable:
    from mongoeco.core.aggregation.scalar_expressions import BsonInt64, unwrap_bson_numeric

    def typed_conversion_result(value, target, variables):
        converted = original(value, target, variables)
        if target == "long" and converted is not None and not isinstance(converted, BsonInt64) \
                and isinstance(unwrap_bson_numeric(converted), int):
            return BsonInt64(unwrap_bson_numeric(converted))
        return converted

    return typed_conversion_result


def _numeric_types(value: Any) -> Any:
    """``value``'s shape with each number replaced by its BSON type (int, long, double, decimal), as mongoeco
    names them, whether it holds them as Python numbers, pymongo's bson types or its own wrappers."""
    from bson.int64 import Int64
    from mongoeco.core.bson_scalars import bson_numeric_alias

    if isinstance(value, Int64):
        return "long"
    if isinstance(value, dict):
        return tuple((key, _numeric_types(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_numeric_types(item) for item in value)
    return None if isinstance(value, bool) else bson_numeric_alias(value)


@written_for("f25740c266b32c0e")
def _inc_keeps_the_wider_type(original: Callable) -> Callable:
    def bson_add(left, right, *args, **kwargs):
        result = original(left, right, *args, **kwargs)
        kinds = {_numeric_types(left), _numeric_types(right)}
        if "long" in kinds and kinds <= {"int", "long"} and _numeric_types(result) == "int":
            from mongoeco.core.bson_scalars import BsonInt64, unwrap_bson_numeric

            return BsonInt64(int(unwrap_bson_numeric(result)))
        return result

    return bson_add


@written_for("3558b77719ac767f")
def _type_change_is_a_change(original: Callable) -> Callable:
    def document_id_bson_type_changed(before, after):
        return original(before, after) or _numeric_types(before) != _numeric_types(after)

    return document_id_bson_type_changed


_TYPE_AWARE: dict[type, type] = {}  #: dialect class -> its subclass comparing numeric types too


def _type_aware(dialect: Any) -> Any:
    """A copy of ``dialect`` whose document equality also compares numeric types (5 and 5L differ in BSON)."""
    import copy

    kind = type(dialect)
    if getattr(kind, _PATCHED, False):
        return dialect
    aware = _TYPE_AWARE.get(kind)
    if aware is None:
        def values_equal(self, left, right):
            return kind.values_equal(self, left, right) and _numeric_types(left) == _numeric_types(right)

        aware = _TYPE_AWARE[kind] = type(f"TypeAware{kind.__name__}", (kind,),
                                         {"__slots__": (), "values_equal": values_equal, _PATCHED: True})
    clone = copy.copy(dialect)
    object.__setattr__(clone, "__class__", aware)
    return clone


@written_for("f904ed0cb3372dbc")
def _merge_writes_type_changes(original: Callable) -> Callable:
    import dataclasses

    async def merge_document(self, *args, operation_context=None, **kwargs):
        if operation_context is not None:
            operation_context = dataclasses.replace(operation_context, dialect=_type_aware(operation_context.dialect))
        return await original(self, *args, operation_context=operation_context, **kwargs)

    return merge_document


def _absorb_mongoeco() -> None:
    from mongoeco.api._async._database_admin_write_commands import DatabaseAdminWriteCommandService
    from mongoeco.api._sync.aggregation_cursor import AggregationCursor
    from mongoeco.api._sync.client import Database
    from mongoeco.api._sync.collection import Collection
    from mongoeco.api._sync.cursor import Cursor
    from mongoeco.core import codec, operators, update_scalar_operators
    from mongoeco.core.aggregation import scalar_expressions
    from mongoeco.core.schema_validation import CompiledJsonSchema
    from mongoeco.engines import memory
    from mongoeco.session import ClientSession
    from mongoeco.wire.executor import WireCommandExecutor

    from course.codec_speed import check_codec, encoding_validated_once
    from course.command_arguments import patches as command_argument_patches
    from course.equality_scans import patches as equality_scan_patches
    from course.id_lookups import missing_ids_by_key
    from course.index_builds import build_with_remembered_keys, keys_computed_once_per_build
    from course.merge_on_fields import patches as merge_on_fields_patches
    from course.numeric_types import patches as numeric_type_patches
    from course.wire_inserts import inserts_in_one_batch, single_inserts_by_lookup

    patches = [
        (Collection, "aggregate", _eager_output_stage),
        (Collection, "create_index", _snake_case_index_options),
        (Collection, "drop_index", _drop_index_by_generated_name),
        (Database, "get_collection", _collection_name_is_a_str),
        (Database, "create_collection", _validator_as_bson),
        (scalar_expressions, "_aggregation_type_name", _long_for_int64),
        (CompiledJsonSchema, "_validate_schema", _enum_by_value),
        (CompiledJsonSchema, "_validate_numeric", _draft4_exclusive_bounds),
        (CompiledJsonSchema, "_validate_schema_definition", _omissions_refused),
        (scalar_expressions, "_typed_conversion_result", _long_conversion_result),
        (operators, "document_id_bson_type_changed", _type_change_is_a_change),
        (update_scalar_operators, "bson_add", _inc_keeps_the_wider_type),
        (memory.MemoryEngine, "merge_document", _merge_writes_type_changes),
        (ClientSession, "start_transaction", _transaction_context),
        (WireCommandExecutor, "execute_prepared", _out_as_merge_command),
        (DatabaseAdminWriteCommandService, "command_insert", inserts_in_one_batch),
        (memory.MemoryEngine, "_ensure_unique_indexes", single_inserts_by_lookup),
        (memory.MemoryEngine, "create_index", build_with_remembered_keys),
        (memory.MemoryEngine, "_unique_index_keys", keys_computed_once_per_build),
        (memory.MemoryEngine, "_candidate_items_for_plan_locked", missing_ids_by_key),
        *equality_scan_patches(),
        *merge_on_fields_patches(),
        *numeric_type_patches(),
        *command_argument_patches(),
    ]
    _check("mongoeco", patches, added=((Database, "client"), (Cursor, "__next__"), (Cursor, "__getitem__"),
                                       (AggregationCursor, "__next__")))
    check_codec(codec, mark=_PATCHED)
    for owner, name, make in patches:
        _patch(owner, name, make)
    if not isinstance(getattr(Database, "client", None), property):
        Database.client = property(_ours(lambda self: self._client), doc="The client of this database, as pymongo's.")
    _iterator_protocol(Cursor)
    if not getattr(getattr(Cursor, "__getitem__", None), _PATCHED, False):
        Cursor.__getitem__ = _ours(_sliceable(getattr(Cursor, "__getitem__", None)))
    _iterator_protocol(AggregationCursor)
    if not hasattr(ClientSession, "end_session"):
        ClientSession.end_session = lambda self: None  # mongoeco sessions hold nothing to release
    encoding_validated_once(codec, mark=_PATCHED)


@written_for("a98049c117ab3ec4")
def _collection_name_is_a_str(original: Callable) -> Callable:
    def get_collection(self, name, *args, **kwargs):
        if not isinstance(name, str):
            raise TypeError(f"name must be an instance of str, not {type(name)}")  # pymongo's words
        return original(self, name, *args, **kwargs)

    return get_collection


@written_for("9b96646b3eb7f155")
def _empty_slice_is_empty(original: Callable) -> Callable:
    def __getitem__(self, index):
        if isinstance(index, slice) and index.stop is not None and index.stop <= (index.start or 0):
            return self.skip(1 << 40)  # past the end: nothing, as pymongo's empty slice
        return original(self, index)

    return __getitem__


@written_for("22979231c0bd3508")
def _array_literals_evaluated(original: Callable) -> Callable:
    def _parse_basic_expression(self, expression):
        if isinstance(expression, list):
            return [self.parse(item) for item in expression]
        return original(self, expression)

    return _parse_basic_expression


@written_for("0943696f6f682e65")
def _drop_index_by_generated_name(original: Callable) -> Callable:
    def drop_index(self, index_or_name, *args, **kwargs):
        if isinstance(index_or_name, (list, tuple)):
            from pymongo.helpers_shared import _gen_index_name

            index_or_name = _gen_index_name([tuple(pair) for pair in index_or_name])
        return original(self, index_or_name, *args, **kwargs)

    return drop_index


#: JSON Schema keywords a server's $jsonSchema refuses at parse time (MongoDB manual, $jsonSchema: Omissions)
OMITTED_KEYWORDS = ("$ref", "$schema", "default", "definitions", "format", "id")


@written_for("89966596e91e5c08")
def _omissions_refused(original: Callable) -> Callable:
    from mongoeco.errors import OperationFailure

    def validate_schema_definition(self, schema):
        for keyword in OMITTED_KEYWORDS:
            if isinstance(schema, dict) and keyword in schema:
                raise OperationFailure(f"$jsonSchema keyword '{keyword}' is not currently supported", code=9)
        return original(self, schema)

    return validate_schema_definition


@written_for("5f2b4236924fffd7")
def _inc_of_a_long_is_a_long(original: Callable) -> Callable:
    from bson.int64 import Int64

    def inc(doc, field_name, value):
        if isinstance(doc, dict):
            current = doc.get(field_name, 0)
        elif isinstance(doc, list) and 0 <= int(field_name) < len(doc):
            current = doc[int(field_name)]
        else:
            current = None
        original(doc, field_name, value)
        if isinstance(value, Int64) or isinstance(current, Int64):
            key = field_name if isinstance(doc, dict) else int(field_name)
            result = doc[key]
            if isinstance(result, int) and not isinstance(result, (bool, Int64)) \
                    and not isinstance(current, (float, bool)) and not isinstance(value, float):
                doc[key] = Int64(result)

    return inc


def _absorb_mongomock() -> None:
    from mongomock import collection as mongomock_collection
    from mongomock.aggregate import _Parser
    from mongomock.collection import BulkOperationBuilder, Collection, Cursor

    patches = [
        (_Parser, "_parse_basic_expression", _array_literals_evaluated),
        (Collection, "create_index", _keys_as_pairs),
        (Collection, "index_information", _information_as_pairs),
        (BulkOperationBuilder, "add_update", _accepts_no_sort),
        (BulkOperationBuilder, "add_replace", _accepts_no_sort),
        (Cursor, "__getitem__", _empty_slice_is_empty),
    ]
    _check("mongomock", patches)
    inc = mongomock_collection._updaters["$inc"]
    if not getattr(inc, _PATCHED, False):
        check_replaced(inc, _inc_of_a_long_is_a_long, "mongomock", "collection._updaters['$inc']")
    for owner, name, make in patches:
        _patch(owner, name, make, "mongomock")
    if not getattr(inc, _PATCHED, False):
        mongomock_collection._updaters["$inc"] = _ours(functools.wraps(inc)(_inc_of_a_long_is_a_long(inc)))


_ABSORB = {"mongoeco": _absorb_mongoeco, "mongomock": _absorb_mongomock}


def absorb(backend_name: str) -> None:
    """Apply the course's fixes for ``backend_name``'s quirks (nothing for a server)."""
    fix = _ABSORB.get(backend_name)
    if fix is not None:
        fix()
