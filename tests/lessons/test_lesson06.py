"""Lab 06's checkers: right answers in other idioms, wrong answers per requirement, not attempted."""

import pytest

from course.audit.report import REPAIRED_IN_06
from tests.lessons import lesson06_answers as a
from tests.support.requirements import Right, Wrong, check_right, check_wrong
from tests.support.verdicts import assert_not_attempted
from tests.support.verdicts import solution as reference_solution

PRELUDE = "from bson.int64 import Int64\n"


def solution(lab, *numbers):
    """The exercises' reference solutions, after the imports the notebook's first cell makes."""
    return reference_solution(lab, *numbers, prelude=PRELUDE)


RIGHT = [
    Right("06.1", "prefix test on tuples, names collected first", {"drop_redundant_index": a.drop_redundant_sets}),
    Right("06.1", "indexes sorted by length", {"drop_redundant_index": a.drop_redundant_sorted}),
    Right("06.1", "the audit's covering() on a snapshot of each collection",
          {"drop_redundant_index": a.drop_redundant_by_keys}),
    Right("06.2", "one update_many with a $toLong pipeline", {"widen_counters": a.widen_pipeline}),
    Right("06.2", "one update_many with $convert to long", {"widen_counters": a.widen_convert_pipeline}),
    Right("06.2", "update_one guarded by the value read, retried", {"widen_counters": a.widen_compare_and_set}),
    Right("06.2", "bulk_write of guarded UpdateOne, the missed ones retried",
          {"widen_counters": a.widen_bulk_guarded}),
    Right("06.2", "$inc by Int64(0)", {"widen_counters": a.widen_inc_long_zero}),
    Right("06.3", "update_one per payment, decided in Python", {"add_method": a.method_loop}),
    Right("06.3", "one update pipeline with $switch", {"add_method": a.method_pipeline}),
    Right("06.3", "bulk_write of three UpdateMany", {"add_method": a.method_bulk}),
    Right("06.4", "replace_one upserts per cart, drop_collection", {"merge_tenants": a.merge_one_by_one}),
    Right("06.4", "$addFields aggregation, a named index", {"merge_tenants": a.merge_aggregate}),
    Right("06.4", "one insert_many, create_indexes", {"merge_tenants": a.merge_bulk}),
    Right("06.5", "update_one per order from a dict of customers", {"refresh_copies": a.refresh_per_order}),
    Right("06.5", "bulk_write of UpdateMany on the stale copies only", {"refresh_copies": a.refresh_only_stale}),
    Right("06.5", "$lookup of the customers", {"refresh_copies": a.refresh_lookup}),
    Right("06.6", "replace_one upserts, replace_one of the customer guarded by its array, the last five reversed",
          {"repair_orders": a.repair_orders_reversed_tail}),
    Right("06.6", "one bulk_write of upserts and one of $pullAll updates", {"repair_orders": a.repair_orders_bulk}),
    Right("06.6", "upserts keyed by customer and order number, $pull by order number",
          {"repair_orders": a.repair_orders_upserts}),
    Right("06.6", "$merge per customer on customer_id and order_no, a unique index on them",
          {"repair_orders": a.repair_orders_merge_on_fields}),
    Right("06.6", "a unique index, then upserts by customer_id and order_no",
          {"repair_orders": a.repair_orders_upserts_by_fields}),
]

WRONG = [
    Wrong("06.1", "dropped", "lists the redundant indexes, drops none", {"drop_redundant_index": a.drop_redundant_lists_only},
          "redundant_index"),
    Wrong("06.1", "dropped", "db.orders only", {"drop_redundant_index": a.drop_redundant_orders_only},
          "category_lookup"),
    Wrong("06.1", "dropped", "prefixes found by name", {"drop_redundant_index": a.drop_redundant_by_name},
          "category_lookup"),
    Wrong("06.1", "kept", "drops the longer index", {"drop_redundant_index": a.drop_redundant_the_longer}, "lost index"),
    Wrong("06.1", "kept", "drop_indexes() everywhere", {"drop_redundant_index": a.drop_every_index}, "not redundant"),
    Wrong("06.1", "kept", "compares fields, ignores directions", {"drop_redundant_index": a.drop_redundant_ignoring_directions},
          "not redundant"),
    Wrong("06.1", "kept", "a prefix in any order", {"drop_redundant_index": a.drop_redundant_any_order}, "not redundant"),
    Wrong("06.1", "kept", "only unique prefixes kept: TTL, sparse, partial dropped",
          {"drop_redundant_index": a.drop_redundant_unique_only}, "not redundant"),
    Wrong("06.1", "kept", "the prefix's options only: a plain prefix of a partial index dropped",
          {"drop_redundant_index": a.drop_redundant_short_options_only}, "not redundant"),
    Wrong("06.2", "long", "converts only the overflowed counters: a no-op", {"widen_counters": a.widen_only_overflowed},
          "int"),
    Wrong("06.2", "long", "only the first 100 products", {"widen_counters": a.widen_first_hundred}, "int"),
    Wrong("06.2", "long", "the converted products written to products_v2", {"widen_counters": a.widen_to_other_collection},
          "int"),
    Wrong("06.2", "unchanged", "replace_one with the counter alone", {"widen_counters": a.widen_loses_fields},
          "changed beyond its views"),
    Wrong("06.4", "merged", "renames the first tenant's collection", {"merge_tenants": a.merge_by_rename}, "renamed",
          also=("dropped", "index", "twice")),
    Wrong("06.4", "merged", "renames onto carts with dropTarget=True", {"merge_tenants": a.merge_rename_drop_target},
          "renaming is not allowed", also=("dropped", "index", "twice")),
    Wrong("06.4", "merged", "the tenant split on _: carts_umbrella_corp's tenant cut",
          {"merge_tenants": a.merge_tenant_split_on_underscore}, "the tenant is the name after carts_"),
    Wrong("06.4", "merged", "copies each cart without its items", {"merge_tenants": a.merge_loses_items},
          "adding only tenant"),
    Wrong("06.2", "live", "update_one per product setting Int64 of the value read",
          {"widen_counters": a.widen_loop_unguarded}, "lost"),
    Wrong("06.2", "live", "update_one guarded by the value read, never retried",
          {"widen_counters": a.widen_guarded_no_retry}, "still stored as int"),
    Wrong("06.2", "live", "bulk_write of UpdateOne setting the values read", {"widen_counters": a.widen_bulk}, "lost"),
    Wrong("06.2", "live", "replace_one of each product as read", {"widen_counters": a.widen_replace}, "lost"),
    Wrong("06.2", "live", "an aggregation replacing the products with converted copies",
          {"widen_counters": a.widen_merge}, "lost"),
    Wrong("06.2", "long", "int(): the small counters stay int32", {"widen_counters": a.widen_to_int}, "long"),
    Wrong("06.2", "long", "every counter a double", {"widen_counters": a.widen_to_double}, "double"),
    Wrong("06.2", "value", "the overflowed counter capped at the int32 maximum", {"widen_counters": a.widen_capping},
          "never the count"),
    Wrong("06.3", "method", "by absence: vouchers become bank transfers", {"add_method": a.method_by_absence}, "voucher"),
    Wrong("06.3", "method", "other names for the methods", {"add_method": a.method_capitals}, "'card'"),
    Wrong("06.3", "unchanged", "rewrites each payment with its common fields", {"add_method": a.method_rebuilt},
          "changed beyond its method"),
    Wrong("06.3", "unchanged", "replace_one of a projected copy (review 29)", {"add_method": a.method_projected_copy},
          "changed beyond its method"),
    Wrong("06.4", "merged", "the tenant is the whole collection name", {"merge_tenants": a.merge_full_name}, "tenant"),
    Wrong("06.4", "merged", "each cart under a new _id (review 29)", {"merge_tenants": a.merge_fresh_ids},
          "with its _id"),
    Wrong("06.4", "dropped", "leaves the tenants' collections", {"merge_tenants": a.merge_keeps_old}, "still exist",
          also=("twice",)),
    Wrong("06.4", "dropped", "empties the tenants' collections instead of dropping them",
          {"merge_tenants": a.merge_empties_old}, "still exist"),
    Wrong("06.4", "index", "no index", {"merge_tenants": a.merge_no_index}, "index"),
    Wrong("06.4", "index", "an index on user_id alone", {"merge_tenants": a.merge_user_index}, "tenant first"),
    Wrong("06.4", "twice", "drops db.carts first: a second run empties it", {"merge_tenants": a.merge_drops_target_first},
          "second time"),
    Wrong("06.5", "fresh", "refreshes the names only", {"refresh_copies": a.refresh_names_only}, "phone"),
    Wrong("06.5", "fresh", "the customer whose _id is the order's _id", {"refresh_copies": a.refresh_by_order_id},
          "customer_id"),
    Wrong("06.5", "only", "the copy becomes the whole customer", {"refresh_copies": a.refresh_whole_customer},
          "name and phone only"),
    Wrong("06.5", "only", "marks each customer synced", {"refresh_copies": a.refresh_marks_customers},
          "customer 1 changed (copies_synced appeared"),
    Wrong("06.6", "moved", "history documents without customer_id", {"repair_orders": a.repair_orders_without_customer},
          "customer"),
    Wrong("06.6", "moved", "the business customers' histories left out", {"repair_orders": a.repair_orders_business_skipped},
          "not in db.order_history"),
    Wrong("06.6", "removed", "a customer without orders skipped: orders [] stays, no recent_orders",
          {"repair_orders": a.repair_orders_skips_empty}, "customer 4 still holds orders", also=("recent",)),
    Wrong("06.6", "recent", "the five oldest", {"repair_orders": a.repair_orders_oldest}, "newest"),
    Wrong("06.6", "recent", "ten kept", {"repair_orders": a.repair_orders_ten}, "newest"),
    Wrong("06.6", "recent", "recent_orders from this run's entries only: a later run drops the older ones (review 29)",
          {"repair_orders": a.repair_orders_recent_from_this_run}, "a next run that moved it"),
    Wrong("06.6", "removed", "the array stays", {"repair_orders": a.repair_orders_keeps_array}, "still holds orders",
          also=("twice",)),
    Wrong("06.6", "removed", "a flag added to every customer", {"repair_orders": a.repair_orders_moved_flag},
          "changed beyond"),
    Wrong("06.6", "twice", "every customer's orders read as customer['orders']: a second run raises KeyError",
          {"repair_orders": a.repair_orders_reads_every_array}, "raised"),
    Wrong("06.6", "twice", "every customer each run: the second empties recent_orders",
          {"repair_orders": a.repair_orders_every_customer}, "second time", also=("recent",)),
    Wrong("06.6", "live", "keyed upserts, then $unset of the whole array read", {"repair_orders":
          a.repair_orders_unset_whole_array}, "lost"),
    Wrong("06.6", "crash", "$pullAll of what it copied, insert_many with fresh _ids",
          {"repair_orders": a.repair_orders_fresh_ids}, "copied again"),
]


@pytest.mark.parametrize("case", WRONG, ids=str)
def test_wrong(make_lab, case):
    check_wrong(make_lab, case)


@pytest.mark.parametrize("case", RIGHT, ids=str)
def test_right(make_lab, case):
    check_right(make_lab, case)


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5, 6])
def test_reference_solution(make_lab, number):
    check_right(make_lab, Right(f"06.{number}", "reference solution", lambda lab: solution(lab, number)))


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5, 6])
def test_not_attempted(make_lab, number):
    lab = make_lab("06")
    exercise = lab.exercise(number)
    (name,) = exercise.answers
    from course import ____

    for answers in ({name: ____}, {name: a.PLACEHOLDER_FUNCTIONS[name]}):
        assert_not_attempted(exercise, answers)


def test_the_audit_cites_each_repair():
    """Each kind an exercise repairs points at that exercise's heading, and at a kind the exercise reruns."""
    from course.lessons import lesson

    kinds = {cls.kind: cls.id for cls in lesson("06").EXERCISES}
    assert set(kinds) == set(REPAIRED_IN_06)
    for kind, ref in REPAIRED_IN_06.items():
        assert ref.section.startswith(f"Exercise {kinds[kind]}:"), (kind, ref)
