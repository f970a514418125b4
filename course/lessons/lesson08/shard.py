"""Lesson 08, exercises 08.1 to 08.3: the shard key, graded on the sharding model's figures.

The answers are plain data (a shard key, a dict of predictions); every figure a check quotes comes from
:mod:`course.toolkit.sharding_sim`, a model of MongoDB's routing (labelled "[model]" where its own choices show).
"""

from __future__ import annotations

from typing import Any

from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04.common import data
from course.lessons.lesson08.data import (
    CHUNK_DOCS, FLEET_QUERIES, FLEET_QUERIES_OTHER, MAX_INSERT_SHARE, OTHER_TENANT_SIZES, SHARDS,
    customers_by_email, fleet_readings, invoices, week_of_inserts,
)
from course.toolkit.sharding_sim import HASHED, Cluster, ShardKey, shard

#: 08.3: the collection's current key, which refineCollectionShardKey can only extend
CURRENT_INVOICE_KEY = {"tenantId": 1}


def _key(name: str, value: Any) -> ShardKey:
    """The learner's shard key, or Incorrect saying what MongoDB would refuse."""
    if isinstance(value, str):  # the model takes a field name; the statement asks for a key document
        raise Incorrect(f"{name} is not a shard key: a shard key is a dict of fields, each 1 (ranged) or 'hashed', "
                        f"such as {{'tenantId': 1, 'createdAt': 1}}; got the string {value!r:.60}")
    try:
        return ShardKey.of(value)
    except (ValueError, TypeError) as error:
        raise Incorrect(f"{name} is not a shard key: {error}") from None


def _fleet(key: ShardKey, seed: int) -> Cluster:
    cluster = shard(data(fleet_readings, seed=seed), key, shards=SHARDS, chunk_docs=CHUNK_DOCS)
    cluster.insert(data(week_of_inserts, seed=seed))
    return cluster


def _missing_fields(key: ShardKey, documents: list[dict]) -> list[str]:
    return [name for name in key.names if not any(name.split(".")[0] in d for d in documents[:50])]


class ChooseShardKey(Exercise):
    id = "08.1"
    title = "Choose the fleet's shard key"
    answers = ("fleet_key",)
    requirements = {
        "inserts": f"with the key, no shard takes more than {MAX_INSERT_SHARE:.0%} of the week's inserts (the "
                   "readings of the new devices, dev-200 onwards) in the model",
        "queries": "both of the application's reads, one device's readings over a day and one device's latest "
                   "readings, are targeted (not broadcast to every shard)",
    }
    hints = (
        "A key whose values only grow (ts, _id, and here deviceId too: new devices get the next numbers) sends "
        "every insert to the last chunk.",
        "Both reads filter on deviceId by equality: a key that starts with deviceId targets them.",
        "Hashing a field spreads neighbouring values over the whole hash range, and an equality on it is still "
        "routed: {'deviceId': 'hashed'}.",
    )
    solution_code = """
fleet_key = {"deviceId": "hashed", "ts": 1}
"""

    def _check_inserts(self, answer, seed):
        key = _key("fleet_key", answer.fleet_key)
        cluster = _fleet(key, seed)
        per_shard = cluster.inserts_per_shard()
        share = max(per_shard) / sum(per_shard)
        if share > MAX_INSERT_SHARE:
            missing = _missing_fields(key, data(fleet_readings, seed=seed))
            why = (f": the readings have no field {', '.join(missing)}, so every key is null and all of them "
                   "share one chunk" if missing else
                   ": the week's readings all sort after the stored ones on this key, so they land in the last "
                   "chunk, on one shard" if share == 1 else "")
            raise Incorrect(f"with the key {key}, the week's {sum(per_shard)} inserts land {per_shard} on the "
                            f"{SHARDS} shards [model]: one shard takes {share:.0%}, more than "
                            f"{MAX_INSERT_SHARE:.0%}{why}")

    @visible(points=2, checks="inserts")
    def inserts_spread(self, answer):
        """The week's inserts spread over the shards"""
        self._check_inserts(answer, 8)

    @hidden(points=1, checks="inserts")
    def inserts_spread_other_week(self, answer):
        """Another fleet and another week of new devices"""
        self._check_inserts(answer, 21)

    def _check_queries(self, answer, queries, seed):
        key = _key("fleet_key", answer.fleet_key)
        cluster = _fleet(key, seed)
        for name, query in queries.items():
            routed = cluster.route(query)
            if routed.broadcast:
                raise Incorrect(f"with the key {key}, the read {name} ({query!r}) is broadcast to every "
                                f"shard: {routed.why}")

    @visible(points=2, checks="queries")
    def reads_targeted(self, answer):
        """Both reads are targeted"""
        self._check_queries(answer, FLEET_QUERIES, 8)

    @hidden(points=1, checks="queries")
    def reads_targeted_other_devices(self, answer):
        """The same reads for a new device and another stored one"""
        self._check_queries(answer, FLEET_QUERIES_OTHER, 21)


#: 08.2: the reads whose routing the learner predicts: (collection, filter)
INVOICE_KEY = {"tenantId": 1, "issuedAt": 1}
EMAIL_KEY = {"email": HASHED}


def _month():
    import datetime

    return datetime.datetime(2025, 12, 1)


PREDICTED_READS = {
    "one_tenant": ("invoices", {"tenantId": "t07"}),
    "tenant_since_december": ("invoices", {"tenantId": "t07", "issuedAt": {"$gte": _month()}}),
    "everyone_since_december": ("invoices", {"issuedAt": {"$gte": _month()}}),
    "by_status": ("invoices", {"status": "sent"}),
    "two_tenants": ("invoices", {"tenantId": {"$in": ["t01", "t02"]}}),
    "one_email": ("customers", {"email": "ana.17@example.com"}),
    "emails_starting_with_a": ("customers", {"email": {"$gte": "a", "$lt": "b"}}),
}
ROUTE_CHOICES = ("targeted", "broadcast")


def predicted_cluster(collection: str) -> Cluster:
    """08.2's clusters: invoices on {tenantId: 1, issuedAt: 1}, customers on {email: 'hashed'}."""
    if collection == "invoices":
        return shard(data(invoices), INVOICE_KEY, shards=SHARDS, chunk_docs=CHUNK_DOCS)
    return shard(data(customers_by_email), EMAIL_KEY, shards=SHARDS, chunk_docs=CHUNK_DOCS)


def true_route(name: str):
    """What the model says of read ``name``."""
    collection, query = PREDICTED_READS[name]
    return predicted_cluster(collection).route(query)


class PredictRouting(Exercise):
    id = "08.2"
    title = "Predict: targeted or broadcast?"
    answers = ("routing",)
    fixed_answer = True  #: predictions about the lesson's two clusters: nothing to vary
    requirements = {name: f"the prediction for {name} ({PREDICTED_READS[name][0]}: {PREDICTED_READS[name][1]!r}) "
                          "is right" for name in PREDICTED_READS}
    hints = (
        "A read is targeted when its filter bounds the first field of the shard key (and, for a compound key, "
        "each field before the one it bounds by a range).",
        "A hashed field routes equalities (hash the value) but not ranges: neighbouring emails have unrelated "
        "hashes.",
    )
    solution_code = """
routing = {
    "one_tenant": "targeted",
    "tenant_since_december": "targeted",
    "everyone_since_december": "broadcast",
    "by_status": "broadcast",
    "two_tenants": "targeted",
    "one_email": "targeted",
    "emails_starting_with_a": "broadcast",
}
"""

    def _judge(self, answer, name):
        given = self.expect_type("routing", answer.routing, dict,
                                 "{'one_tenant': 'targeted', ...} with the seven keys of the statement")
        if name not in given:
            raise Incorrect(f"routing has no key {name!r}: the statement names seven reads")
        if given[name] not in ROUTE_CHOICES:
            raise Incorrect(f"routing[{name!r}] should be 'targeted' or 'broadcast', got {given[name]!r}")
        truth = true_route(name)
        if given[name] != truth.kind:
            collection, query = PREDICTED_READS[name]
            key = ShardKey.of(INVOICE_KEY if collection == "invoices" else EMAIL_KEY)
            raise Incorrect(f"{name}: not {given[name]!r}. On {collection}, sharded on {key}, {query!r:.80} is "
                            f"{truth}")

    @visible(checks="one_tenant")
    def q_one_tenant(self, answer):
        """One tenant's invoices"""
        self._judge(answer, "one_tenant")

    @visible(checks="tenant_since_december")
    def q_tenant_since(self, answer):
        """One tenant's invoices since December"""
        self._judge(answer, "tenant_since_december")

    @visible(checks="everyone_since_december")
    def q_everyone_since(self, answer):
        """Every tenant's invoices since December"""
        self._judge(answer, "everyone_since_december")

    @visible(checks="by_status")
    def q_by_status(self, answer):
        """Invoices by status"""
        self._judge(answer, "by_status")

    @visible(checks="two_tenants")
    def q_two_tenants(self, answer):
        """Two tenants with $in"""
        self._judge(answer, "two_tenants")

    @visible(checks="one_email")
    def q_one_email(self, answer):
        """One customer by email (hashed key)"""
        self._judge(answer, "one_email")

    @visible(checks="emails_starting_with_a")
    def q_email_range(self, answer):
        """A range of emails (hashed key)"""
        self._judge(answer, "emails_starting_with_a")


class RefineKey(Exercise):
    id = "08.3"
    title = "Jumbo chunks: refine the invoices' key"
    answers = ("refined_key",)
    requirements = {
        "refine": "refined_key keeps the current key {tenantId: 1} as its first field, unchanged, and adds at "
                  "least one field after it, as refineCollectionShardKey requires",
        "no_jumbo": "sharded on refined_key, no chunk in the model is over the chunk size with a single key value "
                    "(no jumbo chunk)",
    }
    hints = (
        "refineCollectionShardKey can only add fields after the existing ones: {tenantId: 1, ...}.",
        "The suffix must tell a large tenant's invoices apart: status has three values, so 450 invoices still "
        "share three keys.",
        "A field that is different on (nearly) every invoice: issuedAt, invoiceNo or _id.",
    )
    solution_code = """
refined_key = {"tenantId": 1, "issuedAt": 1}
"""

    def _check_refine(self, answer):
        key = _key("refined_key", answer.refined_key)
        current = ShardKey.of(CURRENT_INVOICE_KEY)
        if key.fields[:len(current.fields)] != current.fields:
            raise Incorrect(f"{key} does not start with the current key {current}: refineCollectionShardKey only "
                            "adds fields after the existing ones (changing the key itself means resharding the "
                            "whole collection)")
        if len(key.fields) == len(current.fields):
            raise Incorrect(f"{key} is the current key: add a field after tenantId")

    @visible(points=2, checks="refine")
    def keeps_prefix(self, answer):
        """The refined key starts with {tenantId: 1} and adds a field"""
        self._check_refine(answer)

    def _check_jumbo(self, answer, sizes):
        key = _key("refined_key", answer.refined_key)
        cluster = shard(data(invoices, sizes), key, shards=SHARDS, chunk_docs=CHUNK_DOCS)
        jumbo = cluster.jumbo_chunks()
        if jumbo:
            worst = max(jumbo, key=lambda c: c.documents)
            raise Incorrect(f"sharded on {key}, {len(jumbo)} chunks cannot split [model, chunk size {CHUNK_DOCS} "
                            f"documents]: one holds {worst.documents} invoices that all have the key "
                            f"{worst.lower!r:.80}; the added field must tell one tenant's invoices apart")

    @visible(points=2, checks="no_jumbo")
    def no_jumbo(self, answer):
        """No jumbo chunk with the refined key"""
        self._check_jumbo(answer, None)

    @hidden(points=1, checks="no_jumbo")
    def no_jumbo_other_tenants(self, answer):
        """Other tenants, two of them large"""
        self._check_jumbo(answer, tuple(sorted(OTHER_TENANT_SIZES.items())))
