"""Backend quirks the course absorbs, declared once, beside :mod:`course.store.capabilities`.

A quirk is a place where an embedded engine behaves differently from a MongoDB
server on a call that a correct answer may well make.  Where the difference
can be removed without hiding anything a lesson teaches, the course removes it
here, when the backend is opened, so that no learner ever meets it; where it
cannot, the backend lacks a capability (see :mod:`course.store.capabilities`) and
the exercise reports "needs ...".

``QUIRKS`` lists them for ``course doctor`` and the README; ``absorb(name)``
applies those of one backend (idempotent: a class is patched once).

Every patch first checks that the function it replaces is the one it was written
for (:mod:`course.store.patch_check`: each maker carries the source digest of its
target, for the releases pyproject.toml pins), and raises ``PatchMismatch``
instead of patching another release's function.
"""

from __future__ import annotations

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
        "(course/store/engine_imports.py), and skips jsonschema's format checkers, which $jsonSchema ignores",
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
        "$set and $addFields (in a pipeline or an update pipeline) replace an embedded document with a document "
        "of fields ({\"$set\": {\"customer\": {\"phones\": ...}}} drops the customer's other fields), where a "
        "server sets those fields inside it: the course reads such a document as dotted paths (customer.phones), "
        "as a server does",
        "db[name] and db.get_collection(name) take any name: db[None] writes a collection named None, after which "
        "dropping or listing the database fails inside the engine ('<' not supported between 'str' and "
        "'NoneType'): the course refuses a name that is not a str with pymongo's TypeError (\"name must be an "
        "instance of str\")",
        "a long held as a Python int (2147483648 after an $inc past int32, a $sum, an int past int32 a learner "
        "inserted) comes back from find or aggregate as an int, where pymongo decodes every BSON long as Int64 "
        "($type says 'long'): the course returns it as an Int64 (course/store/mongoeco/numeric_types.py)",
        "$add, $subtract, $multiply, $sum and $mul of an int and a long give an int when the result fits one: the "
        "course gives a long, the wider type, as a server does",
        "an $inc past int64 raises mongoeco's own BsonScalarOverflowError: the course raises the server's error "
        "(code 2, 'Failed to apply $inc operations to current value ((NumberLong)...) for document {_id: ...}'), "
        "a WriteError from update_one as pymongo's",
        "Database.command takes no positional value (db.command('dropIndexes', 'products', index='category_1') "
        "raises TypeError) nor keyword arguments with a mapping: the course takes pymongo's signature "
        "(course/store/mongoeco/command_arguments.py)",
        "Collection.rename takes no keyword arguments (dropTarget=True raises TypeError): the course takes "
        "pymongo's, dropping an existing target for dropTarget",
        "a pymongo Collation object is refused wherever a collation is taken ('collation must be a document'): "
        "the course passes its document, as pymongo sends it",
    ),
    "mongomock": (
        "index keys given as a dict raise TypeError: the course passes them as a list of pairs",
        "the $set/$addFields stage replaces an embedded document with a document of fields: the course sets "
        "those fields inside it, as a server does",
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


def _absorbers() -> dict:
    from course.store.mongoeco.absorb import absorb_mongoeco
    from course.store.mongomock.absorb import absorb_mongomock

    return {"mongoeco": absorb_mongoeco, "mongomock": absorb_mongomock}


def absorb(backend_name: str) -> None:
    """Apply the course's fixes for ``backend_name``'s quirks (nothing for a server)."""
    fix = _absorbers().get(backend_name)
    if fix is not None:
        fix()
