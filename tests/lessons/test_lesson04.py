"""Lab 04's checkers: answers a learner could write, right and wrong, on every backend.

``RIGHT`` holds correct answers in other idioms than the reference solution; ``WRONG`` holds answers
that break exactly one requirement of the statement (``tests/support/requirements.py`` runs both).
"""

import pytest
from pymongo import IndexModel

from course import ____
from course.lessons import lesson04
from tests.lessons import lesson04_answers as a
from tests.support.requirements import Right, Wrong, check_right, check_wrong
from tests.support.verdicts import assert_not_attempted, solution as reference_solution

CONSTANTS = {name: getattr(lesson04, name) for name in ("RECENT_REVIEWS", "BUCKET_CAP", "FOLLOWER_THRESHOLD",
                                                         "EXTRA_PAGE")}


@pytest.fixture
def lab(make_lab):
    return make_lab("04")


def solution(lab, number):
    """The exercise's reference solution, with the constants and imports the notebook provides."""
    return reference_solution(lab, number, names={**CONSTANTS, "IndexModel": IndexModel})


def swap(number, **replaced):
    """Answers: the reference solution of exercise 04.``number`` with some names replaced."""
    return lambda lab: {**solution(lab, number), **replaced}


RIGHT = [
    Right("04.1", "find_one_and_update and a one-operation bulk_write, $not/$elemMatch guard",
          {"add_review": a.review_find_one_and_update}),
    Right("04.1", "replace_one upsert, $sort on at instead of $position", {"add_review": a.review_replace_and_sort}),
    Right("04.1", "insert_one catching DuplicateKeyError on a retry", {"add_review": a.review_catch_duplicate}),
    Right("04.1", "$position 0, guarded by room or a date newer than the oldest kept",
          {"add_review": a.review_front_guarded_by_date}),
    Right("04.2", "projection, IndexModel with a name, bulk_write",
          swap(2, place_order=a.order_projection, create_copy_index=a.index_model, change_phone=a.phone_bulk)),
    Right("04.2", "dict comprehension, dict index keys, find_one_and_update",
          swap(2, place_order=a.order_comprehension, create_copy_index=a.index_dict,
                    change_phone=a.phone_find_one_and_update)),
    Right("04.2", "aggregate $project, compound index led by customer._id, only changed copies",
          swap(2, place_order=a.order_aggregate, create_copy_index=a.index_compound,
                    change_phone=a.phone_only_changed)),
    Right("04.2", "IndexModel with dict keys", swap(2, create_copy_index=a.copy_index_model_dict)),
    Right("04.3", "one-operation bulk_write; reconcile by find_one_and_update guarded by the whole stats",
          {"record_order": a.record_bulk, "reconcile": a.reconcile_find_one_and_update}),
    Right("04.3", "find_one_and_update; reconcile counts in Python, $inc of the difference guarded",
          {"record_order": a.record_find_one_and_update, "reconcile": a.reconcile_python}),
    Right("04.3", "reconcile one customer at a time in a retry loop", swap(3, reconcile=a.reconcile_per_customer)),
    Right("04.3", "reconcile by one $lookup read, compare-and-set, count_documents on a retry",
          swap(3, reconcile=a.reconcile_lookup)),
    Right("04.4", "find_one_and_update upsert, dict index keys",
          {"record_stock_event": a.stock_find_one_and_update, "create_bucket_index": a.bucket_index_dict}),
    Right("04.4", "one-operation bulk_write, IndexModel with count and a name",
          {"record_stock_event": a.stock_bulk, "create_bucket_index": a.bucket_index_model}),
    Right("04.4", "filter fields in another order, index fields in another order",
          {"record_stock_event": a.stock_update_one, "create_bucket_index": a.bucket_index_other_order}),
    Right("04.4", "get_collection", swap(4, record_stock_event=a.stock_get_collection)),
    Right("04.5", "find_one_and_update, bulk_write page, count by aggregate",
          {"add_follower": a.follow_find_one_and_update, "follower_count": a.count_aggregate}),
    Right("04.5", "$addToSet and matched_count, count page lengths",
          {"add_follower": a.follow_matched, "follower_count": a.count_lengths}),
    Right("04.5", "reference add_follower, count by aggregate", swap(5, follower_count=a.count_aggregate)),
    Right("04.5", "$expr/$size guard, db[name] for the pages", swap(5, add_follower=a.follow_expr)),
    Right("04.5", "compare-and-set on the whole list, retried while there is room",
          swap(5, add_follower=a.follow_compare_and_set_retried)),
    Right("04.6", "create_indexes with names, {'kind': {'$eq': 'book'}}, validator by hand with int or long",
          {"create_catalog_indexes": a.catalog_models, "catalog_validator": a.BY_HAND}),
    Right("04.6", "dict index keys, anyOf branches that also require kind and specs",
          lambda lab: {**solution(lab, 6), "create_catalog_indexes": a.catalog_dict_keys,
                       "catalog_validator": a.REQUIRED_PER_BRANCH}),
    Right("04.6", "a longer search index and a descending ISBN index",
          swap(6, create_catalog_indexes=a.catalog_descending_isbn)),
    Right("04.6", "create_index with partialFilterExpression=",
          swap(6, create_catalog_indexes=a.catalog_create_index_camel_case)),
    Right("04.7", "match statement; aggregate", {"phones_of": a.phones_match, "find_by_phone": a.by_phone_aggregate}),
    Right("04.7", "table of readers; a cursor with $eq and $elemMatch",
          {"phones_of": a.phones_table, "find_by_phone": a.by_phone_cursor}),
    Right("04.7", "explicit version check; two queries merged", {"phones_of": a.phones_explicit,
                                                                 "find_by_phone": a.by_phone_two_queries}),
    Right("04.7", "a generator of documents", swap(7, find_by_phone=a.by_phone_generator)),
    Right("04.8", "a dict literal", {"self_check": dict(a.SELF_CHECK)}),
    Right("04.8", "dict() with keywords", {"self_check": dict(**a.SELF_CHECK)}),
    Right("04.8", "built from pairs, other key order", {"self_check": dict(reversed(list(a.SELF_CHECK.items())))}),
]

WRONG = [
    # 04.1
    Wrong("04.1", "reviews", "keeps the summary only in the product", {"add_review": a.review_product_only},
          "db.reviews"),
    Wrong("04.1", "reviews", "stores the summary, not the whole review", {"add_review": a.review_summary_stored},
          "productId"),
    Wrong("04.1", "cap", "never cuts the array", {"add_review": a.review_uncapped}, "10"),
    Wrong("04.1", "cap", "keeps 11", {"add_review": a.review_keeps_eleven}, "10"),
    Wrong("04.1", "order", "appends, oldest first", {"add_review": a.review_appended}, "newest first"),
    Wrong("04.1", "summary", "copies the whole review into the product", {"add_review": a.review_whole_copy},
          "productId"),
    Wrong("04.1", "summary", "names the id _id instead of reviewId", {"add_review": a.review_id_key}, "reviewId"),
    Wrong("04.1", "retry", "a retry pushes the summary again", {"add_review": a.review_unguarded}, "twice"),
    Wrong("04.1", "retry", "insert_one fails on a retry", {"add_review": a.review_plain_insert}, "DuplicateKeyError"),
    Wrong("04.1", "retry", "$position 0 and a $ne guard: a late retry puts an old review back in front (review47)",
          {"add_review": a.review_front_guarded}, "retry must change nothing"),
    Wrong("04.1", "retry", "a retry after a half-done call does nothing", {"add_review": a.review_skips_known},
          "retry"),
    # 04.2
    Wrong("04.2", "order", "keeps the items under another name", swap(2, place_order=a.order_lines_renamed),
          "items"),
    Wrong("04.2", "copy", "embeds the whole profile", swap(2, place_order=a.order_whole_profile), "email"),
    Wrong("04.2", "copy", "copies the email too", swap(2, place_order=a.order_with_email), "email"),
    Wrong("04.2", "copy", "embeds only the _id", swap(2, place_order=a.order_id_only), "name"),
    Wrong("04.2", "copy", "the customer's _id outside the copy", swap(2, place_order=a.order_top_level_id),
          "customer._id"),
    Wrong("04.2", "sync", "changes the profile only", swap(2, change_phone=a.phone_profile_only), "old phone"),
    Wrong("04.2", "sync", "changes one order only", swap(2, change_phone=a.phone_first_order), "old phone"),
    Wrong("04.2", "sync", "finds the copies by the old phone number", swap(2, change_phone=a.phone_by_old_number),
          "another customer"),
    Wrong("04.2", "repeat", "a repeat pushes to a history", swap(2, change_phone=a.phone_history), "second"),
    Wrong("04.2", "repeat", "a repeat counts again", swap(2, change_phone=a.phone_counts_changes), "second"),
    Wrong("04.2", "index", "no index", swap(2, create_copy_index=a.index_none), "customer._id"),
    Wrong("04.2", "index", "an index on another field", swap(2, create_copy_index=a.index_wrong_field),
          "customer._id"),
    Wrong("04.2", "index", "customer._id second in the index", swap(2, create_copy_index=a.index_customer_second),
          "customer._id"),
    # 04.3
    Wrong("04.3", "total", "no total stored", swap(3, record_order=a.record_no_total), "total"),
    Wrong("04.3", "total", "a float total", swap(3, record_order=a.record_float_total), "integer"),
    Wrong("04.3", "total", "ignores the quantities", swap(3, record_order=a.record_ignores_qty), "total"),
    Wrong("04.3", "stats", "counts orders, not spend", swap(3, record_order=a.record_count_only), "totalSpent"),
    Wrong("04.3", "increment", "reads the stats and writes them back", swap(3, record_order=a.record_read_modify_write),
          "at once"),
    Wrong("04.3", "fix", "reports without fixing", swap(3, reconcile=a.reconcile_reports_only), "db.orders says"),
    Wrong("04.3", "fix", "fixes the count only", swap(3, reconcile=a.reconcile_counts_only), "totalSpent"),
    Wrong("04.3", "fix", "skips customers without orders",
          swap(3, reconcile=a.reconcile_skips_customers_without_orders), "without orders", also=("report",)),
    Wrong("04.3", "live", "counts, then sets what it counted (the lesson's first loop)",
          swap(3, reconcile=a.reconcile_counted_then_set), "must not be written over"),
    Wrong("04.3", "live", "reads the stats first, then a plain $set",
          swap(3, reconcile=a.reconcile_read_then_counted_then_set), "just before its first write"),
    Wrong("04.3", "live", "$inc of the difference, unguarded", swap(3, reconcile=a.reconcile_inc_difference),
          "between reconcile's first two reads"),
    Wrong("04.3", "live", "guarded, but gives up when the guard matches nothing",
          swap(3, reconcile=a.reconcile_guarded_no_retry), "just before its first write"),
    Wrong("04.3", "report", "returns a set", swap(3, reconcile=a.reconcile_returns_set), "list"),
    Wrong("04.3", "report", "sorted the wrong way", swap(3, reconcile=a.reconcile_newest_first), "sorted"),
    Wrong("04.3", "report", "None when nothing drifted", swap(3, reconcile=a.reconcile_none_when_clean), "[]"),
    # 04.4
    Wrong("04.4", "cap", "never opens a new bucket", swap(4, record_stock_event=a.stock_uncapped), "50"),
    Wrong("04.4", "cap", "51 events per bucket", swap(4, record_stock_event=a.stock_fifty_one), "50"),
    Wrong("04.4", "sums", "no sums", swap(4, record_stock_event=a.stock_no_sums), "sumIn"),
    Wrong("04.4", "sums", "counts every quantity as incoming", swap(4, record_stock_event=a.stock_everything_in),
          "its events give"),
    Wrong("04.4", "sums", "$inc only the event type's sum: an OUT-only bucket has no sumIn (review29b)",
          swap(4, record_stock_event=a.stock_only_its_sum), "has no field sumIn"),
    Wrong("04.4", "bucket", "one document per event", swap(4, record_stock_event=a.stock_one_per_event), "bucket"),
    Wrong("04.4", "bucket", "mixes tenants in one bucket", swap(4, record_stock_event=a.stock_ignores_tenant),
          "tenant"),
    Wrong("04.4", "concurrent", "finds the open bucket, then pushes",
          swap(4, record_stock_event=a.stock_read_then_push),
          "at once"),
    Wrong("04.4", "index", "an index on day", swap(4, create_bucket_index=a.bucket_index_day), "tenantId"),
    Wrong("04.4", "index", "an index without day", swap(4, create_bucket_index=a.bucket_index_without_day), "day"),
    # 04.5
    Wrong("04.5", "embed", "embeds newest first", swap(5, add_follower=a.follow_newest_first), "order"),
    Wrong("04.5", "embed", "never overflows", swap(5, add_follower=a.follow_embeds_all), "50",
          also=("flag", "pages")),
    Wrong("04.5", "embed", "embeds 49", swap(5, add_follower=a.follow_forty_nine), "50", also=("flag",)),
    Wrong("04.5", "embed", "embeds 51", swap(5, add_follower=a.follow_fifty_one), "50", also=("flag", "pages")),
    Wrong("04.5", "embed", "compare-and-set once: another follower landing with room left overflows it (review47)",
          swap(5, add_follower=a.follow_compare_and_set_once), "room"),
    Wrong("04.5", "flag", "never sets hasExtras", swap(5, add_follower=a.follow_no_flag), "hasExtras"),
    Wrong("04.5", "flag", "sets hasExtras at exactly 50", swap(5, add_follower=a.follow_flags_when_full), "hasExtras"),
    Wrong("04.5", "pages", "one unbounded overflow document", swap(5, add_follower=a.follow_unpaged), "100"),
    Wrong("04.5", "pages", "pages of 101", swap(5, add_follower=a.follow_pages_of_101), "100"),
    Wrong("04.5", "pages", "the page filter lacks productId: another product's page is reused (review47)",
          swap(5, add_follower=a.follow_any_products_page), "another product"),
    Wrong("04.5", "pages", "pages without count", swap(5, add_follower=a.follow_pages_without_count), "count"),
    Wrong("04.5", "pages", "a page written only if its count is unchanged, given up when another follower came",
          swap(5, add_follower=a.follow_page_compare_and_set_once), "in no page"),
    Wrong("04.5", "concurrent", "reads the product, then pushes", swap(5, add_follower=a.follow_read_then_push),
          "at once"),
    Wrong("04.5", "concurrent", "finds a page with room, then pushes by its _id (review29b)",
          swap(5, add_follower=a.follow_page_found_then_pushed), "a page holds 101"),
    Wrong("04.5", "count", "counts the embedded followers only", swap(5, follower_count=a.count_embedded_only),
          "both"),
    Wrong("04.5", "count", "counts pages, not followers", swap(5, follower_count=a.count_pages), "count"),
    Wrong("04.5", "flag_read", "reads the overflow without looking at the flag",
          swap(5, follower_count=a.count_always_both), "flag"),
    Wrong("04.5", "flag_read", "reads the overflow when 50 are embedded, whatever hasExtras says (review29b)",
          swap(5, follower_count=a.count_flag_by_size), "embeds 50 followers and has no hasExtras"),
    # 04.6
    Wrong("04.6", "partial_index", "the ISBN index holds every item",
          swap(6, create_catalog_indexes=a.catalog_full_isbn),
          "partial"),
    Wrong("04.6", "partial_index", "the partial index holds phones",
          swap(6, create_catalog_indexes=a.catalog_phone_partial),
          "book"),
    Wrong("04.6", "partial_index", "the partial filter is specs.isbn $exists (review47)",
          swap(6, create_catalog_indexes=a.catalog_isbn_exists_partial), "phone"),
    Wrong("04.6", "search_index", "no search index", swap(6, create_catalog_indexes=a.catalog_no_search), "tenantId"),
    Wrong("04.6", "search_index", "name before tenantId", swap(6, create_catalog_indexes=a.catalog_reversed_search),
          "tenantId"),
    Wrong("04.6", "accepts", "ramGb must be a long", swap(6, catalog_validator=a.schema_with(
        phone_type="long")), "refused a valid phone"),
    Wrong("04.6", "required", "specs not required", swap(6, catalog_validator=a.schema_with(
        required=("tenantId", "kind", "name", "price"))), "specs"),
    Wrong("04.6", "required", "price not required", swap(6, catalog_validator=a.schema_with(
        required=("tenantId", "kind", "name", "specs"))), "price"),
    Wrong("04.6", "phone", "a phone's ramGb may be any number", swap(6, catalog_validator=a.schema_with(
        phone_type="number")), "ramGb"),
    Wrong("04.6", "phone", "a phone's ramGb and storageGb may be null (review29b)",
          swap(6, catalog_validator=a.schema_with(phone_type=["int", "null"])), "null"),
    Wrong("04.6", "phone", "a phone needs only ramGb", swap(6, catalog_validator=a.schema_with(phone=("ramGb",))),
          "storageGb"),
    Wrong("04.6", "phone", "storageGb required but untyped (review47)", swap(6, catalog_validator=a.schema_with(
        typed=("ramGb",))), "storageGb"),
    Wrong("04.6", "shirt", "a shirt's sizes may be a string", swap(6, catalog_validator=a.schema_with(
        sizes_type=["array", "string"])), "sizes"),
    Wrong("04.6", "shirt", "a shirt's sizes may be null (review 38)", swap(6, catalog_validator=a.schema_with(
        sizes_type=["array", "null"])), "null"),
    Wrong("04.6", "other_kind", "a branch for a kind the statement does not name, 'toy' (review 38)",
          swap(6, catalog_validator=a.schema_with(other_kinds=("toy",))), "'toy'"),
    Wrong("04.6", "book", "a book needs no isbn", swap(6, catalog_validator=a.schema_with(isbn_required=False)),
          "isbn"),
    Wrong("04.6", "other_kind", "a catch-all branch for other kinds", swap(6, catalog_validator=a.schema_with(
        fallback=True)), "kind"),
    Wrong("04.6", "other_kind", "branches that never look at kind", swap(6, catalog_validator=a.UNPINNED),
          "toaster", also=("phone",)),
    # 04.7
    Wrong("04.7", "v1", "KeyError on a v1 order without a phone", swap(7, phones_of=a.phones_v1_crash), "KeyError"),
    Wrong("04.7", "v1", "a v1 phone as a string", swap(7, phones_of=a.phones_v1_string), "list"),
    Wrong("04.7", "v1", "refuses schema_version 1 written out", swap(7, phones_of=a.phones_missing_means_v1_only),
          "schema_version 1"),
    Wrong("04.7", "v2", "only the first v2 phone", swap(7, phones_of=a.phones_v2_first), "phones"),
    Wrong("04.7", "unknown", "guesses from the fields", swap(7, phones_of=a.phones_guesses), "ValueError"),
    Wrong("04.7", "unknown", "KeyError for an unknown version", swap(7, phones_of=a.phones_key_error), "ValueError"),
    Wrong("04.7", "query", "queries customer.phones only", swap(7, find_by_phone=a.by_phone_v2_only), "v1"),
    Wrong("04.7", "query", "queries customer.phone only", swap(7, find_by_phone=a.by_phone_v1_only), "v2"),
    Wrong("04.7", "query", "returns ids, not orders", swap(7, find_by_phone=a.by_phone_ids), "order"),
    Wrong("04.7", "query", "a $regex substring match: phones containing it match too (review29b)",
          swap(7, find_by_phone=a.by_phone_regex), "order 14 has"),
    Wrong("04.7", "query", "v2 matched on customer.phones.0 only (review47)",
          swap(7, find_by_phone=a.by_phone_first_v2_phone), "v2 order 15"),
    Wrong("04.7", "order", "never sorted (review47)", swap(7, find_by_phone=a.by_phone_unsorted), "_id"),
    Wrong("04.7", "order", "sorted newest first", swap(7, find_by_phone=a.by_phone_descending), "_id"),
    # 04.8
    Wrong("04.8", "working_set", "a projection shrinks the working set",
          a.self_check_with(projection_shrinks_working_set="yes"), "projection_shrinks_working_set"),
    Wrong("04.8", "checkpoint", "an $inc writes 4 bytes", a.self_check_with(inc_on_10mb_document_rewrites="4 bytes"),
          "inc_on_10mb_document_rewrites"),
    Wrong("04.8", "outliers", "outlier at 40%", a.self_check_with(outliers_at_40_percent="outlier"),
          "outliers_at_40_percent"),
    Wrong("04.8", "lazy", "a lazy migration finds everything",
          a.self_check_with(lazy_migration_phone_search="finds everything"), "lazy_migration_phone_search"),
    Wrong("04.8", "lazy", "an answer that is not a choice", a.self_check_with(lazy_migration_phone_search="maybe"),
          "one of"),
    Wrong("04.8", "outliers", "a key missing",
          {"self_check": {k: v for k, v in a.SELF_CHECK.items() if k != "outliers_at_40_percent"}},
          "outliers_at_40_percent"),
    Wrong("04.8", "keys", "a fifth key besides the four questions (review29b)",
          {"self_check": {**a.SELF_CHECK, "notes": "read the lesson again"}}, "'notes'"),
]


@pytest.mark.parametrize("case", WRONG, ids=str)
def test_wrong(make_lab, case):
    check_wrong(make_lab, case)


@pytest.mark.parametrize("case", RIGHT, ids=str)
def test_right(make_lab, case):
    check_right(make_lab, case)


@pytest.mark.parametrize("number", range(1, 9))
def test_reference_solution(make_lab, number):
    check_right(make_lab, Right(f"04.{number}", "reference solution", lambda lab: solution(lab, number)))


NOT_ATTEMPTED = {
    1: [{"add_review": ____}, {"add_review": lambda db, review: ____}],
    2: [{"place_order": ____, "create_copy_index": ____, "change_phone": ____}],
    3: [{"record_order": ____, "reconcile": ____}],
    4: [{"record_stock_event": ____, "create_bucket_index": ____}],
    5: [{"add_follower": ____, "follower_count": ____}],
    6: [{"create_catalog_indexes": ____, "catalog_validator": ____}],
    7: [{"phones_of": ____, "find_by_phone": ____}],
    8: [{"self_check": ____}],
}


@pytest.mark.parametrize("number", range(1, 9))
def test_not_attempted(lab, number):
    for answers in NOT_ATTEMPTED[number]:
        assert_not_attempted(lab.exercise(number), answers)


def test_error_messages_name_pymongos_class():
    """A refused write is named as pymongo names it (WriteError), not by an embedded engine's subclass."""
    from pymongo.errors import WriteError

    from course.lessons.lesson04.common import error_text, pymongo_name

    class EngineValidationFailure(WriteError):  # how mongoeco's DocumentValidationFailure derives
        pass

    assert pymongo_name(EngineValidationFailure("Document failed validation", 121)) == "WriteError"
    assert error_text(EngineValidationFailure("Document failed validation", 121)) \
        == "WriteError: Document failed validation"
    assert pymongo_name(ValueError("no")) == "ValueError"
