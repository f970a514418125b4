"""Every mongoeco patch, checked all together before any is applied (the list :data:`course.store.quirks.QUIRKS` describes)."""

from __future__ import annotations

from course.store.mongoeco.cursors import _iterator_protocol, _sliceable
from course.store.mongoeco.databases import _collection_name_is_a_str
from course.store.mongoeco.index_options import _drop_index_by_generated_name, _snake_case_index_options
from course.store.mongoeco.output_stages import _eager_output_stage, _out_as_merge_command
from course.store.mongoeco.sessions import _transaction_context
from course.store.mongoeco.type_changes import _inc_keeps_the_wider_type, _long_conversion_result, _long_for_int64, _merge_writes_type_changes, _type_change_is_a_change
from course.store.mongoeco.validators import _draft4_exclusive_bounds, _enum_by_value, _omissions_refused, _validator_as_bson
from course.store.patching import PATCHED, apply_patch, check_patches, mark_ours


def absorb_mongoeco() -> None:
    """Apply every mongoeco patch (checked all together first: a mismatch leaves mongoeco as it was)."""
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

    from course.store.mongoeco.codec_speed import check_codec, encoding_validated_once
    from course.store.mongoeco.command_arguments import patches as command_argument_patches
    from course.store.mongoeco.embedded_fields import patches as embedded_field_patches
    from course.store.mongoeco.equality_scans import patches as equality_scan_patches
    from course.store.mongoeco.id_lookups import missing_ids_by_key
    from course.store.mongoeco.index_builds import build_with_remembered_keys, keys_computed_once_per_build
    from course.store.mongoeco.merge_on_fields import patches as merge_on_fields_patches
    from course.store.mongoeco.numeric_types import patches as numeric_type_patches
    from course.store.mongoeco.wire_inserts import inserts_in_one_batch, single_inserts_by_lookup

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
        *embedded_field_patches(),
    ]
    check_patches("mongoeco", patches, added=((Database, "client"), (Cursor, "__next__"), (Cursor, "__getitem__"),
                                       (AggregationCursor, "__next__")))
    check_codec(codec, mark=PATCHED)
    for owner, name, make in patches:
        apply_patch(owner, name, make)
    if not isinstance(getattr(Database, "client", None), property):
        Database.client = property(mark_ours(lambda self: self._client), doc="The client of this database, as pymongo's.")
    _iterator_protocol(Cursor)
    if not getattr(getattr(Cursor, "__getitem__", None), PATCHED, False):
        Cursor.__getitem__ = mark_ours(_sliceable(getattr(Cursor, "__getitem__", None)))
    _iterator_protocol(AggregationCursor)
    if not hasattr(ClientSession, "end_session"):
        ClientSession.end_session = lambda self: None  # mongoeco sessions hold nothing to release
    encoding_validated_once(codec, mark=PATCHED)
