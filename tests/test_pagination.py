"""Keyset pagination returns the same pages as skip/limit, and its cost does not grow with depth."""

from course.datasets.catalog import catalog_products
from course.toolkit.pagination import keys_examined, keyset_filter, keyset_page, skip_page


def test_keyset_pages_equal_skip_pages_to_the_end(make_lab, backend):
    products = make_lab("01").scratch().products
    catalog = catalog_products(n=300, seed=7)
    catalog += [{**catalog[0], "_id": 10_000 + i} for i in range(3)]  # name ties: only _id orders them
    products.insert_many(catalog)
    category = catalog[0]["category"]
    last, page = None, 1
    while True:
        by_keyset = keyset_page(products, category, last, size=7)
        assert by_keyset == skip_page(products, category, page, size=7), f"page {page}"
        if not by_keyset:
            break
        last, page = by_keyset[-1], page + 1
    assert page > 5


def test_deep_skip_examines_every_skipped_key(make_lab, backend):
    products = make_lab("01").scratch().products
    products.insert_many(catalog_products(n=300, seed=7))
    products.create_index([("category", 1), ("name", 1), ("_id", 1)])
    shallow = keys_examined(products, backend, {"category": "kitchen"}, 0, 10)
    deep = keys_examined(products, backend, {"category": "kitchen"}, 40, 10)
    assert deep.keys > 4 * shallow.keys - 5
    after = {"name": "M", "_id": 0}
    assert keyset_filter("kitchen", after)["$or"][1] == {"name": "M", "_id": {"$gt": 0}}


def test_simulated_cost_models_only_the_indexes_there(make_lab, backend):
    """Without an index the pages are a collection scan; (category, name) alone leaves the _id tie-break
    to an in-memory sort; (category, name, _id) walks one page of keys."""
    if backend.name == "server":
        return  # the server's own explain counts there
    products = make_lab("01").scratch().products
    products.insert_many(catalog_products(n=300, seed=7))
    kitchen = products.count_documents({"category": "kitchen"})
    bare = keys_examined(products, backend, {"category": "kitchen"}, 0, 10)
    assert bare.keys == 0 and "collection scan" in str(bare), bare
    products.create_index([("category", 1), ("name", 1)])
    unsorted = keys_examined(products, backend, {"category": "kitchen"}, 0, 10)
    assert unsorted.keys == kitchen and "in-memory sort" in str(unsorted), unsorted
    products.create_index([("category", 1), ("name", 1), ("_id", 1)])
    assert keys_examined(products, backend, {"category": "kitchen"}, 0, 10).keys == 11
