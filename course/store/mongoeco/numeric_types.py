"""mongoeco's numbers given the BSON types a server gives them (quirks absorbed by :mod:`course.store.quirks`).

**Longs come back as longs.**  pymongo decodes every BSON long as ``bson.int64.Int64``, whatever its value;
mongoeco returns an ``Int64`` it was given as one, but a long it holds as a Python ``int`` (2147483648
after an ``$inc`` took an int past int32, a ``$sum`` past int32, an ``int`` a learner inserted that does not
fit an int32, which pymongo would send as a long) comes back as a plain ``int``, though ``$type`` calls it
``"long"``: a census that counts ``Int64`` values as longs disagrees with ``$type``.  mongoeco decides that
where it builds the documents it returns (``_public_materialization._convert_into``, and
``codec._materialize_public_int64`` on its other path, ``DocumentCodec.to_pymongo``):
:func:`longs_as_int64` and :func:`large_ints_as_int64` return an ``int`` outside the int32 range as an
``Int64`` there, and change nothing else (what is stored, compared and indexed stays as it was).

**The wider integer type.**  On a server, ``$add``, ``$subtract``, ``$multiply``, ``$sum`` and ``$mul`` of
an int and a long give a long (the wider type), ``{"$multiply": ["$views", Int64(1)]}`` included; mongoeco
narrows a result that fits an int32 to an int.  :func:`wider_integer_type` returns such a result as a long,
as the course's ``$inc`` quirk already does for ``$inc`` (``course.store.mongoeco.type_changes._inc_keeps_the_wider_type``).

**$inc past int64.**  A server refuses an ``$inc`` whose result does not fit an int64 with code 2
(BadValue): "Failed to apply $inc operations to current value ((NumberLong)9223372036854775807) for
document {_id: 1}" (pymongo raises a ``WriteError`` for ``update_one``, an ``OperationFailure`` for
``find_one_and_update``); mongoeco raises its own ``BsonScalarOverflowError``, an ``OverflowError`` no
learner's ``except WriteError`` catches.  :func:`inc_overflow_refused` raises the server's error instead.
"""

from __future__ import annotations

from typing import Any, Callable

from course.store.patch_check import written_for

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def numeric_types(value: Any) -> Any:
    """``value``'s shape with each number replaced by its BSON type (int, long, double, decimal), as mongoeco
    names them, whether it holds them as Python numbers, pymongo's bson types or its own wrappers."""
    from bson.int64 import Int64
    from mongoeco.core.bson_scalars import bson_numeric_alias

    if isinstance(value, Int64):
        return "long"
    if isinstance(value, dict):
        return tuple((key, numeric_types(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(numeric_types(item) for item in value)
    return None if isinstance(value, bool) else bson_numeric_alias(value)


def _is_long(value: Any) -> bool:
    """True for a plain ``int`` that BSON holds as a long (outside int32, inside int64)."""
    return type(value) is int and not _INT32_MIN <= value <= _INT32_MAX and _INT64_MIN <= value <= _INT64_MAX


@written_for("41881cd4f8f1e86a")  # the source digest of mongoeco 4.11's _public_materialization._convert_into
def longs_as_int64(original: Callable) -> Callable:
    """``_public_materialization._convert_into`` (how find, aggregate and the rest build a returned document),
    returning a plain ``int`` outside int32 as an ``Int64``; every other value is placed as the original does."""
    from bson.int64 import Int64

    plain = frozenset((str, float, bool, bytes, type(None)))  #: the original's plain scalars, int aside

    def _convert_into(value, parent, key, pending):
        kind = type(value)
        if kind is dict:
            document: dict = {}
            parent[key] = document
            for field, item in value.items():
                _convert_into(item, document, field, pending)
        elif kind is list:
            array: list = [None] * len(value)
            parent[key] = array
            for index, item in enumerate(value):
                _convert_into(item, array, index, pending)
        elif kind is int:
            parent[key] = value if _INT32_MIN <= value <= _INT32_MAX or not _is_long(value) else Int64(value)
        elif kind in plain:
            parent[key] = value  # what the original does with a plain scalar
        else:
            original(value, parent, key, pending)

    return _convert_into


@written_for("62ba0f4dcc695ba4")  # the source digest of mongoeco 4.11's codec._materialize_public_int64
def large_ints_as_int64(original: Callable) -> Callable:
    """``codec._materialize_public_int64`` (the first step of ``DocumentCodec.to_pymongo``), also turning a plain
    ``int`` outside int32 into an ``Int64``."""
    from bson.int64 import Int64

    def _materialize_public_int64(data):
        if type(data) is int and _is_long(data):
            return Int64(data)
        return original(data)

    return _materialize_public_int64


@written_for("f25740c266b32c0e", "fd3c2eaae4dbd459", "be4fbaff400d39ae")  # mongoeco 4.11's bson_add, _multiply,
def wider_integer_type(original: Callable) -> Callable:                    # _subtract (core/bson_scalars.py)
    """``bson_add``, ``bson_multiply`` or ``bson_subtract`` as the aggregation expressions, ``$sum`` and ``$mul``
    use it: an int and a long give a long."""
    from mongoeco.core.bson_scalars import BsonInt64, unwrap_bson_numeric

    def arithmetic(left, right, *args, **kwargs):
        result = original(left, right, *args, **kwargs)
        if type(left) is int and type(right) is int and _INT32_MIN <= left <= _INT32_MAX \
                and _INT32_MIN <= right <= _INT32_MAX:
            return result  # two ints: an int, or a long when it needs one
        kinds = {numeric_types(left), numeric_types(right)}
        if "long" in kinds and kinds <= {"int", "long"} and numeric_types(result) == "int":
            return BsonInt64(int(unwrap_bson_numeric(result)))
        return result

    return arithmetic


def _shell(value: Any) -> str:
    """``value`` as a server's error message writes it ({_id: 1}, {_id: "a"}, {_id: ObjectId('...')})."""
    from bson import ObjectId

    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, ObjectId) or type(value).__name__ == "ObjectId":
        return f"ObjectId('{value}')"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k}: {_shell(v)}" for k, v in value.items()) + " }"
    return str(value)


def _overflowing(doc: Any, instructions: Any, context: Any, helpers: Any) -> Any:
    """The current value whose ``$inc`` does not fit an int64 (None when none is found)."""
    from mongoeco.core.bson_scalars import BsonScalarOverflowError, unwrap_bson_numeric
    from mongoeco.core.update_scalar_operators import bson_add, get_document_value

    for application in helpers._resolve_instruction_applications(doc, instructions, context=context,
                                                                  allow_positional=True):
        for target in application.targets:
            found, current = get_document_value(doc, target.concrete_path)
            if found and helpers._is_numeric(current):
                try:
                    bson_add(current, application.instruction.value)
                except BsonScalarOverflowError:
                    return unwrap_bson_numeric(current)
    return None


@written_for("325cbe303256b137")  # the source digest of mongoeco 4.11's update_scalar_operators.apply_inc
def inc_overflow_refused(original: Callable) -> Callable:
    """``apply_inc``, refusing a result past int64 with the server's error (code 2) instead of an
    ``OverflowError``."""
    from mongoeco.core.bson_scalars import BsonScalarOverflowError
    from mongoeco.errors import OperationFailure

    def apply_inc(doc, instructions, *args, context, helpers, **kwargs):
        try:
            return original(doc, instructions, *args, context=context, helpers=helpers, **kwargs)
        except BsonScalarOverflowError as overflow:
            current = _overflowing(doc, instructions, context, helpers)
            if current is None:
                raise
            kind = "NumberInt" if numeric_types(current) == "int" else "NumberLong"
            where = f" for document {{_id: {_shell(doc.get('_id'))}}}" if isinstance(doc, dict) and "_id" in doc \
                else ""
            raise OperationFailure(f"Failed to apply $inc operations to current value (({kind}){current}){where}",
                                   code=2) from overflow

    return apply_inc


def patches() -> list[tuple]:
    """The (owner, attribute, patch maker) triples this module adds to :func:`course.store.quirks.absorb` for mongoeco."""
    from mongoeco.core import _public_materialization, codec, operators, update_scalar_operators
    from mongoeco.core.aggregation import accumulators, compiled_aggregation, numeric_expressions

    return [(_public_materialization, "_convert_into", longs_as_int64),
            (codec, "_materialize_public_int64", large_ints_as_int64),
            *((module, name, wider_integer_type) for module, names in (
                (numeric_expressions, ("bson_add", "bson_multiply", "bson_subtract")),
                (compiled_aggregation, ("bson_add", "bson_multiply")),
                (accumulators, ("bson_add",)),
                (update_scalar_operators, ("bson_multiply",))) for name in names),
            (operators, "apply_inc", inc_overflow_refused)]
