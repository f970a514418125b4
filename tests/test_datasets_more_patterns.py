"""Lesson 07's seeded data: same seed, same documents, and the traps the lesson's checks rely on."""

from course.datasets import more_patterns as d


def test_generators_are_deterministic():
    for make in (d.attribute_products, d.archive_orders, d.policies, d.shop_customers, d.shop_orders):
        assert make() == make(), make.__name__
    assert d.view_events(50) == d.view_events(50) != d.view_events(50, seed=1)
    assert d.categories() == d.categories()


def test_attribute_products_hold_the_cross_entry_trap():
    products = {p["_id"]: p for p in d.attribute_products()}
    red_trim = products[2]["attrs"]
    assert {"k": "color", "v": "blue"} in red_trim and {"k": "trim", "v": "red"} in red_trim
    assert all({"k", "v"} == set(a) for p in products.values() for a in p["attrs"])


def test_view_events_count_each_page_from_one():
    seen = {}
    for event in d.view_events(200):
        seen[event["page"]] = seen.get(event["page"], 0) + 1
        assert event["seq"] == seen[event["page"]]


def test_archive_orders_straddle_the_cutoff():
    orders = d.archive_orders()
    assert any(o["placedAt"] == d.CUTOFF for o in orders)
    assert any(o["placedAt"] < d.CUTOFF for o in orders) and any(o["placedAt"] > d.CUTOFF for o in orders)
    assert len({o["_id"] for o in orders}) == len(orders)


def test_categories_agree_across_the_four_tree_patterns():
    by_name = {c["_id"]: c for c in d.categories()}
    for category in by_name.values():
        ancestors = category["ancestors"]
        assert (ancestors[-1] if ancestors else None) == category["parent"]
        assert category["path"] == "," + "".join(a + "," for a in ancestors)
        for child in category["children"]:
            assert by_name[child]["parent"] == category["_id"]
    assert by_name["Products"]["parent"] is None and by_name["Products"]["path"] == ","


def test_extended_orders_copy_the_customer_name():
    names = {c["_id"]: c["name"] for c in d.shop_customers()}
    plain, extended = d.shop_orders(), d.shop_orders(extended=True)
    assert [o["_id"] for o in plain] == [o["_id"] for o in extended]
    for order in extended:
        assert order["customer"] == {"_id": order["customerId"], "name": names[order["customerId"]]}


def test_prices_include_amounts_a_float_gets_wrong():
    assert any(int(float(p) * 100) != round(float(p) * 100) for p in d.PRICES)
    assert all(len(p.partition(".")[2]) <= 2 for p in d.PRICES)  # whole cents: valid inputs to to_cents
