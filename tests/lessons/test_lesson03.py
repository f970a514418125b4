"""Lab 03's checkers: each requirement broken alone by a wrong answer, right answers in other idioms, not attempted.

Every case runs on every backend.  Exercises 03.3 to 03.5 need $type queries or validators: where the
backend lacks them (mongomock) the helpers assert the honest "needs ..." verdict instead.
"""

import pytest

from course import ____
from course.store.capabilities import Capability
from tests.lessons import lesson03_answers as a
from tests.support.requirements import Right, Wrong, check_right, check_wrong
from tests.support.verdicts import assert_not_attempted, assert_unsupported


def v(function):
    return {"validate": function}


def r(function):
    return {"render_product": function}


def census(function):
    return {"field_types": function}


def schema(validator):
    return {"product_validator": validator}


def staging(value):
    return {"staging": value}


RIGHT = [
    Right("03.1", "if-chain, set difference, a ValueError subclass, deepcopy", v(a.validate_if_chain)),
    Right("03.1", "rules as (types, predicate) pairs, dict() copy then update", v(a.validate_rules)),
    Right("03.1", "a helper per field, problems collected, dict union", v(a.validate_helpers)),
    Right("03.1", "messages that name the field in capitals", v(a.validate_upper_messages)),
    Right("03.1", r"re.search anchored with \Z", v(a.sku_search_z)),
    Right("03.2", "round() of the float, divmod, version by schema_version", r(a.render_round)),
    Right("03.2", "Decimal end to end, format with :.2f", r(a.render_decimal_format)),
    Right("03.2", "string arithmetic, version by field presence, zfill", r(a.render_parse)),
    Right("03.2", "Decimal.quantize with ROUND_HALF_UP, match on the version", r(a.render_quantize)),
    Right("03.2", "a float formatted with :.2f (which rounds right)", r(a.render_float_format)),
    Right("03.3", "$type with $not: {$type: array} in one operator document", census(a.census_not_array)),
    Right("03.3", "find with a projection, classified in Python (Int64 and ints past int32 as long)",
          census(a.census_python)),
    Right("03.3", "$and of the type and not-an-array, a helper, dict comprehension", census(a.census_and)),
    Right("03.3", "$group on the $type aggregation expression", census(a.census_aggregate)),
    Right("03.3", "a Counter from one find, types read from the BSON encoding", census(a.census_counter)),
    Right("03.3", "numeric $type codes, missing as the rest of the count", census(a.census_type_codes)),
    Right("03.4", "anyOf / oneOf for int or long, JSON type keywords, required in another order",
          schema(a.VALIDATOR_ANYOF)),
    Right("03.4", '"number" without double and decimal (not), an _id type list', schema(a.VALIDATOR_NOT)),
    Right("03.4", "keywords and properties in another order, bsonType lists everywhere", schema(a.VALIDATOR_REORDERED)),
    Right("03.4", "CATEGORIES as the tuple it is, JSON type object, a query operator beside",
          schema(a.VALIDATOR_TUPLES)),
    Right("03.5", "dict(...) with the keys in the other order", staging(a.S_RIGHT_ORDER)),
    Right("03.5", "a bson SON", staging(a.S_SON)),
    Right("03.5", "errorAndLog (MongoDB 8.1) where error is asked", staging(a.S_ERROR_AND_LOG)),
]

WRONG = [
    # 03.1 validate(doc)
    Wrong("03.1", "required", "checks only the fields that are present (the seed's port)", v(a.seed_port), "no name"),
    Wrong("03.1", "required", "forgets that sku is required", v(a.forgets_sku), "no sku"),
    Wrong("03.1", "unknown", "lets unknown fields through", v(a.lets_unknown), "colour"),
    Wrong("03.1", "price_pence", "isinstance(v, int) lets True through", v(a.bool_price), "True (a bool)"),
    Wrong("03.1", "price_pence", "accepts a string of digits", v(a.digits_price), '"2499"'),
    Wrong("03.1", "price_pence", "accepts a negative price", v(a.negative_price), "-100"),
    Wrong("03.1", "price_pence", "a float with no fraction passes as an int", v(a.float_integral_price), "2499.0"),
    Wrong("03.1", "views", "isinstance(v, int) lets a bool counter through", v(a.bool_views), "views True"),
    Wrong("03.1", "accepts", "an int32 range check refuses the long counter", v(a.int32_views), "long"),
    Wrong("03.1", "accepts", "len(tags) < MAX_TAGS refuses exactly MAX_TAGS tags", v(a.tags_off_by_one),
          "exactly 8 tags"),
    Wrong("03.1", "accepts", "schema_version treated as an unknown field", v(a.version_is_unknown), "already stamped"),
    Wrong("03.1", "accepts", "refuses an _id", v(a.refuses_id), "_id"),
    Wrong("03.1", "accepts", "views > 0 refuses a product nobody has viewed", v(a.views_positive), "views 0"),
    Wrong("03.1", "tags", "no bound on the number of tags", v(a.tags_unbounded), "9 tags"),
    Wrong("03.1", "tags", "does not check what the tags are", v(a.tags_any_items), "17"),
    Wrong("03.1", "sku", "re.search without anchors", v(a.sku_unanchored), "XKIT-00912"),
    Wrong("03.1", "sku", "re.match of the anchored pattern lets a trailing newline through", v(a.sku_re_match),
          "trailing newline"),
    Wrong("03.1", "sku", "strips the sku before matching it", v(a.sku_stripped), "trailing newline"),
    Wrong("03.1", "name", "accepts an empty name", v(a.empty_name), 'name ""'),
    Wrong("03.1", "category", "accepts any string as a category", v(a.any_category), "kitchenware"),
    Wrong("03.1", "schema_version", "stamps over a schema_version of 2", v(a.overwrites_version), "schema_version 2"),
    Wrong("03.1", "value_error", "raises KeyError", v(a.raises_key_error), "KeyError"),
    Wrong("03.1", "value_error", "raises TypeError", v(a.raises_type_error), "TypeError"),
    Wrong("03.1", "value_error", "a missing sku or price read first: KeyError (review 38)", v(a.sku_read_before_checked),
          "KeyError for a product with no price_pence"),
    Wrong("03.1", "value_error", "returns False instead of raising", v(a.returns_false), "returned False",
          also=("names_field",)),
    Wrong("03.1", "names_field", "a message that names no field", v(a.vague_message), "does not name the field"),
    Wrong("03.1", "names_field", "a message that prints the document", v(a.dumps_document), "no name"),
    Wrong("03.1", "stamp", "forgets to stamp schema_version", v(a.no_stamp), "schema_version"),
    Wrong("03.1", "stamp", "returns only the required fields", v(a.drops_optional), "tags was removed"),
    Wrong("03.1", "caller", "stamps the caller's dict and returns it", v(a.mutates), "caller's dict"),
    Wrong("03.1", "caller", "stamps the caller's dict, returns a copy", v(a.stamps_then_copies),
          "schema_version was added"),
    # 03.2 render_product(doc)
    Wrong("03.2", "version1", "int(float(price) * 100): the float trap", r(a.render_float), "£4.34"),
    Wrong("03.2", "version1", 'strips the dot, assuming two decimals', r(a.render_strip_dot), '"12.5"'),
    Wrong("03.2", "version1", "knows only the current version", r(a.render_current_only), "KeyError"),
    Wrong("03.2", "layout", "shows version 1's string as it is", r(a.render_raw_price), "two"),
    Wrong("03.2", "layout", "pence without the zero pad", r(a.render_unpadded), "one digit"),
    Wrong("03.2", "layout", "leaves out the category", r(a.render_no_category), "from character"),
    Wrong("03.2", "layout", "a thousands separator", r(a.render_thousands), "£1,234.05"),
    Wrong("03.2", "current", "reads price_pence as pounds", r(a.render_pence_as_pounds), "£2499.00"),
    Wrong("03.2", "unchanged", "migrates the document it reads, in place", r(a.render_migrates_in_place),
          "price was removed"),
    Wrong("03.2", "unchanged", "keeps the converted price on the document", r(a.render_caches_pence),
          "price_pence was added"),
    Wrong("03.2", "unchanged", "pops the price and writes back str(pence / 100)", r(a.render_pops_price),
          "price changed from '7' to '7.0'"),
    # 03.3 field_types(collection, field)
    Wrong("03.3", "arrays", "bare $type queries count an array's elements (the $type trap)", census(a.census_bare),
          "array's elements"),
    Wrong("03.3", "missing", 'no "missing" key', census(a.census_no_missing), 'has no "missing" key'),
    Wrong("03.3", "missing", "{field: None} counts nulls as missing", census(a.census_null_is_missing),
          "a null is not missing"),
    Wrong("03.3", "omit", "keeps the zero counts", census(a.census_zeros), "0 documents"),
    Wrong("03.3", "omit", '"missing": 0 when every document has the field', census(a.census_missing_always), "missing"),
    Wrong("03.3", "types", "isinstance(v, int) counts the longs as int", census(a.census_python_ints), "long"),
    Wrong("03.3", "types", "isinstance(v, int) before bool counts a bool as int", census(a.census_bool_as_int),
          "that is 'bool'"),
    Wrong("03.3", "reads_only", "marks every document as audited", census(a.census_marks), "update_many"),
    Wrong("03.3", "types", "leaves double out of the types it asks for", census(a.census_numbers_as_number),
          "as 'double'"),
    Wrong("03.3", "types", '"number" for every numeric type', census(a.census_number_alias), "as 'int'"),
    Wrong("03.3", "form", "returns a list of pairs", census(a.census_pairs), "should be a dict"),
    # 03.4 product_validator
    Wrong("03.4", "form", "the schema without the $jsonSchema wrapper", schema(a.V_BARE), "wrap your schema"),
    Wrong("03.4", "accepts", 'views as a plain "int" refuses the counter that became a long', schema(a.V_VIEWS_INT),
          "views counter is a long"),
    Wrong("03.4", "accepts", 'price_pence as a plain "int" refuses a long price', schema(a.V_PRICE_INT),
          "price_pence is a long"),
    Wrong("03.4", "accepts", "maxItems one short refuses exactly MAX_TAGS tags", schema(a.V_TAGS_7), "exactly 8 tags"),
    Wrong("03.4", "accepts", "minimum 1 refuses a free product", schema(a.V_PRICE_MIN_1), "free product"),
    Wrong("03.4", "accepts", "tags listed as required", schema(a.V_REQUIRES_TAGS), "no tags"),
    Wrong("03.4", "accepts", "a counter capped at the int32 maximum", schema(a.V_VIEWS_INT32_MAX), "long"),
    Wrong("03.4", "accepts", "additionalProperties: False without _id among the properties", schema(a.V_NO_ID),
          "refused", also=("required", "unknown", "name", "category", "price_pence", "sku", "tags", "views",
                           "schema_version")),
    Wrong("03.4", "required", "sku left out of required", schema(a.V_NO_REQUIRED_SKU), "no sku"),
    Wrong("03.4", "required", "schema_version left out of required", schema(a.V_NO_REQUIRED_VERSION),
          "no schema_version"),
    Wrong("03.4", "unknown", "no additionalProperties: False", schema(a.V_LOOSE), "colour"),
    Wrong("03.4", "name", "no minLength on name", schema(a.V_NAME_EMPTY), 'name ""'),
    Wrong("03.4", "category", "category any string", schema(a.V_CATEGORY_STRING), "kitchenware"),
    Wrong("03.4", "price_pence", '"number" lets a double price in', schema(a.V_PRICE_NUMBER), "24.99"),
    Wrong("03.4", "price_pence", "no minimum on price_pence", schema(a.V_PRICE_NO_MIN), "-100"),
    Wrong("03.4", "price_pence", "a decimal price allowed", schema(a.V_PRICE_DECIMAL), 'Decimal128("2499")'),
    Wrong("03.4", "sku", "the pattern without anchors", schema(a.V_SKU_UNANCHORED), "XKIT-00912"),
    Wrong("03.4", "tags", "no maxItems", schema(a.V_TAGS_NO_MAX), "9 tags"),
    Wrong("03.4", "tags", "no items rule", schema(a.V_TAGS_NO_ITEMS), "17"),
    Wrong("03.4", "views", '"number" lets a double counter in', schema(a.V_VIEWS_NUMBER), "3.0"),
    Wrong("03.4", "views", "no minimum on views", schema(a.V_VIEWS_NO_MIN), "views -1"),
    Wrong("03.4", "views", "a decimal counter allowed", schema(a.V_VIEWS_DECIMAL), 'Decimal128("3")'),
    Wrong("03.4", "schema_version", "schema_version any int", schema(a.V_VERSION_INT), "schema_version 2"),
    # 03.5 staging
    Wrong("03.5", "old_updatable", "strict + error freezes the old products", staging(a.S_STRICT), "$inc of views"),
    Wrong("03.5", "old_updatable", "strict + errorAndLog (MongoDB 8.1) freezes them too",
          staging(a.S_STRICT_ERROR_AND_LOG), "$inc of views"),
    Wrong("03.5", "new_refused", "moderate + warn only logs", staging(a.S_WARN), "version 2 shape was accepted"),
    Wrong("03.5", "new_refused", "level off checks nothing", staging(a.S_OFF), "was accepted"),
    Wrong("03.5", "new_refused", "strict + warn", staging(a.S_STRICT_WARN), "was accepted"),
    Wrong("03.5", "new_refused", "constraint (MongoDB 9.0) on a catalog with old documents", staging(a.S_CONSTRAINT),
          "cannot be set while the collection holds documents that fail", also=("old_updatable",)),
    Wrong("03.5", "new_refused", "constraint + errorAndLog on a catalog with old documents",
          staging(a.S_CONSTRAINT_ERROR_AND_LOG), "cannot be set while the collection holds documents that fail",
          also=("old_updatable",)),
    Wrong("03.5", "form", "only the level, relying on the default action", staging(a.S_LEVEL_ONLY),
          "lacks validationAction"),
    Wrong("03.5", "form", "an extra validator key", staging(a.S_EXTRA), "also has validator"),
    Wrong("03.5", "form", "capitalised values", staging(a.S_CAPITAL), "spelt exactly",
          also=("new_refused", "old_updatable")),
    Wrong("03.5", "form", "short keys level and action", staging(a.S_SHORT_KEYS), "exactly the keys",
          also=("new_refused", "old_updatable")),
    Wrong("03.5", "form", "a tuple", staging(a.S_TUPLE), "should be a dict", also=("new_refused", "old_updatable")),
    Wrong("03.5", "form", "an action MongoDB does not have", staging(a.S_UNKNOWN_ACTION), "errorAndLog",
          also=("new_refused", "old_updatable")),
]


#: wrong answers that only the hidden checks catch (the same rule at its boundary): (exercise, requirement, answers)
HIDDEN_ONLY = [
    ("03.1", "schema_version", v(a.version_at_least)),
    ("03.4", "schema_version", schema(a.V_VERSION_MIN)),
]


@pytest.mark.parametrize("case", HIDDEN_ONLY, ids=lambda c: f"{c[0]}-{c[1]}")
def test_hidden_checks_catch(make_lab, case):
    exercise_id, requirement, answers = case
    lab = make_lab("03")
    exercise = lab.exercise(int(exercise_id.split(".")[1]))
    if exercise._lacking(exercise.requires):
        assert exercise.evaluate(answers, include_hidden=True).status.value == "unsupported"
        return
    assert exercise.evaluate(answers, include_hidden=False).status.value == "correct"
    graded = exercise.evaluate(answers, include_hidden=True)
    failed = {o.requirement for o in graded.outcomes if o.status.value in ("incorrect", "error")}
    assert failed == {requirement}, graded


@pytest.mark.parametrize("case", WRONG, ids=str)
def test_wrong(make_lab, case):
    check_wrong(make_lab, case)


@pytest.mark.parametrize("case", RIGHT, ids=str)
def test_right(make_lab, case):
    check_right(make_lab, case)


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_reference_solution(make_lab, number):
    from tests.support.verdicts import solution

    lab = make_lab("03")
    exercise = lab.exercise(number)
    namespace = solution(lab, number)
    result = exercise.evaluate(namespace, include_hidden=True)
    if exercise._lacking(exercise.requires):
        assert result.status.value == "unsupported", result
    elif number == 5 and not lab.backend.supports(Capability.VALIDATORS):  # the form only: the writes need them
        assert result.status.value == "partly_checked" and result.score == result.max_score > 0, result
        assert {o.requirement for o in result.outcomes if o.status.value == "correct"} == {"form"}, result
    else:
        assert result.status.value == "correct" and result.score == result.max_score > 0, result


NOT_ATTEMPTED = {
    1: [{"validate": ____}, {"validate": lambda doc: ____}],
    2: [{"render_product": ____}, {"render_product": lambda doc: ____}],
    3: [{"field_types": ____}, {"field_types": lambda collection, field: ____}],
    4: [{"product_validator": ____}],
    5: [{"staging": ____}],
}
NEEDS = {3: Capability.TYPE_QUERIES, 4: Capability.VALIDATORS}  #: 03.5 judges its form everywhere


@pytest.mark.parametrize("number", sorted(NOT_ATTEMPTED))
def test_not_attempted(make_lab, number):
    lab = make_lab("03")
    exercise = lab.exercise(number)
    for namespace in NOT_ATTEMPTED[number]:
        if number in NEEDS and not lab.backend.supports(NEEDS[number]):
            assert_unsupported(exercise, namespace, str(NEEDS[number]))
        else:
            assert_not_attempted(exercise, namespace)


def _failing(result):
    return [o for o in result.outcomes if o.status.value in ("incorrect", "error")]


def test_census_explains_from_the_evidence(make_lab):
    """03.3: the explanation follows from the counts (the same words in check() and when graded), and a wrong
    count it does not explain gets none (no int/long story for a missing double)."""
    lab = make_lab("03")
    if not lab.backend.supports(Capability.TYPE_QUERIES):
        pytest.skip("03.3 needs $type queries (the honest 'needs ...' verdict is asserted by test_wrong)")
    for answer, requirement, words in ((a.census_bare, "arrays", "which $type also matches (an array's elements)"),
                                       (a.census_python_ints, "types", "an int and a long are different BSON types"),
                                       (a.census_bool_as_int, "types", "a bool is its own BSON type, not an int")):
        graded = lab.q3.evaluate(census(answer), include_hidden=True)
        failing = [o for o in _failing(graded) if o.requirement == requirement]
        assert {o.hidden for o in failing} == {False, True}, graded
        assert all(words in o.message for o in failing), graded
        shown = lab.q3.evaluate(census(answer), include_hidden=False)
        assert words in shown.message and shown.message == graded.message, (shown, graded)
    graded = lab.q3.evaluate(census(a.census_numbers_as_number), include_hidden=True)
    assert all("int32" not in o.message and "array" not in o.message for o in _failing(graded)), graded


def test_staging_refusal_in_the_labs_words(make_lab):
    """03.5: a value MongoDB does not accept costs every point, in the words of the lab's table (the engine's
    own message lists fewer levels and actions than MongoDB has), the same in check() and when graded."""
    lab = make_lab("03")  # judged before anything is written, so on every backend (mongomock too)
    for value in (a.S_UNKNOWN_ACTION, a.S_CAPITAL):
        for include_hidden in (False, True):
            result = lab.q5.evaluate(staging(value), include_hidden=include_hidden)
            assert result.score == 0 and {o.requirement for o in _failing(result)} == \
                {"form", "new_refused", "old_updatable"}, result
            for outcome in _failing(result):
                assert "is not one MongoDB accepts" in outcome.message, result
                assert "must be 'error' or 'warn'" not in outcome.message, result
                assert "must be 'off', 'strict' or 'moderate'" not in outcome.message, result


def test_error_and_log_judged_as_error(make_lab):
    """03.5: errorAndLog refuses what error refuses (the lab's table), so where the backend lacks it (MongoDB 8.1)
    error stands in and the level is judged all the same: moderate + errorAndLog gets the verdict of moderate +
    error (no requirement concerns the server's log line), strict + errorAndLog that of strict + error."""
    lab = make_lab("03")
    if not lab.backend.supports(Capability.VALIDATORS):
        pytest.skip("03.5's writes need validators (the form and constraint are asserted by test_wrong)")
    for with_log, with_error in ((a.S_ERROR_AND_LOG, {"validationLevel": "moderate", "validationAction": "error"}),
                                 (a.S_STRICT_ERROR_AND_LOG, a.S_STRICT)):
        for include_hidden in (False, True):
            logged = lab.q5.evaluate(staging(with_log), include_hidden=include_hidden)
            plain = lab.q5.evaluate(staging(with_error), include_hidden=include_hidden)
            assert not logged.unchecked, logged
            assert (logged.status, logged.score, logged.max_score) == (plain.status, plain.score, plain.max_score), \
                (logged, plain)
            assert [o.status for o in logged.outcomes] == [o.status for o in plain.outcomes], (logged, plain)
    assert lab.q5.evaluate(staging(a.S_ERROR_AND_LOG), include_hidden=True).status.value == "correct"


def test_staging_form_judged_without_validators(make_lab):
    """03.5 on a backend without validators: the form, the spelling and constraint are judged (no server is
    needed for them); only the writes are left unchecked, and they are named."""
    lab = make_lab("03")
    if lab.backend.supports(Capability.VALIDATORS):
        pytest.skip("the backend has validators: every rule of 03.5 is judged")
    right = lab.q5.evaluate(staging(a.S_RIGHT_ORDER), include_hidden=True)
    assert right.status.value == "partly_checked" and right.score == right.max_score == 1, right
    assert {o.requirement for o in right.outcomes if o.status.value == "unsupported"} == \
        {"new_refused", "old_updatable"}, right
    for wrong in (a.S_CAPITAL, a.S_CONSTRAINT, a.S_CONSTRAINT_ERROR_AND_LOG, a.S_EXTRA):
        shown = lab.q5.evaluate(staging(wrong), include_hidden=False)
        assert shown.status.value == "incorrect", shown
