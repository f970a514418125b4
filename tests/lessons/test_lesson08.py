"""Lab 08's checkers: answers a learner could write, right and wrong, on every backend.

``RIGHT`` holds correct answers in other idioms than the reference solution; ``WRONG`` holds answers
that break exactly one requirement of the statement (``tests/support/requirements.py`` runs both).
"""

import pytest

from course import ____
from course.lessons.lesson08.shard import PREDICTED_READS, true_route
from tests.lessons import lesson08_answers as a
from tests.support.requirements import Right, Wrong, check_right, check_wrong
from tests.support.verdicts import assert_not_attempted, describe, solution as reference_solution


@pytest.fixture
def lab(make_lab):
    return make_lab("08")


def solution(lab, number):
    return reference_solution(lab, number)


def swap(number, **replaced):
    """Answers: the reference solution of exercise 08.``number`` with some names replaced."""
    return lambda lab: {**solution(lab, number), **replaced}


ROUTING = {name: true_route(name).kind for name in PREDICTED_READS}
FLIP = {"targeted": "broadcast", "broadcast": "targeted"}

RIGHT = [
    *[Right("08.1", label, {"fleet_key": key}) for label, key in a.FLEET_RIGHT.items()],
    Right("08.2", "a dict literal", {"routing": dict(ROUTING)}),
    Right("08.2", "dict() with keywords", {"routing": dict(**ROUTING)}),
    Right("08.2", "built from pairs, other order", {"routing": dict(reversed(list(ROUTING.items())))}),
    *[Right("08.3", label, {"refined_key": key}) for label, key in a.REFINE_RIGHT.items()],
    Right("08.4", "pymongo's Collation object in create_index", {"create_name_index": a.index_collation_object,
                                                                 "name_search": a.search_eq}),
    Right("08.4", "IndexModel; $eq", {"create_name_index": a.index_model, "name_search": a.search_eq}),
    Right("08.4", "compound index; $in and a sort", {"create_name_index": a.index_compound,
                                                     "name_search": a.search_in}),
    Right("08.4", "descending index; every default spelt out",
          {"create_name_index": a.index_descending, "name_search": a.search_full_collation}),
    Right("08.5", "start_after; bulk_write", {"watch_options": a.options_start_after, "apply_change": a.apply_bulk}),
    Right("08.5", "resume_after=None; one order at a time", {"watch_options": a.options_always,
                                                             "apply_change": a.apply_one_by_one}),
    Right("08.5", "a $match pipeline; match/case", {"watch_options": a.options_with_pipeline,
                                                    "apply_change": a.apply_match_case}),
    Right("08.4", "a pymongo Collation object in the search", swap(4, name_search=a.search_collation_object)),
    Right("08.5", "the driver's default wait; the copy set whole", {"watch_options": a.options_waiting,
                                                                     "apply_change": a.apply_whole_copy}),
    Right("08.6", "command(name, value, **fields)", swap(6, create_readings=a.create_by_command_name)),
    Right("08.6", "the expiry set by collMod", swap(6, create_readings=a.create_then_collmod)),
    Right("08.6", "the create command; insert_many", {"create_readings": a.create_by_command,
                                                      "record": a.record_insert_many}),
    Right("08.6", "keywords; bulk_write", {"create_readings": a.create_with_dict, "record": a.record_bulk}),
    Right("08.6", "the reference collection; a built dict", swap(6, record=a.record_built)),
    Right("08.7", "a dict literal", {"limits": dict(a.LIMITS)}),
    Right("08.7", "dict() with keywords", {"limits": dict(**a.LIMITS)}),
    Right("08.7", "floats where numbers are asked", a.limits_with(document_mib=16.0, transaction_seconds=60.0)),
]

WRONG = [
    *[Wrong("08.1", requirement, label, {"fleet_key": key}, fragment)
      for label, (requirement, key, fragment) in a.FLEET_WRONG.items()],
    Wrong("08.1", "inserts", "a field name, not a dict", {"fleet_key": "deviceId"}, "the string",
          also=("queries",)),
    Wrong("08.1", "inserts", "an empty dict", {"fleet_key": {}}, "got {}", also=("queries",)),
    Wrong("08.1", "inserts", "ts ranged", {"fleet_key": {"ts": 1}}, "last chunk", also=("queries",)),
    Wrong("08.1", "inserts", "two hashed fields", {"fleet_key": {"deviceId": "hashed", "ts": "hashed"}},
          "at most one hashed", also=("queries",)),
    *[Wrong("08.2", name, f"{name} flipped", {"routing": {**ROUTING, name: FLIP[ROUTING[name]]}}, name)
      for name in ROUTING],
    Wrong("08.2", "one_email", "a key missing", {"routing": {k: v for k, v in ROUTING.items() if k != "one_email"}},
          "no key"),
    Wrong("08.3", "refine", "issuedAt first", {"refined_key": {"issuedAt": 1, "tenantId": 1}}, "does not start"),
    Wrong("08.3", "refine", "the tenant hashed", {"refined_key": {"tenantId": "hashed", "_id": 1}},
          "does not start"),
    Wrong("08.3", "refine", "the current key again", {"refined_key": {"tenantId": 1}}, "current key",
          also=("no_jumbo",)),
    Wrong("08.3", "refine", "the tenant descending", {"refined_key": {"tenantId": -1, "invoiceNo": 1}},
          "descending", also=("no_jumbo",)),
    Wrong("08.3", "no_jumbo", "status: three values", {"refined_key": {"tenantId": 1, "status": 1}}, "cannot split"),
    Wrong("08.3", "no_jumbo", "a field invoices lack", {"refined_key": {"tenantId": 1, "number": 1}},
          "cannot split"),
    Wrong("08.4", "index", "strength 1", swap(4, create_name_index=a.index_strength_1), "strength"),
    Wrong("08.4", "index", "an index named name_ci without its collation", swap(4, create_name_index=a.index_named_plain),
          "with a collation"),
    Wrong("08.4", "index", "no collation", swap(4, create_name_index=a.index_plain), "with a collation"),
    Wrong("08.4", "index", "an index on a lower-cased copy", swap(4, create_name_index=a.index_lower_copy),
          "with a collation"),
    Wrong("08.4", "matches", "limit 1", swap(4, name_search=a.search_first_only), "misses"),
    Wrong("08.4", "matches", "basic tier only", swap(4, name_search=a.search_basic_tier), "misses"),
    Wrong("08.4", "indexed", "anchored $regex with i", swap(4, name_search=a.search_regex), "$regex"),
    Wrong("08.4", "indexed", "a compiled regex", swap(4, name_search=a.search_compiled_regex), "$regex"),
    Wrong("08.4", "indexed", "numericOrdering in the search only", swap(4, name_search=a.search_numeric_ordering),
          "numericOrdering"),
    Wrong("08.4", "indexed", "locale en_US in the search only", swap(4, name_search=a.search_en_us), "locale"),
    Wrong("08.4", "index", "tier first, then name", swap(4, create_name_index=a.index_tier_first), "first field"),
    Wrong("08.4", "indexed", "a French collation", swap(4, name_search=a.search_french), "same collation"),
    Wrong("08.4", "matches", "no collation", swap(4, name_search=a.search_no_collation), "misses",
          also=("indexed",)),
    Wrong("08.5", "resume", "ignores the token", swap(5, watch_options=a.options_ignore_token), "missed"),
    Wrong("08.5", "lookup", "no full_document", swap(5, watch_options=a.options_no_lookup), "fullDocument"),
    Wrong("08.5", "lookup", "whenAvailable: a post-image customers does not record",
          swap(5, watch_options=a.options_when_available), "changeStreamPreAndPostImages"),
    Wrong("08.5", "lookup", "updateLookup on the first start only",
          swap(5, watch_options=a.options_lookup_first_start_only), "fullDocument"),
    Wrong("08.5", "idempotent", "a gone customer taken for a delete", swap(5, apply_change=a.apply_gone_drops_phone),
          "fullDocument is None"),
    Wrong("08.5", "apply", "a version counter on the orders", swap(5, apply_change=a.apply_counts_versions),
          "other fields changed", also=("idempotent",)),
    Wrong("08.5", "apply", "every field of the customer copied", swap(5, apply_change=a.apply_copies_every_field),
          "name and phone only"),
    Wrong("08.5", "apply", "copies found by the name they hold", swap(5, apply_change=a.apply_by_copied_name),
          "expected"),
    Wrong("08.5", "apply", "an insert upserts an order", swap(5, apply_change=a.apply_insert_upserts),
          "never adds an order"),
    Wrong("08.5", "apply", "the first order only", swap(5, apply_change=a.apply_first_order_only), "expected"),
    Wrong("08.5", "apply", "a delete drops the copy", swap(5, apply_change=a.apply_delete_drops_copy), "None"),
    Wrong("08.5", "apply", "a delete deletes the orders", swap(5, apply_change=a.apply_deletes_orders), "is gone"),
    Wrong("08.5", "apply", "replace events ignored", swap(5, apply_change=a.apply_updates_only), "Carla Dias"),
    Wrong("08.5", "idempotent", "fullDocument None raises", swap(5, apply_change=a.apply_trusts_full_document),
          "raised"),
    Wrong("08.6", "timeseries", "an ordinary collection with a TTL index",
          swap(6, create_readings=a.create_ordinary_with_ttl), "ordinary", also=("expiry",)),
    Wrong("08.6", "timeseries", "granularity seconds", swap(6, create_readings=a.create_seconds), "granularity"),
    Wrong("08.6", "expiry", "no expiry", swap(6, create_readings=a.create_no_expiry), "2,592,000"),
    Wrong("08.6", "expiry", "30 seconds", swap(6, create_readings=a.create_30_seconds), "2,592,000"),
    Wrong("08.6", "measurement", "the bucket pattern by hand", swap(6, record=a.record_bucket), "one document per"),
    Wrong("08.6", "measurement", "sensorId instead of sensor", swap(6, record=a.record_renamed), "sensorId"),
    Wrong("08.6", "timeseries", "bucket spans instead of a granularity", swap(6, create_readings=a.create_bucket_span),
          "granularity"),
    Wrong("08.6", "expiry", "30 days in minutes", swap(6, create_readings=a.create_30_days_in_minutes), "43200"),
    Wrong("08.6", "measurement", "each measurement stored twice", swap(6, record=a.record_twice), "12 documents"),
    Wrong("08.6", "measurement", "the sensor nested in a document", swap(6, record=a.record_nested_sensor),
          "where the measurement was"),
    Wrong("08.7", "document_mib", "16,000 KB", a.limits_with(document_mib=16000), "document_mib"),
    Wrong("08.7", "nesting_depth", "32 levels", a.limits_with(nesting_depth=32), "nesting_depth"),
    Wrong("08.7", "indexes_per_collection", "unlimited", a.limits_with(indexes_per_collection=None), "a number"),
    Wrong("08.7", "fields_per_compound_index", "31", a.limits_with(fields_per_compound_index=31), "31"),
    Wrong("08.7", "transaction_seconds", "a minute as a string", a.limits_with(transaction_seconds="60"), "number"),
    Wrong("08.7", "refused_schema_keyword", "required", a.limits_with(refused_schema_keyword="required"),
          "refused_schema_keyword"),
    Wrong("08.7", "on_write_conflict", "retry the write", a.limits_with(on_write_conflict="retry the failed write only"),
          "TransientTransactionError"),
    Wrong("08.7", "refused_schema_keyword", "not a choice", a.limits_with(refused_schema_keyword="$ref"), "one of"),
]


@pytest.mark.parametrize("case", WRONG, ids=str)
def test_wrong(make_lab, case):
    check_wrong(make_lab, case)


@pytest.mark.parametrize("case", RIGHT, ids=str)
def test_right(make_lab, case):
    check_right(make_lab, case)


@pytest.mark.parametrize("number", range(1, 8))
def test_reference_solution(make_lab, number):
    check_right(make_lab, Right(f"08.{number}", "reference solution", lambda lab: solution(lab, number)))


NOT_ATTEMPTED = {
    1: [{"fleet_key": ____}],
    2: [{"routing": ____}, {"routing": {"one_tenant": ____}}],
    3: [{"refined_key": ____}],
    4: [{"create_name_index": ____, "name_search": ____}, {"create_name_index": a.index_model,
                                                            "name_search": lambda name: ____}],
    5: [{"watch_options": ____, "apply_change": ____}, {"watch_options": lambda token: ____,
                                                         "apply_change": a.apply_bulk}],
    6: [{"create_readings": ____, "record": ____}],
    7: [{"limits": ____}],
}


@pytest.mark.parametrize("number", range(1, 8))
def test_not_attempted(lab, number):
    for answers in NOT_ATTEMPTED[number]:
        result = lab.exercise(number).evaluate(answers, include_hidden=True)
        if result.status.value == "unsupported":  # mongomock: the backend lacks what the exercise needs
            assert "needs" in result.message, describe(result)
            continue
        assert_not_attempted(lab.exercise(number), answers)


def test_a_regex_search_finds_the_same_names_but_is_not_indexed(make_lab):
    """The lesson's point: $regex /i matches exactly what the collation does; only the index use differs."""
    lab = make_lab("08")
    exercise = lab.exercise(4)
    result = exercise.evaluate(swap(4, name_search=a.search_regex)(lab), include_hidden=True)
    if result.status.value == "unsupported":
        return
    by_requirement = {o.requirement: o.status.value for o in result.outcomes}
    assert by_requirement["matches"] == "correct" and by_requirement["indexed"] == "incorrect", describe(result)


def test_the_resume_check_stops_the_consumer_where_it_says(make_lab, monkeypatch):
    """The loop is stopped after the stated numbers of events: the deliveries add up to the changes, once each."""
    from course.lessons.lesson08 import streams as streams

    lab = make_lab("08")
    if not lab.backend.supports(streams.Capability.CHANGE_STREAMS):
        pytest.skip("no change streams on this backend")
    applied = []
    real = streams.follow

    def counting(*args, **kwargs):
        try:
            count = real(*args, **kwargs)
        except streams.Stopped:
            applied.append(("stopped", kwargs.get("stop_after")))
            raise
        applied.append(("drained", count))
        return count

    monkeypatch.setattr(streams, "follow", counting)
    result = lab.exercise(5).evaluate(reference_solution(lab, 5), include_hidden=False)
    assert result.status.value == "correct", describe(result)
    plan = [entry for entry in applied][:4]
    assert plan[:2] == [("stopped", 1), ("stopped", 2)], applied


def test_a_collation_object_that_crossed_the_grader_is_not_judged(make_lab):
    """course grade receives pymongo's Collation, returned by name_search, as an opaque type name: the search
    is reported not checked (partly_checked), never incorrect for a right answer."""
    from course.grading.channel import Opaque
    from course.lessons.lesson08.collation import OPAQUE_COLLATION

    lab = make_lab("08")
    crossed = swap(4, name_search=lambda name: {"filter": {"name": name}, "collation": Opaque("Collation")})(lab)
    result = lab.exercise(4).evaluate(crossed, include_hidden=True)
    if result.status.value == "unsupported":  # mongomock: no collations at all
        return
    assert result.status.value == "partly_checked", describe(result)
    assert result.score == result.max_score > 0, describe(result)
    assert any("Collation object" in item for item in result.unchecked), describe(result)
    assert all(o.message == OPAQUE_COLLATION for o in result.outcomes if o.requirement != "index"), describe(result)


def test_the_consumer_loop_never_waits_on_an_empty_stream(make_lab):
    """A watch_options that asks for the driver's default wait (max_await_time_ms=None waits for ever on
    mongoeco): the course's loop polls without waiting, so the check ends, and quickly."""
    import time

    from course.lessons.lesson08 import streams as streams

    lab = make_lab("08")
    if not lab.backend.supports(streams.Capability.CHANGE_STREAMS):
        pytest.skip("no change streams on this backend")
    db = lab.scratch()
    db.customers.insert_one({"_id": 1, "name": "Ana", "phone": "1"})
    started = time.monotonic()
    with streams.history_kept(db.customers):
        applied = streams.follow(db.customers, db.orders, {}, a.options_waiting, streams.reference_apply)
    assert applied == 0 and time.monotonic() - started < 5
