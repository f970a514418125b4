"""Lab 07's checkers: answers a learner could write, right and wrong, on every backend.

``RIGHT`` holds correct answers in other idioms than the reference solution; ``WRONG`` holds answers
that break exactly one requirement of the statement (``tests/support/requirements.py`` runs both).
"""

import pytest

from course import ____
from course.store.capabilities import Capability
from course.lessons import lesson07
from tests.lessons import lesson07_answers as a
from tests.support.requirements import Right, Wrong, check_right, check_wrong
from tests.support.verdicts import assert_not_attempted, describe, solution as reference_solution

PRELUDE = "from decimal import Decimal\nfrom bson.decimal128 import Decimal128\n"
CONSTANTS = {name: getattr(lesson07, name) for name in ("CUTOFF", "FLUSH_EVERY", "SESSION_TTL")}


@pytest.fixture
def lab(make_lab):
    return make_lab("07")


def solution(lab, number):
    """The exercise's reference solution, with the constants and imports the notebook provides."""
    return reference_solution(lab, number, names=CONSTANTS, prelude=PRELUDE)


def swap(number, **replaced):
    """Answers: the reference solution of exercise 07.``number`` with some names replaced."""
    return lambda lab: {**solution(lab, number), **replaced}


RIGHT = [
    Right("07.1", "IndexModel; aggregate", {"create_attribute_index": a.index_model,
                                            "find_by_attribute": a.attr_aggregate}),
    Right("07.1", "dict keys; pairs compared in Python", {"create_attribute_index": a.index_dict,
                                                          "find_by_attribute": a.attr_python}),
    Right("07.1", "a longer named index; distinct with $eq", {"create_attribute_index": a.index_with_name,
                                                              "find_by_attribute": a.attr_distinct}),
    Right("07.2", "one-operation bulk_write", {"record_view": a.view_bulk}),
    Right("07.2", "find_one_and_update with the literal 10", {"record_view": a.view_find_one_and_update}),
    Right("07.2", "a flag and db['pages']", {"record_view": a.view_modulo_check_after}),
    Right("07.2", "update_many on the page's _id, upserted", {"record_view": a.view_replace_with_read_total}),
    Right("07.2", "reads the page, then an upserted $inc", {"record_view": a.view_checks_then_increments}),
    Right("07.3", "bulk_write of ReplaceOne; IndexModel", {"archive_before": a.archive_bulk,
                                                           "create_session_ttl": a.ttl_index_model}),
    Right("07.3", "insert_one catching DuplicateKeyError, delete one by one; named TTL index",
          {"archive_before": a.archive_one_by_one, "create_session_ttl": a.ttl_camel}),
    Right("07.3", "update_one $set upsert", swap(3, archive_before=a.archive_upsert_set)),
    Right("07.3", "$merge, then delete_many", swap(3, archive_before=a.archive_merge)),
    Right("07.3", "orders counted before and after", swap(3, archive_before=a.archive_counts_before_and_after)),
    Right("07.4", "replace_one; aggregate", {"update_policy": a.update_replace, "policy_at": a.at_aggregate}),
    Right("07.4", "raises when the guarded update matched nothing", swap(4, update_policy=a.update_raises_on_conflict)),
    Right("07.4", "the whole version read as the update's filter",
          swap(4, update_policy=a.update_guarded_by_whole_document)),
    Right("07.4", "find_one_and_update returns the old version; Python", {
        "update_policy": a.update_find_one_and_update, "policy_at": a.at_python}),
    Right("07.4", "$set of revision + 1; history first", {"update_policy": a.update_pipeline_free,
                                                          "policy_at": a.at_history_first}),
    Right("07.5", "child references, by levels, parents one by one", {
        "children_of": a.children_from_children, "descendants_of": a.descendants_by_levels,
        "breadcrumb": a.breadcrumb_by_parents}),
    Right("07.5", "aggregate, materialized path, path split", {
        "children_of": a.children_aggregate, "descendants_of": a.descendants_by_path,
        "breadcrumb": a.breadcrumb_by_path}),
    Right("07.5", "path equality, distinct, $concatArrays", {
        "children_of": a.children_by_path, "descendants_of": a.descendants_distinct,
        "breadcrumb": a.breadcrumb_aggregate}),
    Right("07.5", "$graphLookup on parent references", swap(5, descendants_of=a.descendants_graph_lookup)),
    Right("07.6", "bulk_write; $pullAll", {"enroll": a.enroll_bulk, "unenroll": a.unenroll_pull_all}),
    Right("07.6", "guarded $push; read, filter, $set", {"enroll": a.enroll_guarded_push,
                                                        "unenroll": a.unenroll_python}),
    Right("07.6", "$addToSet $each; find_one_and_update", {"enroll": a.enroll_each,
                                                           "unenroll": a.unenroll_find_one_and_update}),
    Right("07.7", "$unwind, sorted before the join", {"order_rows": a.rows_unwind}),
    Right("07.7", "$arrayElemAt and $unset", {"order_rows": a.rows_array_elem_at}),
    Right("07.7", "$expr $in and $replaceRoot", {"order_rows": a.rows_replace_root}),
    Right("07.7", "$lookup with let and a sub-pipeline", {"order_rows": a.rows_lookup_pipeline}),
    Right("07.8", "IndexModel, total descending; aggregate", {"create_covering_index": a.covering_model,
                                                              "statuses_of": a.statuses_aggregate}),
    Right("07.8", "dict keys; True/False projection", {"create_covering_index": a.covering_dict,
                                                       "statuses_of": a.statuses_exclusion_list}),
    Right("07.8", "an index with _id too; sorted by total", {"create_covering_index": a.covering_longer,
                                                              "statuses_of": a.statuses_sorted}),
    Right("07.8", "returns the cursor itself", swap(8, statuses_of=a.statuses_cursor)),
    Right("07.8", "dict keys; find(projection=..., hint the index)", {"create_covering_index": a.covering_dict,
                                                                     "statuses_of": a.statuses_hint}),
    Right("07.9", "string split; replace_one", {"to_cents": a.cents_split, "set_price": a.price_replace}),
    Right("07.9", "quantize; find_one_and_update", {"to_cents": a.cents_quantize,
                                                    "set_price": a.price_find_one_and_update}),
    Right("07.9", "as_integer_ratio; delete then insert", {"to_cents": a.cents_as_integer_ratio,
                                                           "set_price": a.price_delete_insert}),
    Right("07.9", "normalized exponent", swap(9, to_cents=a.cents_exponent)),
    Right("07.10", "a dict literal", {"self_check": dict(a.SELF_CHECK)}),
    Right("07.10", "dict() with keywords", {"self_check": dict(**a.SELF_CHECK)}),
    Right("07.10", "built from pairs, other key order", {"self_check": dict(reversed(list(a.SELF_CHECK.items())))}),
]

WRONG = [
    # 07.1
    Wrong("07.1", "index", "an index on attrs.k only", swap(1, create_attribute_index=a.index_k_only), "attrs.v"),
    Wrong("07.1", "index", "attrs.v first", swap(1, create_attribute_index=a.index_v_first), "attrs.k"),
    Wrong("07.1", "index", "two single-field indexes", swap(1, create_attribute_index=a.index_two_single), "one"),
    Wrong("07.1", "same_entry", "k and v matched in different entries", swap(1, find_by_attribute=a.attr_loose),
          "$elemMatch"),
    Wrong("07.1", "same_entry", "matches the value under any key", swap(1, find_by_attribute=a.attr_value_only),
          "product 2"),
    Wrong("07.1", "ids", "sorted descending", swap(1, find_by_attribute=a.attr_unsorted), "sort"),
    Wrong("07.1", "ids", "returns documents", swap(1, find_by_attribute=a.attr_documents), "not documents"),
    Wrong("07.1", "ids", "returns a set", swap(1, find_by_attribute=a.attr_set), "list"),
    Wrong("07.1", "ids", "no sort: the collection's natural order", swap(1, find_by_attribute=a.attr_natural_order),
          "sort"),
    # 07.2
    Wrong("07.2", "skip", "writes on every view", {"record_view": a.view_every_time}, "write nothing",
          also=("flush",)),
    Wrong("07.2", "skip", "writes $inc 0 on the other views", {"record_view": a.view_zero_increment},
          "write nothing"),
    Wrong("07.2", "flush", "adds 1 per flush", {"record_view": a.view_adds_one}, "views 30"),
    Wrong("07.2", "flush", "one counter for every page", {"record_view": a.view_one_counter}, "page"),
    Wrong("07.2", "flush", "sets views to seq: right only for one process on a fresh page",
          {"record_view": a.view_sets_views_to_seq}, "process"),
    Wrong("07.2", "flush", "reads views, adds 10, replace_one: a concurrent flush is lost",
          {"record_view": a.view_read_add_replace}, "other process's flush was lost"),
    Wrong("07.2", "skip", "flushes on views 1, 11, 21", {"record_view": a.view_off_by_one}, "write nothing",
          also=("flush",)),
    Wrong("07.2", "skip", "records the last seq on every view (and sets views to seq)",
          {"record_view": a.view_sets_seq}, "nothing", also=("flush",)),
    # 07.3
    Wrong("07.3", "moved", "copies without deleting", swap(3, archive_before=a.archive_copy_only),
          "still in db.orders"),
    Wrong("07.3", "moved", "archives without the total", swap(3, archive_before=a.archive_without_total), "whole"),
    Wrong("07.3", "kept", "archives the order placed at the cutoff", swap(3, archive_before=a.archive_lte),
          "exactly at", also=("count",)),
    Wrong("07.3", "kept", "copies the hot orders too", swap(3, archive_before=a.archive_copies_everything),
          "copied into the archive"),
    Wrong("07.3", "rerun", "insert_many fails on a rerun", swap(3, archive_before=a.archive_insert_many), "rerun"),
    Wrong("07.3", "count", "returns how many it copied anew (review 29: caught visibly, a failed run's copies in "
          "the archive)", swap(3, archive_before=a.archive_upserted_count), "that a failed run had copied"),
    Wrong("07.3", "count", "returns nothing", swap(3, archive_before=a.archive_returns_nothing), "int"),
    Wrong("07.3", "count", "returns the ids", swap(3, archive_before=a.archive_returns_ids), "int"),
    Wrong("07.3", "count", "returns the size of the archive, earlier runs included",
          swap(3, archive_before=a.archive_returns_archive_size), "earlier run"),
    Wrong("07.3", "ttl", "30 seconds, not 30 days", swap(3, create_session_ttl=a.ttl_days), "2,592,000"),
    Wrong("07.3", "ttl", "a plain index", swap(3, create_session_ttl=a.ttl_plain), "expireAfterSeconds"),
    Wrong("07.3", "ttl", "the wrong field", swap(3, create_session_ttl=a.ttl_wrong_field), "lastSeenAt"),
    Wrong("07.3", "ttl", "a compound TTL index: incorrect, not an error (review 29)",
          swap(3, create_session_ttl=a.ttl_compound), "lastSeenAt"),
    # 07.4
    Wrong("07.4", "history", "keeps no history", swap(4, update_policy=a.update_no_history), "policies_history"),
    Wrong("07.4", "history", "the history document reuses the policy's _id",
          swap(4, update_policy=a.update_history_reuses_id), "own _id"),
    Wrong("07.4", "history", "stores only the changed fields", swap(4, update_policy=a.update_history_changes_only),
          "every field"),
    Wrong("07.4", "history", "stores the new version", swap(4, update_policy=a.update_history_new_version),
          "no copy"),
    Wrong("07.4", "current", "never raises the revision", swap(4, update_policy=a.update_no_revision), "revision"),
    Wrong("07.4", "current", "replaces the policy with the changes",
          swap(4, update_policy=a.update_replaces_with_changes), "holder"),
    Wrong("07.4", "guarded", "the update filters on the _id alone", swap(4, update_policy=a.update_unguarded),
          "no longer the revision"),
    Wrong("07.4", "read", "reads the history only", swap(4, policy_at=a.at_history_only), "current"),
    Wrong("07.4", "read", "keeps _id", swap(4, policy_at=a.at_keeps_ids), "_id"),
    Wrong("07.4", "read", "the latest version for a revision that does not exist",
          swap(4, policy_at=a.at_latest_when_missing), "None"),
    # 07.5
    Wrong("07.5", "children", "every level below", swap(5, children_of=a.children_every_level), "whose parent"),
    Wrong("07.5", "children", "sorted descending", swap(5, children_of=a.children_unsorted), "sort"),
    Wrong("07.5", "descendants", "children only", swap(5, descendants_of=a.descendants_children_only),
          "every level"),
    Wrong("07.5", "descendants", "includes itself", swap(5, descendants_of=a.descendants_with_itself), "itself"),
    Wrong("07.5", "breadcrumb", "ancestors without the category", swap(5, breadcrumb=a.breadcrumb_ancestors_only),
          "itself"),
    Wrong("07.5", "breadcrumb", "leaf first", swap(5, breadcrumb=a.breadcrumb_leaf_first), "root first"),
    # 07.6
    Wrong("07.6", "both", "the student side only", swap(6, enroll=a.enroll_student_side), "both sides"),
    Wrong("07.6", "once", "$push adds a repeat twice", swap(6, enroll=a.enroll_push), "must change nothing"),
    Wrong("07.6", "unenroll", "the student side only", swap(6, unenroll=a.unenroll_student_side), "studentIds"),
    Wrong("07.6", "unenroll", "empties the course", swap(6, unenroll=a.unenroll_clears_course), "studentIds"),
    # 07.7
    Wrong("07.7", "match_first", "$lookup before $match", {"order_rows": a.rows_lookup_first}, "every order"),
    Wrong("07.7", "match_first", "an empty $match first, the filter after the join",
          {"order_rows": a.rows_empty_match_first}, "exactly the listed"),
    Wrong("07.7", "rows", "keeps the joined customer", {"order_rows": a.rows_keep_customer},
          "holds only _id, total and customerName"),
    Wrong("07.7", "rows", "customerName as an array", {"order_rows": a.rows_name_array}, "customerName"),
    Wrong("07.7", "sorted", "sorted descending", {"order_rows": a.rows_unsorted}, "_id order"),
    Wrong("07.7", "sorted", "no $sort stage", {"order_rows": a.rows_no_sort}, "not stored in _id order"),
    # 07.8
    Wrong("07.8", "index", "an index on customerId only", swap(8, create_covering_index=a.covering_customer_only),
          "status and total"),
    Wrong("07.8", "index", "the index lacks total", swap(8, create_covering_index=a.covering_missing_total),
          "status and total"),
    Wrong("07.8", "index", "customerId last", swap(8, create_covering_index=a.covering_customer_last),
          "customerId"),
    Wrong("07.8", "projection", "keeps _id", swap(8, statuses_of=a.statuses_with_id), "does not hold _id"),
    Wrong("07.8", "projection", "whole documents", swap(8, statuses_of=a.statuses_whole), "left out"),
    Wrong("07.8", "rows", "the first order only", swap(8, statuses_of=a.statuses_first_only), "orders"),
    Wrong("07.8", "rows", "every customer's orders", swap(8, statuses_of=a.statuses_all_customers), "orders"),
    Wrong("07.8", "projection", "whole documents cut in Python", swap(8, statuses_of=a.statuses_cut_in_python),
          "whole documents"),
    Wrong("07.8", "projection", "an exclusion projection", swap(8, statuses_of=a.statuses_exclusion), "exclusion"),
    Wrong("07.8", "projection", "returns customerId too", swap(8, statuses_of=a.statuses_with_customer),
          "status and total only"),
    # 07.9
    Wrong("07.9", "cents", "float arithmetic", swap(9, to_cents=a.cents_float), "float", also=("sub_cent",)),
    Wrong("07.9", "cents", "a float number of cents", swap(9, to_cents=a.cents_float_result), "int"),
    Wrong("07.9", "sub_cent", "rounds a float", swap(9, to_cents=a.cents_round), "ValueError"),
    Wrong("07.9", "sub_cent", "rounds a Decimal", swap(9, to_cents=a.cents_decimal_round), "ValueError"),
    Wrong("07.9", "decimal", "stores a float", swap(9, set_price=a.price_float), "Decimal128"),
    Wrong("07.9", "decimal", "stores the string", swap(9, set_price=a.price_string), "Decimal128"),
    Wrong("07.9", "decimal", "Decimal128 from a float", swap(9, set_price=a.price_from_float), "float"),
    Wrong("07.9", "decimal", "Decimal128(Decimal(float)) raises Inexact", swap(9, set_price=a.price_through_float),
          "binary error"),
    Wrong("07.9", "decimal", "inserts a new document each time", swap(9, set_price=a.price_insert_each_time),
          "one per sku"),
    Wrong("07.9", "decimal", "insert_one by the sku: pricing it again raises",
          swap(9, set_price=a.price_insert_one), "already had a price"),
    Wrong("07.9", "sub_cent", "quantize rounds to whole cents", swap(9, to_cents=a.cents_quantized),
          "to_cents('1.005') returned 100, an int"),
    Wrong("07.9", "cents", "the exact cents as a Decimal", swap(9, to_cents=a.cents_as_decimal), "a Decimal"),
    Wrong("07.9", "cents", "takes a third decimal, even a zero, for a fraction of a cent",
          swap(9, to_cents=a.cents_two_decimals_at_most), "exactly 820 cents"),
    # 07.10
    Wrong("07.10", "preallocation_since_wiredtiger", "preallocation saves rewrites",
          a.self_check_with(preallocation_since_wiredtiger="saves rewrites"), "preallocation_since_wiredtiger"),
    Wrong("07.10", "tree_move_subtree", "ancestors move with one write",
          a.self_check_with(tree_move_subtree="array of ancestors"), "tree_move_subtree"),
    Wrong("07.10", "tree_breadcrumb", "parent references give the breadcrumb",
          a.self_check_with(tree_breadcrumb="parent references"), "tree_breadcrumb"),
    Wrong("07.10", "approximate_balance", "a balance approximated", a.self_check_with(approximate_balance="yes"),
          "approximate_balance"),
    Wrong("07.10", "name_on_every_order_view", "$lookup on every read",
          a.self_check_with(name_on_every_order_view="$lookup on every read"), "name_on_every_order_view"),
    Wrong("07.10", "approximate_balance", "an answer that is not a choice",
          a.self_check_with(approximate_balance="maybe"), "one of"),
    Wrong("07.10", "tree_breadcrumb", "a key missing",
          {"self_check": {k: v for k, v in a.SELF_CHECK.items() if k != "tree_breadcrumb"}}, "tree_breadcrumb"),
    Wrong("07.10", "keys", "a sixth key beside the five answers (review 29)",
          {"self_check": {**a.SELF_CHECK, "notes": "trees are hard"}}, "'notes'"),
]


#: wrong answers only the hidden checks catch (the same rule on other data): (exercise, requirement, answers,
#: a piece of the message)
HIDDEN_ONLY = [
    ("07.5", "descendants", swap(5, descendants_of=a.descendants_substring), "'Space opera' is not below"),
    ("07.9", "decimal", swap(9, set_price=a.price_rounded_to_cents), "it was rounded"),
]


@pytest.mark.parametrize("case", [c for c in WRONG if c.exercise == "07.8"], ids=str)
def test_covered_messages_do_not_give_the_projection(make_lab, case):
    """07.8's messages name the broken rule and the evidence, never the projection of the fix."""
    lab = make_lab("07")
    namespace = case.answers(lab) if callable(case.answers) else dict(case.answers)
    graded = lab.exercise(8).evaluate(namespace, include_hidden=True)
    messages = " ".join(o.message for o in graded.outcomes)
    assert "({'_id': 0, 'status': 1, 'total': 1})" not in messages, describe(graded)
    assert "with '_id': 0" not in messages and "says '_id': 0" not in messages, describe(graded)


def test_a_duplicate_key_error_names_the_collection_not_the_scratch_database():
    """The grader tags each scratch database per learner: a message says "the prices collection" instead."""
    from course.lessons.lesson07.money import _without_namespace
    text = ("E11000 duplicate key error collection: course_07_scratch_glearner06_f84144fc08521d95.prices index: "
            "_id_ dup key: { _id: \"TEA-1\" }")
    assert _without_namespace(text) == ("E11000 duplicate key error in the prices collection index: _id_ dup key: "
                                        "{ _id: \"TEA-1\" }")


@pytest.mark.parametrize("case", HIDDEN_ONLY, ids=lambda c: f"{c[0]}-{c[1]}-{c[3]}")
def test_hidden_checks_catch(make_lab, case):
    exercise_id, requirement, answers, fragment = case
    lab = make_lab("07")
    exercise = lab.exercise(int(exercise_id.split(".")[1]))
    namespace = answers(lab)
    visible = exercise.evaluate(namespace, include_hidden=False)
    assert visible.status.value in ("correct", "partly_checked"), describe(visible)
    graded = exercise.evaluate(namespace, include_hidden=True)
    caught = [o for o in graded.outcomes if o.requirement == requirement and o.hidden]
    if caught and all(o.status.value == "unsupported" for o in caught):
        return  # this backend cannot run the hidden check (it says so); nothing was called correct wrongly
    failed = {o.requirement for o in graded.outcomes if o.status.value in ("incorrect", "error")}
    assert failed == {requirement}, describe(graded)
    messages = " ".join(o.message for o in graded.outcomes if o.requirement == requirement)
    assert fragment in messages, describe(graded)


def test_a_read_the_check_cannot_see_is_not_called_covered(make_lab):
    """statuses_of reading through orders.database: the rows are right, the covering rule is not applied."""
    lab = make_lab("07")
    exercise = lab.exercise(8)
    result = exercise.evaluate(swap(8, statuses_of=a.statuses_unseen)(lab), include_hidden=True)
    projection = [o for o in result.outcomes if o.requirement == "projection"]
    assert result.status.value == "partly_checked", describe(result)
    assert projection and all(o.status.value == "unsupported" for o in projection), describe(result)
    assert any(item.startswith(exercise.requirements["projection"]) for item in result.unchecked), describe(result)
    assert result.score == result.max_score > 0, describe(result)


def test_covering_rule_reads_pipelines_and_projections():
    """The rule the embedded engines apply, on reads spelt the ways pymongo allows."""
    from course.engine.exercise import Unsupported
    from course.lessons.lesson07.covered import _read_of, rule_says
    from course.engine.recording import Op

    def verdict(method, *args, **kwargs):
        try:
            return rule_says(_read_of(Op("read", "orders", method, args, kwargs)))
        except Unsupported:
            return "unsupported"

    assert verdict("find", {"customerId": 3}, {"_id": 0, "status": 1, "total": 1}) == ""
    assert verdict("find", {"customerId": {"$eq": 3}}, projection={"_id": False, "status": True, "total": True}) == ""
    assert verdict("aggregate", [{"$match": {"customerId": 3}}, {"$project": {"_id": 0, "status": 1, "total": 1}},
                                 {"$sort": {"total": -1}}]) == ""
    assert "whole documents" in verdict("find", {"customerId": 3})
    assert "whole documents" in verdict("aggregate", [{"$match": {"customerId": 3}}])
    assert "exclusion" in verdict("find", {"customerId": 3}, {"_id": 0, "customerId": 0})
    assert "exclusion" in verdict("aggregate", [{"$match": {"customerId": 3}}, {"$unset": ["_id", "customerId"]}])
    assert "_id" in verdict("find", {"customerId": 3}, ["status", "total"])
    assert "does not filter on customerId" in verdict("find", {}, {"_id": 0, "status": 1, "total": 1})
    assert "placedAt" in verdict("find", {"customerId": 3, "placedAt": {"$gt": 0}},
                                 {"_id": 0, "status": 1, "total": 1})
    assert verdict("find", {"$expr": {"$eq": ["$customerId", 3]}}, {"_id": 0, "status": 1, "total": 1}) \
        == "unsupported"
    assert verdict("aggregate", [{"$match": {"customerId": 3}}, {"$group": {"_id": "$status"}}]) == "unsupported"


def test_covered_pipeline_reads_a_servers_explain():
    """A server's aggregate explain, classic ($cursor) or slot-based, judged by its winning plan only."""
    from course.lessons.lesson07.covered import _covered, plan_stages

    classic = {"stages": [{"$cursor": {"queryPlanner": {
        "winningPlan": {"stage": "PROJECTION_COVERED", "inputStage": {"stage": "IXSCAN"}},
        "rejectedPlans": [{"stage": "FETCH", "inputStage": {"stage": "IXSCAN"}}]}}}]}
    assert _covered(plan_stages(classic))
    fetching = {"queryPlanner": {"winningPlan": {"queryPlan": {"stage": "PROJECTION_SIMPLE", "inputStage": {
        "stage": "FETCH", "inputStage": {"stage": "IXSCAN"}}}, "slotBasedPlan": {"stages": "..."}}}}
    assert not _covered(plan_stages(fetching))
    assert not _covered(plan_stages({"queryPlanner": {"winningPlan": {"stage": "COLLSCAN"}}}))


@pytest.mark.parametrize("case", WRONG, ids=str)
def test_wrong(make_lab, case):
    check_wrong(make_lab, case)


@pytest.mark.parametrize("case", RIGHT, ids=str)
def test_right(make_lab, case):
    check_right(make_lab, case)


@pytest.mark.parametrize("number", range(1, 11))
def test_reference_solution(make_lab, number):
    check_right(make_lab, Right(f"07.{number}", "reference solution", lambda lab: solution(lab, number)))


NOT_ATTEMPTED = {
    1: [{"create_attribute_index": ____, "find_by_attribute": ____}],
    2: [{"record_view": ____}, {"record_view": lambda db, page, seq: ____}],
    3: [{"archive_before": ____, "create_session_ttl": ____}],
    4: [{"update_policy": ____, "policy_at": ____}],
    5: [{"children_of": ____, "descendants_of": ____, "breadcrumb": ____}],
    6: [{"enroll": ____, "unenroll": ____}],
    7: [{"order_rows": ____}, {"order_rows": lambda order_ids: ____}],
    8: [{"create_covering_index": ____, "statuses_of": ____}],
    9: [{"to_cents": ____, "set_price": ____}],
    10: [{"self_check": ____}],
}


@pytest.mark.parametrize("number", range(1, 11))
def test_not_attempted(lab, number):
    for answers in NOT_ATTEMPTED[number]:
        assert_not_attempted(lab.exercise(number), answers)


class _FakeBackend:
    """A backend that says it has a server's explain."""

    name = "server"

    @staticmethod
    def supports(capability):
        return True


class _FakeCursor:
    def __init__(self, explained):
        self._explained = explained

    def explain(self):
        return self._explained


class _FakeDb:
    """Answers explain the way a classic-engine server does (canned documents)."""

    def __init__(self, aggregate_explain, find_explain):
        self._aggregate = aggregate_explain
        self.orders_ext = type("Ext", (), {"find": lambda _self, query: _FakeCursor(find_explain)})()

    def command(self, document):
        assert "explain" in document and document["verbosity"] == "executionStats"
        return self._aggregate


def test_lookup_costs_read_the_servers_explain():
    from course.lessons.lesson07.costs import compare

    classic = {"stages": [{"$cursor": {"executionStats": {"totalDocsExamined": 20}}},
                          {"$lookup": {"from": "customers"}, "totalDocsExamined": 20, "totalKeysExamined": 20},
                          {"$project": {}}]}
    lookup, extended = compare(_FakeDb(classic, {"executionStats": {"totalDocsExamined": 20}}), _FakeBackend(),
                               list(range(1, 21)))
    assert (lookup.documents, extended.documents) == (40, 20)
    assert "server explain" in lookup.source and lookup.engine_ms is None
    slot_based = {"queryPlanner": {}, "executionStats": {"totalDocsExamined": 40}}
    lookup, _ = compare(_FakeDb(slot_based, {"executionStats": {"totalDocsExamined": 20}}), _FakeBackend(), [1])
    assert lookup.documents == 40 and "pipeline" in lookup.source


def test_lookup_costs_on_this_backend_are_counted_and_labelled(lab):
    from course.datasets.more_patterns import shop_customers, shop_orders
    from course.lessons.lesson07.costs import compare

    if lab.backend.supports(Capability.SERVER_EXPLAIN):
        pytest.skip("a server: its explain figures are tested above")
    db = lab.db
    db.orders.insert_many(shop_orders())
    db.customers.insert_many(shop_customers())
    db.orders_ext.insert_many(shop_orders(extended=True))
    lookup, extended = compare(db, lab.backend, list(range(1, 21)))
    assert (lookup.documents, extended.documents) == (40, 20)
    assert f"{lab.backend.name}'s own time, not MongoDB's" in str(lookup)
