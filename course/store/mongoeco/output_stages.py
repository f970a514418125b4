"""mongoeco's $merge and $out: run when aggregate is called, and $out replaces the target's documents."""

from __future__ import annotations

from typing import Any, Callable

from course.store.patch_check import written_for


def writes_output(pipeline: Any) -> bool:
    """True when ``pipeline``'s last stage is ``$merge`` or ``$out``."""
    if not isinstance(pipeline, (list, tuple)) or not pipeline:
        return False
    last = pipeline[-1]
    return isinstance(last, dict) and bool({"$merge", "$out"} & set(last))


def _out_target(self: Any, stage: Any) -> Any:
    """The collection a ``$out`` stage names (a name, or ``{"db": ..., "coll": ...}``)."""
    if isinstance(stage, dict):
        return self.database.client[stage.get("db", self.database.name)][stage["coll"]]
    return self.database[stage]


@written_for("aa9d8a9e29eafac7")
def _eager_output_stage(original: Callable) -> Callable:
    from course.store.mongoeco.command_arguments import collation_document

    def aggregate(self, pipeline, *args, **kwargs):
        kwargs = collation_document(kwargs)
        if writes_output(pipeline) and "$out" in pipeline[-1]:
            results = list(original(self, list(pipeline[:-1]), *args, **kwargs))
            target = _out_target(self, pipeline[-1]["$out"])
            target.delete_many({})
            if results:
                target.insert_many(results)
            return original(self, [{"$match": {"$expr": False}}])  # what a server returns: no documents
        cursor = original(self, pipeline, *args, **kwargs)
        if writes_output(pipeline):
            for _ in cursor:  # a $merge/$out pipeline returns no documents; reading it runs the stage
                pass
        return cursor

    return aggregate


@written_for("0cc262c53655ff3e")
def _out_as_merge_command(original: Callable) -> Callable:
    """The wire server's ``aggregate`` ending in ``$out``: clear the target, then ``$merge`` into it."""
    import dataclasses

    async def execute_prepared(self, context):
        document = context.command_document
        pipeline = document.get("pipeline") if context.command_name == "aggregate" else None
        if not writes_output(pipeline) or "$out" not in pipeline[-1]:
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
