"""mongoeco's $jsonSchema as a server's: enum by value, draft 4 exclusive bounds, the omissions refused,
and a validator's tuples sent as arrays."""

from __future__ import annotations

from typing import Any, Callable

from course.store.patch_check import written_for


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
    from course.store.mongoeco.command_arguments import collation_document

    def create_collection(self, name, *args, **kwargs):
        kwargs = collation_document(kwargs)
        if "validator" in kwargs:
            kwargs["validator"] = _as_bson_arrays(kwargs["validator"])
        return original(self, name, *args, **kwargs)

    return create_collection


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
