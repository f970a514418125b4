"""Lab 05's checkers: right answers in other idioms, wrong answers per requirement, not attempted."""

import pytest

from course import ____
from course.store.capabilities import Capability
from tests.lessons import lesson05_answers as a
from tests.support.requirements import Right, Wrong, check_right, check_wrong
from tests.support.verdicts import assert_not_attempted, assert_unsupported
from tests.support.verdicts import solution as reference_solution

PRELUDE = "import time\nfrom tqdm.auto import tqdm\n"


def solution(lab, *numbers):
    """The exercises' reference solutions, after the imports the notebook's first cell makes."""
    return reference_solution(lab, *numbers, prelude=PRELUDE)


def with_to_v2(make):
    """Answers to 05.4: the reference to_v2 of 05.2 and a batch job built on it."""
    def answers(lab):
        right = solution(lab, 2)
        return {**right, "migrate_in_batches": make(right["to_v2"])}
    return answers


def with_readers(**names):
    """Answers to 05.3: the reference readers with some of them replaced."""
    return lambda lab: {**solution(lab, 3), **names}


def with_stages(**names):
    """Answers to 05.6: the reference validator and stages with some of them replaced."""
    return lambda lab: {**solution(lab, 6), **names}


def readers(upgrade, read_order, find_by_phone):
    """A full answer to 05.3."""
    return {"upgrade": upgrade, "read_order": read_order, "find_by_phone": find_by_phone}


RIGHT = [
    Right("05.1", "$project, Counter and distinct() for the longs", {"audit": a.audit_counter}),
    Right("05.1", "Python classification helper and two $type queries", {"audit": a.audit_python_helper}),
    Right("05.1", "two $group pipelines split by a $type $match", {"audit": a.audit_two_pipelines}),
    Right("05.1", "the one-pipeline $group census, as on a server", {"audit": a.audit_group}),
    Right("05.1", "isinstance alone, Int64 as long (review47; needs the Int64 decoding quirk absorbed)",
          {"audit": a.audit_isinstance}),
    Right("05.2", "find_one_and_update, $ifNull pipeline in three stages",
          {"to_v2": a.TO_V2_IFNULL, "migrate_order": a.migrate_order_fam}),
    Right("05.2", "single-operation bulk_write, $switch, schema_version: None",
          {"to_v2": a.TO_V2_SWITCH, "migrate_order": a.migrate_order_bulk}),
    Right("05.2", "update_many on one _id through a filter helper",
          {"to_v2": a.TO_V2_SWITCH, "migrate_order": a.migrate_order_many}),
    Right("05.2", "customer: {phones: ...} in $set, which a server sets inside customer (review 29)",
          {"to_v2": a.TO_V2_EMBEDDED, "migrate_order": a.make_migrate_order(a.TO_V2_EMBEDDED)}),
    Right("05.4", "the ranges walk with customer: {phones: ...} in its pipeline (review 29)",
          with_to_v2(lambda to_v2: a.make_batch_range_bounds(a.TO_V2_EMBEDDED))),
    Right("05.3", "deepcopy upgrade, find_one shorthand, aggregate returned as a map",
          readers(a.upgrade_deepcopy, a.read_order_by_value, a.find_by_phone_aggregate)),
    Right("05.3", "rebuilt dict, cursor with limit(1), two queries merged old field first",
          readers(a.upgrade_rebuild, a.read_order_loop, a.find_by_phone_two_queries)),
    Right("05.3", "generator lookup with $in, upgrade that does not take None",
          readers(a.upgrade_no_none, a.read_order_loop, a.find_by_phone_generator)),
    Right("05.4", "walks _id ranges, resumable from the last _id, then a final sweep",
          with_to_v2(a.make_batch_by_id_ranges)),
    Right("05.4", "version filter and _id > last, updated by _id bounds, then a final sweep",
          with_to_v2(a.make_batch_range_bounds)),
    Right("05.4", "bulk_write of one UpdateMany per batch, helper function", with_to_v2(a.make_batch_bulk)),
    Right("05.4", "whole walks by _id until a walk migrates nothing",
          with_to_v2(a.make_batch_walks_until_a_pass_moves_nothing)),
    Right("05.4", "bulk_write of an UpdateOne per order, one per batch", with_to_v2(a.make_batch_bulk_update_ones)),
    Right("05.4", "update_one per order inside each batch", with_to_v2(a.make_batch_update_one_each)),
    Right("05.4", "distinct() selection, pauses only between batches, a summary line",
          with_to_v2(a.make_batch_pause_before_and_summary)),
    Right("05.5", "aggregation with $expr, $ifNull and $arrayElemAt", {"disagreements": a.disagreements_aggregate}),
    Right("05.5", "projection as a list, Python helper, sorted()", {"disagreements": a.disagreements_python}),
    Right("05.5", "sort as a list of pairs, list comprehension", {"disagreements": a.disagreements_sorted_cursor}),
    Right("05.5", "$expr with $first, no $ifNull", {"disagreements": a.disagreements_first_operator}),
    Right("05.5", "$type missing, $slice, $addFields", {"disagreements": a.disagreements_type_missing}),
    Right("05.6", "bsonType with minimum/maximum, items typed, stages as lists",
          {"v2_validator": a.VALIDATOR_RANGE, "stages": [list(s) for s in a.STAGES]}),
    Right("05.6", "query operators beside $jsonSchema", {"v2_validator": a.VALIDATOR_WITH_QUERY, "stages": a.STAGES}),
    Right("05.6", "number with an enum, stages as a tuple",
          {"v2_validator": a.VALIDATOR_NUMBER_ENUM, "stages": tuple(a.STAGES)}),
    Right("05.6", "strict and warn first: every violation logged, legacy updates included",
          {"v2_validator": a.VALIDATOR_RANGE,
           "stages": [("strict", "warn"), ("moderate", "error"), ("strict", "error")]}),
    Right("05.6", "errorAndLog where error is asked (MongoDB 8.1)",
          {"v2_validator": a.VALIDATOR_RANGE,
           "stages": [("moderate", "warn"), ("moderate", "errorAndLog"), ("strict", "errorAndLog")]}),
]

WRONG = [
    # 05.1: the audit
    Wrong("05.1", "longs", "decides long by the value, so Int64(12) counts as int", {"audit": a.audit_long_by_value},
          "long"),
    Wrong("05.1", "version", "version 1 reported as None", {"audit": a.audit_version_none}, "version 1"),
    Wrong("05.1", "version", "2 if schema_version is 2, else 1 (review 29)", {"audit": a.audit_two_versions},
          "version 1"),
    Wrong("05.1", "types", "Python's type names", {"audit": a.audit_python_type_names}, "string"),
    Wrong("05.1", "types", "a double named 'float' (review47)", {"audit": a.audit_double_named_float}, "'float'"),
    Wrong("05.1", "types", "a bool named 'int' (review47)", {"audit": a.audit_bool_named_int}, "'bool'"),
    Wrong("05.1", "types", "an absent phone named 'null' (review47)", {"audit": a.audit_missing_named_null},
          "phone 'null', phones 'array', views 'int'"),
    Wrong("05.1", "types", "a null phone named 'missing' (review 29)", {"audit": a.audit_null_named_missing},
          "phone 'null'"),
    Wrong("05.1", "form", "a list of (shape, count) pairs", {"audit": a.audit_pairs}, "dict"),
    Wrong("05.1", "counts", "audits only the version 1 orders", {"audit": a.audit_legacy_only}, "orders"),
    # 05.2: migrate one order on write
    Wrong("05.2", "shape", "keeps customer.phone",
          {"to_v2": a.TO_V2_KEEPS_PHONE, "migrate_order": a.make_migrate_order(a.TO_V2_KEEPS_PHONE)},
          "customer.phone"),
    Wrong("05.2", "shape", "replaces the whole customer, losing the name",
          {"to_v2": a.TO_V2_REPLACES_CUSTOMER, "migrate_order": a.make_migrate_order(a.TO_V2_REPLACES_CUSTOMER)},
          "is missing"),
    Wrong("05.2", "shape", "a right pipeline, but the filter asks for schema_version 1 (review 29: blamed on the "
          "pipeline before)", {"to_v2": a.TO_V2_SWITCH, "migrate_order": a.migrate_order_filter_on_version_1},
          "matched no document", also=("no_phone",)),
    Wrong("05.2", "no_phone", "[null] for an order without a phone",
          {"to_v2": a.TO_V2_NULL, "migrate_order": a.make_migrate_order(a.TO_V2_NULL)}, "[]"),
    Wrong("05.2", "only_v1", "no version filter: a version 2 order is overwritten",
          {"to_v2": a.TO_V2_SWITCH, "migrate_order": a.make_migrate_order(a.TO_V2_SWITCH, version_filter=False)},
          "version 2"),
    Wrong("05.2", "count", "returns True/False", {"to_v2": a.TO_V2_SWITCH, "migrate_order": a.migrate_order_bool},
          "int"),
    Wrong("05.2", "count", "returns 1 even when nothing changed",
          {"to_v2": a.TO_V2_SWITCH, "migrate_order": a.migrate_order_always_one}, "0"),
    Wrong("05.2", "only_v1", "upserts: creates missing orders, and a second run inserts again",
          {"to_v2": a.TO_V2_SWITCH, "migrate_order": a.migrate_order_upserts}, "do not upsert", also=("count",)),
    Wrong("05.2", "one_update", "reads the phone, then writes it: a concurrent change is lost",
          {"to_v2": a.TO_V2_SWITCH, "migrate_order": a.migrate_order_read_then_write}, "read"),
    Wrong("05.2", "one_update", "two updates: half version 1, half version 2 in between",
          {"to_v2": a.TO_V2_SWITCH, "migrate_order": a.migrate_order_two_updates}, "one update"),
    # 05.3: read both versions
    Wrong("05.3", "upgrade", "[None] for an order without a phone", with_readers(upgrade=a.upgrade_null_phone), "[]"),
    Wrong("05.3", "upgrade", "keeps customer.phone", with_readers(upgrade=a.upgrade_keeps_phone), "customer.phone"),
    Wrong("05.3", "upgrade", "pops customer.phone of a dual-written version 2 order (review 29)",
          with_readers(upgrade=a.upgrade_pops_every_phone), "customer.phone"),
    Wrong("05.3", "read_order", "returns version 1 as stored", with_readers(read_order=a.read_order_raw),
          "customer.phones"),
    Wrong("05.3", "read_order", "raises for an order that does not exist",
          with_readers(upgrade=a.upgrade_no_none, read_order=a.read_order_raises_when_missing), "None"),
    Wrong("05.3", "find_by_phone", "queries the new field only", with_readers(find_by_phone=a.find_by_phone_new_field),
          "version 1"),
    Wrong("05.3", "find_by_phone", "customer.phones matched on its first phone only (review47)",
          with_readers(find_by_phone=a.find_by_phone_first_phone), "second in customer.phones"),
    Wrong("05.3", "find_by_phone", "returns version 1 orders as stored", with_readers(find_by_phone=a.find_by_phone_raw),
          "customer.phones"),
    Wrong("05.3", "read_only", "migrates the order it reads", with_readers(read_order=a.read_order_migrates), "wr"),
    Wrong("05.3", "read_only", "counts a view on every order it finds",
          with_readers(find_by_phone=a.find_by_phone_counts_views), "wr"),
    # 05.4: the batch job
    Wrong("05.4", "only_v1", "no version filter: version 2 orders rewritten", with_to_v2(a.make_batch_no_version_filter),
          "version 2"),
    Wrong("05.4", "only_v1", "version filter in the selection only: a concurrent migration is overwritten",
          with_to_v2(a.make_batch_unguarded_update), "version filter in the update"),
    Wrong("05.4", "batch_size", "batches of batch_size + 1", with_to_v2(a.make_batch_off_by_one), "batch"),
    Wrong("05.4", "batch_size", "one update_many for everything", with_to_v2(a.make_batch_all_at_once), "batch"),
    Wrong("05.4", "batch_size", "a final sweep in one update_many (review 29)",
          with_to_v2(a.make_batch_unbounded_sweep), "written behind the walk"),
    Wrong("05.4", "returns", "adds len(ids), not what the update changed (review 29)",
          with_to_v2(a.make_batch_counts_ids), "between its read and its update"),
    Wrong("05.4", "log", "one log line per order", with_to_v2(a.make_batch_logs_per_order), "log"),
    Wrong("05.4", "pause", "sleeps a fixed 0.05 s", with_to_v2(a.make_batch_fixed_pause), "pause"),
    Wrong("05.4", "returns", "reports the orders it looked at", with_to_v2(a.make_batch_counts_selected), "returned"),
    Wrong("05.4", "resumable", "swallows the interruption", with_to_v2(a.make_batch_swallows), "interrupt"),
    Wrong("05.4", "resumable", "catches what sleep raises and carries on", with_to_v2(a.make_batch_carries_on),
          "more times"),
    Wrong("05.4", "migrates", "a walk by _id with no final sweep misses an order written behind it",
          with_to_v2(a.make_batch_walk_no_sweep), "roughly ordered"),
    Wrong("05.4", "migrates", "a snapshot of the _ids misses orders written meanwhile",
          with_to_v2(a.make_batch_snapshot), "version 1"),
    Wrong("05.4", "migrates", "[null] for orders without a phone (its own pipeline)",
          with_to_v2(lambda to_v2: a.make_batch_range_bounds(a.TO_V2_NULL)), "[]"),
    # 05.5: reconcile
    Wrong("05.5", "first", "accepts the phone anywhere in the list", {"disagreements": a.disagreements_anywhere},
          "first"),
    Wrong("05.5", "no_phone", "only orders with both fields", {"disagreements": a.disagreements_needs_both}, "phone"),
    Wrong("05.5", "unmigrated", "lists orders without customer.phones",
          {"disagreements": a.disagreements_includes_unmigrated}, "customer.phones"),
    Wrong("05.5", "order", "natural order instead of _id order", {"disagreements": a.disagreements_unsorted}, "order"),
    Wrong("05.5", "form", "{'_id': ...} documents instead of _ids", {"disagreements": a.disagreements_documents},
          "_id"),
    Wrong("05.5", "read_only", "repairs what it finds", {"disagreements": a.disagreements_repairs}, "read"),
    Wrong("05.5", "read_only", "writes its report with $merge", {"disagreements": a.disagreements_report_collection},
          "read"),
    # 05.6: staging
    Wrong("05.6", "accepts_v2", "views must be an int", with_stages(v2_validator=a.VALIDATOR_INT_VIEWS), "long"),
    Wrong("05.6", "accepts_v2", "phones must not be empty", with_stages(v2_validator=a.VALIDATOR_NONEMPTY), "[]"),
    Wrong("05.6", "refuses_v1", "phones required, no version rule", with_stages(v2_validator=a.VALIDATOR_NO_VERSION), "schema_version"),
    Wrong("05.6", "refuses_v1", "schema_version at least 2: version 3 passes (review 38)",
          with_stages(v2_validator=a.VALIDATOR_VERSION_AT_LEAST_2), "schema_version: 3"),
    Wrong("05.6", "refuses_v1", "schema_version any int: version 1 passes (review 38)",
          with_stages(v2_validator=a.VALIDATOR_VERSION_ANY_INT), "schema_version: 1"),
    Wrong("05.6", "requires_phones", "only the version is required", with_stages(v2_validator=a.VALIDATOR_VERSION_ONLY),
          "phones"),
    Wrong("05.6", "form", "settings as dicts instead of pairs", with_stages(stages=[
        {"validationLevel": level, "validationAction": action} for level, action in a.STAGES]), "pairs"),
    Wrong("05.6", "form", "one flat pair", with_stages(stages=["moderate", "warn"]), "three",
          also=("stage1", "stage2", "stage3")),
    Wrong("05.6", "stage1", "error from the start",
          with_stages(stages=[("moderate", "error"), ("moderate", "error"), ("strict", "error")]), "first"),
    Wrong("05.6", "stage1", "validation off at first: nothing refused, nothing logged",
          with_stages(stages=[("off", "error"), ("moderate", "error"), ("strict", "error")]), "logged"),
    Wrong("05.6", "stage1", "off with warn, as the old example read",
          with_stages(stages=[("off", "warn"), ("moderate", "error"), ("strict", "error")]), "logged"),
    Wrong("05.6", "stage2", "strict straight after warn",
          with_stages(stages=[("moderate", "warn"), ("strict", "error"), ("strict", "error")]), "legacy"),
    Wrong("05.6", "stage2", "still warn at the second stage",
          with_stages(stages=[("moderate", "warn"), ("moderate", "warn"), ("strict", "error")]), "version 1"),
    Wrong("05.6", "stage3", "finishes moderate",
          with_stages(stages=[("moderate", "warn"), ("moderate", "error"), ("moderate", "error")]), "every order"),
]


@pytest.fixture
def lab(make_lab):
    return make_lab("05")


@pytest.mark.parametrize("case", WRONG, ids=str)
def test_wrong(make_lab, case):
    check_wrong(make_lab, case)


@pytest.mark.parametrize("case", RIGHT, ids=str)
def test_right(make_lab, case):
    check_right(make_lab, case)


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5, 6])
def test_reference_solution(make_lab, number):
    check_right(make_lab, Right(f"05.{number}", "reference solution",
                                lambda lab: solution(lab, *((2, 4) if number == 4 else (number,)))))


# not attempted --------------------------------------------------------------------------------
NOT_ATTEMPTED = {
    1: [{"audit": ____}, {"audit": lambda orders: ____}],
    2: [{"to_v2": ____, "migrate_order": ____}, "reference-with-placeholder-migrate_order"],
    3: [{"upgrade": ____, "read_order": ____, "find_by_phone": ____}, "reference-with-placeholder-find_by_phone"],
    4: [{"migrate_in_batches": ____}, {"migrate_in_batches": lambda orders, **kw: ____}],
    5: [{"disagreements": ____}, {"disagreements": lambda orders: ____}],
    6: [{"v2_validator": ____, "stages": ____}, "reference-with-placeholder-stages"],
}
_REQUIRES = {1: Capability.TYPE_QUERIES, 2: Capability.PIPELINE_UPDATES, 4: Capability.PIPELINE_UPDATES,
             6: Capability.VALIDATORS}


def _placeholder_answers(lab, number, answers):
    if not isinstance(answers, str):
        return answers
    if number == 2:
        return {**solution(lab, 2), "migrate_order": lambda orders, order_id: ____}
    if number == 3:
        return {**solution(lab, 3), "find_by_phone": lambda orders, phone: ____}
    return {**solution(lab, 6), "stages": ____}


@pytest.mark.parametrize("number", sorted(NOT_ATTEMPTED))
def test_not_attempted(lab, number):
    exercise = lab.exercise(number)
    for answers in NOT_ATTEMPTED[number]:
        namespace = _placeholder_answers(lab, number, answers)
        needed = _REQUIRES.get(number)
        if needed is not None and not lab.backend.supports(needed):
            assert_unsupported(exercise, namespace, str(needed))
        else:
            assert_not_attempted(exercise, namespace)


def test_error_and_log_stages_judged_as_error(make_lab):
    """05.6: errorAndLog refuses what error refuses, so where the backend lacks it (MongoDB 8.1) error stands in
    and every stage is judged: the same verdict, score and outcomes as the stages with error, nothing unchecked."""
    lab = make_lab("05")
    if not lab.backend.supports(Capability.VALIDATORS):
        pytest.skip("05.6 needs validators (test_not_attempted and test_right assert what mongomock says)")
    exercise = lab.exercise(6)
    for logged_stages, plain_stages in (
            ([("moderate", "warn"), ("moderate", "errorAndLog"), ("strict", "errorAndLog")], a.STAGES),
            ([("moderate", "warn"), ("strict", "errorAndLog"), ("strict", "errorAndLog")],
             [("moderate", "warn"), ("strict", "error"), ("strict", "error")])):
        logged = exercise.evaluate({"v2_validator": a.VALIDATOR_RANGE, "stages": logged_stages}, include_hidden=True)
        plain = exercise.evaluate({"v2_validator": a.VALIDATOR_RANGE, "stages": plain_stages}, include_hidden=True)
        assert not logged.unchecked, logged
        assert (logged.status, logged.score) == (plain.status, plain.score), (logged, plain)
        assert [o.status for o in logged.outcomes] == [o.status for o in plain.outcomes], (logged, plain)
