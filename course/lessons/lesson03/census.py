"""Lab 03, exercise 03.3: a ``$type`` census, checked against seeded collections (needs ``$type`` queries).

The census collections are seeded once per exercise and re-used while the learner's census writes nothing
through its collection (a write, or a changed document count, gets the next assertion fresh documents).
"""

from __future__ import annotations

from typing import Any

from course.store.capabilities import Capability
from course.toolkit.census import MISSING
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson03.data import arrays_holding, census_documents, census_size, expected_census
from course.engine.recording import RecordingCollection

CENSUS_EXAMPLE = '{"int": 55, "long": 2, "string": 1, "missing": 1}'


def _counts(value: Any) -> dict:
    """The census as a dict, read leniently (a list of pairs too), so that only the "form" check fails on form."""
    if isinstance(value, dict):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        return dict(value)
    raise Incorrect(f"field_types(...) should return a dict such as {CENSUS_EXAMPLE}; "
                    f"got a {type(value).__name__}: {value!r:.80}")


def _more(count: Any, expected: int) -> bool:
    """True when ``count`` is a number larger than ``expected`` (a non-number is the "form" rule's business)."""
    return isinstance(count, (int, float)) and not isinstance(count, bool) and count > expected


#: pairs of BSON types a census confuses, and why they are two types (the int, long pair is looked at first)
_CONFUSED_TYPES = {
    ("int", "long"): "an int and a long are different BSON types (an Int64, or a counter $inc took past the int32 "
                     "maximum, is a long)",
    ("int", "bool"): "a bool is its own BSON type, not an int (even though Python's bool is a subclass of int)",
}


def _evidence(which: str, field: str, type_name: str, got: dict, expected: dict) -> str:
    """What the seeded documents show about a wrong count of ``type_name``, from the counts alone: the same
    words whichever check (visible or hidden) meets the mistake, and nothing the counts do not show."""
    count = got.get(type_name, 0)
    if not isinstance(count, int) or isinstance(count, bool):
        return ""
    surplus = count - expected.get(type_name, 0)
    in_arrays = arrays_holding(which, field, str(type_name))
    if surplus > 0 and surplus == in_arrays:
        article = "an" if str(type_name)[:1] in "aeiou" else "a"
        return (f": the {in_arrays} more {'is an array' if in_arrays == 1 else 'are arrays'} holding {article} "
                f"{type_name} among {'its' if in_arrays == 1 else 'their'} elements, which $type also matches (an "
                "array's elements), where the census counts an array once, as 'array'")
    for pair, why in _CONFUSED_TYPES.items():
        if type_name in pair:
            other = pair[1] if type_name == pair[0] else pair[0]
            if _add_up(got, expected, type_name, other):
                one = abs(surplus) == 1
                return (f": the {pair[0]}s and the {pair[1]}s add up, but {abs(surplus)} {'was' if one else 'were'} "
                        f"counted as {type_name!r} that {'is' if one else 'are'} {other!r}: {why}")
    return ""


def _add_up(got: dict, expected: dict, one: str, other: str) -> bool:
    """True when the counts of ``one`` and ``other`` together are right (only their split is wrong)."""
    mine, theirs = got.get(one, 0), got.get(other, 0)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (mine, theirs)):
        return False
    return mine + theirs == expected.get(one, 0) + expected.get(other, 0)


def _missing_wrong(which: str, field: str, got: dict) -> str:
    """Why the census of ``field`` has a wrong "missing" count, from the counts alone ("" when it is right)."""
    expected = expected_census(which, field).get(MISSING, 0)
    count = got.get(MISSING, 0)
    if count == expected:
        return ""
    lacking = f"{expected} of the documents {'has' if expected == 1 else 'have'} no {field}"
    if MISSING not in got:
        return (f'the census of {field} has no "missing" key, but {lacking}: the documents without the field '
                'are counted under "missing"')
    nulls = expected_census(which, field).get("null", 0)
    why = (f" (a null is not missing: a document whose {field} is null has the field)"
           if nulls and isinstance(count, int) and count - expected == nulls else "")
    return f'the census of {field} has "missing": {count!r}, but {lacking}{why}'


class FieldTypes(Exercise):
    id = "03.3"
    title = "Audit before you validate: a $type census"
    answers = ("field_types",)
    requires = frozenset({Capability.TYPE_QUERIES})
    requirements = {
        "form": 'field_types returns a dict from BSON type name to a number of documents, e.g. '
                + CENSUS_EXAMPLE,
        "types": "each type of CENSUS_TYPES is counted, an int apart from a long",
        "arrays": 'each document counts once: a field holding an array counts as "array" only, not as the types '
                  "of its elements",
        "missing": 'documents without the field are counted under "missing"',
        "omit": "types no document has are left out (no zero counts)",
        "reads_only": "the census only reads: the collection is left as it was",
    }
    hints = (
        "For each type name in CENSUS_TYPES, count_documents({field: {\"$type\": type_name}}).",
        "$type also matches an array's elements: {\"tags\": {\"$type\": \"string\"}} matches [\"eco\"]. For every "
        "type but \"array\", add \"$not\": {\"$type\": \"array\"} beside the $type.",
        "Documents without the field match no $type: count them with {field: {\"$exists\": False}} "
        "under the key \"missing\", and leave out the types nobody has.",
    )
    solution_code = """
CENSUS_TYPES = ("int", "long", "double", "decimal", "string", "bool", "null", "object", "array")


def field_types(collection, field):
    \"\"\"Documents per BSON type of field (an array counts once, as "array"), plus "missing".\"\"\"
    counts = {}
    for type_name in CENSUS_TYPES:
        if type_name == "array":
            query = {field: {"$type": "array"}}
        else:  # $type also matches array elements: count the field's own type only
            query = {field: {"$type": type_name, "$not": {"$type": "array"}}}
        n = collection.count_documents(query)
        if n:
            counts[type_name] = n
    missing = collection.count_documents({field: {"$exists": False}})
    if missing:
        counts["missing"] = missing
    return counts
"""

    def _seeded(self, which: str, reuse: bool = True) -> Any:
        """The census collection ``which``, seeded once and re-used while nothing has written to it."""
        cache = self.__dict__.setdefault("_census_collections", {})
        products = cache.get(which) if reuse else None
        if products is not None and products.estimated_document_count() == census_size(which):
            return products
        db = cache["db"] if "db" in cache else self.lab.scratch()
        cache["db"] = db
        products = db[f"census_{which}" if reuse else f"census_{which}_untouched"]
        products.drop()
        products.insert_many(census_documents(which))
        if reuse:
            cache[which] = products
        return products

    def _census(self, answer, which: str, field: str) -> Any:
        watched = RecordingCollection(self._seeded(which))
        try:
            return self.call("field_types", answer.field_types, watched, field)
        finally:
            if any(op.kind == "write" for op in watched.ops()):  # the next assertion gets fresh documents
                self.__dict__["_census_collections"].pop(which, None)

    def _compare_types(self, answer, which: str, field: str, arrays_only: bool = False) -> None:
        """Compare the census of ``field`` with the seed's counts; ``arrays_only`` (the "arrays" rule) judges
        only what that rule governs: the "array" count, and a type over-counted by documents holding arrays with
        elements of that type (any other wrong count is the "types" rule's, checked on fields without arrays)."""
        got = _counts(self._census(answer, which, field))
        expected = expected_census(which, field)
        for type_name in list(expected) + sorted(set(got) - set(expected), key=str):
            if type_name == MISSING:
                continue
            if arrays_only and type_name != "array" and not (
                    arrays_holding(which, field, str(type_name)) and _more(got.get(type_name, 0),
                                                                           expected.get(type_name, 0))):
                continue
            if got.get(type_name, 0) != expected.get(type_name, 0):
                held = expected.get(type_name, 0)
                raise Incorrect(f"the census of {field} counts {got.get(type_name, 0)} documents as {type_name!r}; "
                                f"{held} {'document holds' if held == 1 else 'documents hold'} one"
                                f"{_evidence(which, field, type_name, got, expected)}")

    @visible(points=1, checks="form")
    def returns_a_dict(self, answer):
        """The census is a dict from type name to a number of documents"""
        got = self._census(answer, "catalog", "views")
        got = self.expect_type("field_types(...)", got, dict, CENSUS_EXAMPLE)
        for key, value in got.items():
            if not isinstance(key, str):
                raise Incorrect(f"field_types(...) has the key {key!r}: keys are type names (strings)")
            if isinstance(value, bool) or not isinstance(value, int):
                raise Incorrect(f"field_types(...)[{key!r}] is {value!r}: give the number of documents, an int")

    @visible(points=2, checks="types")
    def census_of_views(self, answer):
        """The census of views: ints, a string, a double, a bool, a null and two longs (one made by $inc)"""
        self._compare_types(answer, "catalog", "views")

    @visible(points=2, checks="arrays")
    def census_of_tags(self, answer):
        """The census of tags: arrays count as "array" only, whatever they hold"""
        self._compare_types(answer, "catalog", "tags", arrays_only=True)

    @visible(points=1, checks="missing")
    def counts_missing(self, answer):
        """Documents without views, and the version 1 documents without price_pence, count as "missing" """
        for field in ("views", "price_pence"):
            wrong = _missing_wrong("catalog", field, _counts(self._census(answer, "catalog", field)))
            if wrong:
                raise Incorrect(wrong)

    @visible(points=1, checks="omit")
    def leaves_out_zero_counts(self, answer):
        """Types no document has are left out, "missing" too when every document has the field"""
        for field in ("views", "name"):
            got = _counts(self._census(answer, "catalog", field))
            zeros = sorted(str(k) for k, v in got.items() if v == 0)
            if zeros:
                raise Incorrect(f"the census of {field} lists {', '.join(zeros)} with 0 documents: leave out the "
                                "types nobody has")

    @visible(points=1, checks="reads_only")
    def only_reads(self, answer):
        """The census changes nothing in the collection it audits"""
        products = self._seeded("catalog", reuse=False)
        db = products.database
        before = list(products.find({}).sort("_id", 1))
        collections = sorted(db.list_collection_names())
        indexes = sorted(products.index_information())
        watched = RecordingCollection(products)
        self.call("field_types", answer.field_types, watched, "views")
        writes = [op.method for op in watched.ops() if op.kind == "write"]
        if writes:
            raise Incorrect(f"the census called {writes[0]}: an audit only reads, it changes nothing")
        if list(products.find({}).sort("_id", 1)) != before:
            raise Incorrect("the census changed documents of the collection it audits: an audit only reads")
        if sorted(db.list_collection_names()) != collections or sorted(products.index_information()) != indexes:
            raise Incorrect("the census created collections or indexes: an audit only reads")

    @hidden(points=1, checks="types")
    def census_of_other_values(self, answer):
        """Another catalog: a bool, a decimal, an object, a small and a large long among the counters"""
        self._compare_types(answer, "other", "views")

    @hidden(points=1, checks="arrays")
    def census_of_ratings(self, answer):
        """Ratings that are ints, arrays of ints, and arrays holding an array and a string"""
        self._compare_types(answer, "other", "ratings", arrays_only=True)

    @hidden(points=1, checks="missing")
    def counts_missing_elsewhere(self, answer):
        """The version 1 price field: every newer document lacks it"""
        for which, field in (("catalog", "price"), ("other", "views")):
            wrong = _missing_wrong(which, field, _counts(self._census(answer, which, field)))
            if wrong:
                raise Incorrect(wrong)
