"""Lesson 08, exercises 08.6 and 08.7: a time series collection instead of hand-made buckets, and the limits.

08.6 reads the collection's options as the server (or engine) reports them (``listCollections``) and the
documents ``record`` left; 08.7 is a self-check on MongoDB's documented limits and transactions, with
nothing to vary.
"""

from __future__ import annotations

import datetime

from course.store.capabilities import Capability
from course.engine.exercise import Exercise, Incorrect, LearnerCodeError, LearnerRaised, Unsupported, hidden, visible
from course.engine.recording import RecordingDatabase

TIME_SERIES = {"timeField": "ts", "metaField": "sensor", "granularity": "minutes"}
EXPIRE_SECONDS = 30 * 24 * 3600  #: 30 days: 2,592,000 s
_T0 = datetime.datetime(2026, 3, 9, 8, 0)


def _options(db, name: str) -> dict:
    for info in db.list_collections(filter={"name": name}) if hasattr(db, "list_collections") else []:
        return dict(info.get("options") or {})
    return {}


#: pymongo's Database.command keywords that shape the call, not the command document
_COMMAND_CALL_OPTIONS = ("check", "allowable_errors", "read_preference", "codec_options")


class _PymongoCommand(RecordingDatabase):
    """The database handed to ``create_readings``: ``command`` takes pymongo's form, ``command("create",
    "readings", timeseries=...)`` (the command's name, its value, then its fields), which mongoeco's
    ``Database.command`` (one document only) refuses; through the grader the learner's kernel holds pymongo's
    own database, so both roads accept the same calls."""

    def command(self, command, value=1, *args, session=None, **kwargs):
        """pymongo's ``Database.command``: a name and a value plus fields, or one command document."""
        if isinstance(command, str):
            fields = {k: v for k, v in kwargs.items() if k not in _COMMAND_CALL_OPTIONS}
            command = {command: value, **fields}
        return self._db.command(command, **({"session": session} if session is not None else {}))


class TimeSeries(Exercise):
    id = "08.6"
    title = "A time series collection instead of buckets"
    answers = ("create_readings", "record")
    requires = frozenset({Capability.TIME_SERIES})
    requirements = {
        "timeseries": "create_readings(db) makes db.readings a time series collection with timeField 'ts', "
                      "metaField 'sensor' and granularity 'minutes'",
        "expiry": "its measurements expire 30 days (2,592,000 s) after their ts",
        "measurement": "record(readings, sensor_id, ts, value) inserts one document per measurement, "
                       "{'ts': ts, 'sensor': sensor_id, 'value': value}, and no bucket of its own: the server "
                       "groups measurements into buckets",
    }
    hints = (
        "db.create_collection('readings', timeseries={'timeField': 'ts', 'metaField': 'sensor', "
        "'granularity': 'minutes'}, ...).",
        "expireAfterSeconds= is an option of create_collection for a time series collection.",
        "record is a plain insert_one: the bucket pattern's $push and upsert are what the server does for you.",
    )
    solution_code = """
def create_readings(db):
    \"\"\"readings: a time series collection, bucketed by the server, expiring after 30 days.\"\"\"
    db.create_collection("readings", timeseries={"timeField": "ts", "metaField": "sensor", "granularity": "minutes"},
                         expireAfterSeconds=30 * 24 * 3600)


def record(readings, sensor_id, ts, value):
    \"\"\"One measurement, one document.\"\"\"
    readings.insert_one({"ts": ts, "sensor": sensor_id, "value": value})
"""

    def _created(self, answer) -> dict:
        db = self.lab.scratch()
        raised = self.call("create_readings", answer.create_readings, _PymongoCommand(db), expect_raise=True)
        if isinstance(raised, LearnerRaised):
            if "collmod" in raised.message.lower() and not self.lab.backend.supports(Capability.COLLMOD):
                raise Unsupported(Capability.COLLMOD)  # a server sets expireAfterSeconds by collMod too
            raise LearnerCodeError(f"create_readings(...) raised {raised}", raised)
        options = _options(db, "readings")
        if "readings" not in db.list_collection_names():
            raise Incorrect("create_readings(db) made no collection named readings")
        return options

    @visible(points=2, checks="timeseries")
    def is_time_series(self, answer):
        """readings is a time series collection on ts, by sensor, in minutes"""
        options = self._created(answer)
        series = options.get("timeseries")
        if not isinstance(series, dict):
            raise Incorrect(f"readings is an ordinary collection (its options: {options or 'none'}): a time series "
                            "collection is one from its creation (an existing collection, or an index, cannot make "
                            "it one)")
        for key, want in TIME_SERIES.items():
            if series.get(key) != want:
                raise Incorrect(f"readings' timeseries option {key} is {series.get(key)!r}; the statement asks "
                                f"for {want!r}")

    @visible(points=1, checks="expiry")
    def expires_after_30_days(self, answer):
        """Measurements expire after 30 days"""
        options = self._created(answer)
        got = options.get("expireAfterSeconds")
        if got != EXPIRE_SECONDS:
            raise Incorrect(f"readings' expireAfterSeconds is {got!r}: 30 days is {EXPIRE_SECONDS:,} seconds "
                            "(the collection's own option: a time series collection expires its measurements "
                            "itself)")

    def _recorded(self, answer, calls):
        db = self.lab.scratch()
        db.create_collection("readings", timeseries=TIME_SERIES, expireAfterSeconds=EXPIRE_SECONDS)
        for sensor, ts, value in calls:
            self.call("record", answer.record, db.readings, sensor, ts, value)
        got = sorted(({k: v for k, v in d.items() if k != "_id"} for d in db.readings.find()),
                     key=lambda d: (str(d.get("sensor")), str(d.get("ts"))))
        want = sorted(({"ts": ts, "sensor": sensor, "value": value} for sensor, ts, value in calls),
                      key=lambda d: (str(d["sensor"]), str(d["ts"])))
        if got != want:
            shapes = sorted({tuple(sorted(d)) for d in got})
            pairs = [(g, w) for g, w in zip(got, want) if g != w] if len(got) == len(want) else []
            differs = (f"; one of them is {pairs[0][0]!r:.120} where the measurement was {pairs[0][1]!r:.120}"
                       if pairs else "")
            raise Incorrect(f"after {len(calls)} calls of record, readings holds {len(got)} documents of the shapes "
                            f"{shapes[:3]}{differs}: a time series collection takes one document per measurement, "
                            "{'ts': ..., 'sensor': ..., 'value': ...}, and buckets them itself")

    @visible(points=2, checks="measurement")
    def one_document_per_measurement(self, answer):
        """Six measurements of two sensors: six documents"""
        calls = [(sensor, _T0 + datetime.timedelta(minutes=m), 20.0 + m) for m in range(3) for sensor in ("s1", "s2")]
        self._recorded(answer, calls)

    @hidden(points=1, checks="measurement")
    def measurements_of_one_sensor(self, answer):
        """Forty measurements of one sensor, a document sensor id"""
        calls = [({"site": "north", "n": 4}, _T0 + datetime.timedelta(seconds=30 * m), m) for m in range(40)]
        self._recorded(answer, calls)


LIMIT_CHOICES = {
    "refused_schema_keyword": ("required", "bsonType", "format", "enum"),
    "on_write_conflict": ("retry the whole transaction", "retry the failed write only", "nothing: it is committed"),
}
LIMIT_ANSWERS = {
    "document_mib": 16,
    "nesting_depth": 100,
    "indexes_per_collection": 64,
    "fields_per_compound_index": 32,
    "transaction_seconds": 60,
    "refused_schema_keyword": "format",
    "on_write_conflict": "retry the whole transaction",
}
_WHY = {
    "document_mib": "The BSON document size limit, in MiB (16,777,216 bytes).",
    "nesting_depth": "How many levels of embedded documents and arrays BSON allows.",
    "indexes_per_collection": "The limits sheet: indexes on one collection.",
    "fields_per_compound_index": "The limits sheet: fields in one compound index.",
    "transaction_seconds": "transactionLifetimeLimitSeconds, the default after which a transaction is aborted.",
    "refused_schema_keyword": "MongoDB's $jsonSchema omits some draft 4 keywords: which of these is one?",
    "on_write_conflict": "A WriteConflict carries the TransientTransactionError label: what does it tell you to retry?",
}


class Limits(Exercise):
    id = "08.7"
    title = "Self-check: the limits sheet and transactions"
    answers = ("limits",)
    fixed_answer = True  #: answers about MongoDB's documented figures: nothing to vary
    requirements = {key: f"{key} is answered right" for key in LIMIT_ANSWERS}
    hints = ("Every figure is in the lesson's limits sheet, with its source.",)
    solution_code = """
limits = {
    "document_mib": 16,
    "nesting_depth": 100,
    "indexes_per_collection": 64,
    "fields_per_compound_index": 32,
    "transaction_seconds": 60,
    "refused_schema_keyword": "format",
    "on_write_conflict": "retry the whole transaction",
}
"""

    def _judge(self, answer, key):
        given = self.expect_type("limits", answer.limits, dict, "{'document_mib': ..., ...} with the seven keys")
        if key not in given:
            raise Incorrect(f"limits has no key {key!r}: the statement names seven")
        value = given[key]
        if key in LIMIT_CHOICES:
            if value not in LIMIT_CHOICES[key]:
                raise Incorrect(f"limits[{key!r}] should be one of {list(LIMIT_CHOICES[key])}, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Incorrect(f"limits[{key!r}] should be a number, got {value!r}")
        if value != LIMIT_ANSWERS[key]:
            raise Incorrect(f"{key}: not {value!r}. {_WHY[key]}")

    @visible(checks="document_mib")
    def q_document(self, answer):
        """The largest document, in MiB"""
        self._judge(answer, "document_mib")

    @visible(checks="nesting_depth")
    def q_depth(self, answer):
        """The deepest nesting"""
        self._judge(answer, "nesting_depth")

    @visible(checks="indexes_per_collection")
    def q_indexes(self, answer):
        """Indexes per collection"""
        self._judge(answer, "indexes_per_collection")

    @visible(checks="fields_per_compound_index")
    def q_compound(self, answer):
        """Fields per compound index"""
        self._judge(answer, "fields_per_compound_index")

    @visible(checks="transaction_seconds")
    def q_transaction(self, answer):
        """A transaction's default lifetime"""
        self._judge(answer, "transaction_seconds")

    @visible(checks="refused_schema_keyword")
    def q_schema(self, answer):
        """A $jsonSchema keyword MongoDB refuses"""
        self._judge(answer, "refused_schema_keyword")

    @visible(checks="on_write_conflict")
    def q_conflict(self, answer):
        """What to do on a write conflict"""
        self._judge(answer, "on_write_conflict")
