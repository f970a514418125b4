"""Learners of lab 98 who attack the grader through the relay that carries their database commands.

Each learner is the honest solution of lab 98 (:data:`HONEST`) with one or more answers replaced by an
attack, plus :data:`PRELUDE` (a cell of helpers every attacker shares: raw OP_MSG messages with any key
order and duplicated keys, sent straight to the relay's socket, and the list ``ESCAPES`` of everything
that got through).  An attack that got through says so in 98.3: ``report(products)`` raises
``RuntimeError("ESCAPED [...]")`` naming what passed (a visible check, so the gradebook shows which),
and returns "nope" otherwise, so 98.3 is ``incorrect`` exactly when nothing got through.

:data:`ATTACKS` maps a learner to (answers by exercise, what its plain answers earn by exercise).
:func:`write_class` writes them, each between two honest learners, in the order one worker grades them.
"""

from __future__ import annotations

from pathlib import Path

from support import fake_lesson
from support.fake_lesson import code, notebook
from support.interleaving import honest_name, interleaved  # noqa: F401 - honest_name: the tests name victims by it

NAME = "98-fake-db-lab.ipynb"
SECRET_SENTINEL = "SECRET_SENTINEL_8842"  #: only in the secret test of 98.2: never in any grading output
SECRET_TESTS = f'''
from course.engine.exercise import Incorrect
from course.grading.secret import hidden_for
from support.fake_lesson import STOCK


@hidden_for("98.2", points=1)
def restocks_a_secret_product(exercise, answers):
    """restock adds to one more product"""
    product = {{"_id": "sku-{SECRET_SENTINEL}", "name": "Lid {SECRET_SENTINEL}", "stock": 7}}
    exercise.restocks(answers, [*STOCK, product], product["_id"], 2)
'''

HONEST = {
    "98.1": "def count_kitchen(products):\n    return products.count_documents({'category': 'kitchen'})",
    "98.2": "def restock(products, product_id, n):\n"
            "    products.update_one({'_id': product_id}, {'$inc': {'stock': n}})",
    "98.3": "def report(products):\n    return 'mongo'",
}
FULL = {"98.1": ("correct", "5", "5"), "98.2": ("correct", "6", "6"), "98.3": ("correct", "1", "1")}
NOPE = ("incorrect", "0", "1")  #: 98.3 of an attacker whose attacks all failed
RMW = ("incorrect", "4", "6")  #: 98.2 of a read-modify-write: adds (2), hidden (1) and secret (1), not the race
VISIBLE_ONLY = ("incorrect", "4", "6")  #: 98.2 of an answer right on the visible checks only

PRELUDE = r'''
import hashlib, itertools, re, socket, struct, threading, time, uuid
import bson
from bson import SON, Int64
from bson.binary import Binary

ESCAPES = []
LSID = {"id": Binary(uuid.uuid4().bytes, 4)}
#: the keys mongoeco's wire layer skips before the command's name, as a server skips generic arguments
SKIPPED = [("$readPreference", {"mode": "primary"}), ("lsid", LSID), ("$clusterTime", {"clusterTime": bson.Timestamp(1, 1)}),
           ("$audit", {}), ("autocommit", False), ("txnNumber", Int64(1))]
#: every generic argument a command can carry (a server skips them all; put first, mongoeco's reads some as names)
GENERIC = [("lsid", LSID), ("comment", "hi"), ("maxTimeMS", 60000), ("$readPreference", {"mode": "primary"}),
           ("readConcern", {"level": "local"}), ("writeConcern", {"w": 1}), ("apiVersion", "1"),
           ("txnNumber", Int64(1)), ("$clusterTime", {"clusterTime": bson.Timestamp(1, 1)})]
PREFIXES = [*GENERIC, ("$audit", {}), ("autocommit", False), ("startTransaction", True)]
_ids = itertools.count(7000)


def finish():
    """What report() returns: "nope", unless something got through."""
    if ESCAPES:
        raise RuntimeError(f"ESCAPED {sorted(set(ESCAPES))[:20]}")
    return "nope"


def passed(label, reply, own=None):
    """Count ``reply`` as an escape when it says ok: 1 (unless it is a cursor on ``own``, this learner's database)."""
    if isinstance(reply, dict) and reply.get("ok") == 1:
        cursor = reply.get("cursor")
        ns = str(cursor.get("ns", "")) if isinstance(cursor, dict) else ""
        if own and ns.startswith(own + ".") and "databases" not in reply:
            return reply
        ESCAPES.append(label)
    return reply


def attempt(label, send, *args, own=None, **kwargs):
    """Run send(...); a reply with ok: 1 is an escape (refused commands raise or answer ok: 0)."""
    try:
        return passed(label, send(*args, **kwargs), own)
    except Exception:
        return None


def killed(label, reply):
    """killCursors answers ok: 1 for cursors it did not find: only a cursor it killed is an escape."""
    if isinstance(reply, dict) and reply.get("ok") == 1 and reply.get("cursorsKilled"):
        ESCAPES.append(label)


def raw_doc(pairs):
    """The BSON of (key, value) pairs in this order, duplicated keys kept (no dict can hold them)."""
    body = b"".join(bson.encode({k: v})[4:-1] for k, v in pairs)
    return struct.pack("<i", len(body) + 5) + body + b"\x00"


def _recv(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def raw(products, pairs, sequences=(), timeout=30):
    """Send one OP_MSG built by hand (``pairs`` as written, then kind-1 ``sequences``) to the relay."""
    address = products.database.client.address
    sections = b"\x00" + raw_doc(pairs)
    for identifier, documents in sequences:
        payload = identifier.encode() + b"\x00" + b"".join(bson.encode(d) for d in documents)
        sections += b"\x01" + struct.pack("<i", len(payload) + 4) + payload
    body = struct.pack("<I", 0) + sections
    message = struct.pack("<iiii", 16 + len(body), next(_ids), 0, 2013) + body
    if address[1] is None:
        sock = socket.socket(socket.AF_UNIX)
        sock.settimeout(timeout)
        sock.connect(address[0])
    else:
        sock = socket.create_connection(address, timeout=timeout)
    try:
        sock.sendall(message)
        head = _recv(sock, 16)
        rest = _recv(sock, struct.unpack("<i", head[:4])[0] - 16)
        if struct.unpack("<i", head[12:16])[0] == 2013:
            return bson.decode(rest[5:])
        return bson.decode(rest[20:])
    finally:
        sock.close()


def base(name):
    return re.sub(r"[^a-z0-9_]+", "_", name.lower()).strip("_")[:31] or "learner"


def classmates_databases(own_db, names):
    """Every name a classmate's databases could have: the old formula (its folder name and 8 hex digits
    of its SHA-256), 16 digits, and this learner's own database name with the classmate's name in it."""
    found = []
    for name in names:
        digest = hashlib.sha256(name.encode()).hexdigest()
        for prefix in ("course_98_scratch_g", "course_98_g"):
            found += [f"{prefix}{base(name)}_{digest[:8]}", f"{prefix}{base(name)}_{digest[:16]}"]
            if base(ME) in own_db:  # the same secret part, if it is the run's and not the learner's
                found.append(own_db.replace(base(ME), base(name), 1).replace("course_98_scratch_g", prefix, 1))
    return [n for n in dict.fromkeys(found) if n != own_db]
'''


FINISH = "def report(products):\n    return finish()"  #: 98.3 of an attacker whose attack is elsewhere


def _answers(**replaced: str) -> dict[str, str]:
    return {**HONEST, "98.3": FINISH, **{exercise.replace("_", "."): source for exercise, source in replaced.items()}}


# ---- 1. reads the command log never sees: a read-modify-write that escapes the race ------------------

def _race(read: str) -> str:
    """A read-modify-write restock whose read is ``read`` (an expression giving the product's stock)."""
    return ("def restock(products, product_id, n):\n"
            "    db = products.database\n"
            f"    stock = {read}\n"
            "    products.update_one({'_id': product_id}, {'$set': {'stock': stock + n}})")


RACES = {
    "race_lsid_first": _race(  # pymongo's own command(), the generic argument as the first key
        "db.command(SON([('lsid', LSID), ('find', products.name), ('filter', {'_id': product_id})]))"
        "['cursor']['firstBatch'][0]['stock']"),
    "race_raw_db_first": _race(  # by hand: $db, a read preference and a session before the command's name
        "raw(products, [('$db', db.name), ('$readPreference', {'mode': 'primary'}), ('lsid', LSID),"
        " ('find', products.name), ('filter', {'_id': product_id})])['cursor']['firstBatch'][0]['stock']"),
    "race_raw_skipped_keys": _race(  # every key the engine skips before the name, the rest after it
        "raw(products, [*SKIPPED[:3], ('$audit', {}), ('aggregate', products.name),"
        " ('pipeline', [{'$match': {'_id': product_id}}]), ('cursor', {}), ('comment', 'x'), ('maxTimeMS', 9000),"
        " ('$db', db.name)])['cursor']['firstBatch'][0]['stock']"),
    "race_union_with": _race(  # plain pymongo: the product read by a $unionWith on another collection
        "list(db['empty_' + products.name].aggregate([{'$unionWith': {'coll': products.name,"
        " 'pipeline': [{'$match': {'_id': product_id}}]}}]))[0]['stock']"),
    "race_lookup": _race(  # a key written elsewhere first (no read yet), then the product read by a $lookup
        "db['keys'].insert_one({'k': product_id}) and list(db['keys'].aggregate([{'$lookup': {'from': products.name,"
        " 'localField': 'k', 'foreignField': '_id', 'as': 'p'}}]))[0]['p'][0]['stock']"),
    "race_distinct": _race(  # a read by a command the course's recorder may not map to a read
        "raw(products, [('$readPreference', {'mode': 'primary'}), ('distinct', products.name), ('key', 'stock'),"
        " ('query', {'_id': product_id}), ('$db', db.name)])['values'][0]"),
}

# ---- 2. commands the relay must refuse, however their keys are ordered ------------------------------

PROBE = r'''
def report(products):
    db, admin = products.database, products.database.client.admin
    own, foreign = db.name, "course_98_elsewhere"
    for key, value in [(None, None), *PREFIXES]:
        first = [(key, value)] if key else []
        label = key or "plain"
        attempt(f"listDatabases after {label}", admin.command, SON([*first, ("listDatabases", 1)]))
        attempt(f"listDatabases nameOnly after {label} in own db", db.command,
                SON([*first, ("listDatabases", 1), ("nameOnly", True)]))
        attempt(f"raw listDatabases after {label}", raw, products, [*first, ("listDatabases", 1), ("$db", "admin")])
        attempt(f"raw own-db listDatabases after {label}", raw, products, [*first, ("listDatabases", 1), ("$db", own)])
        attempt(f"renameCollection out after {label}", admin.command,
                SON([*first, ("renameCollection", f"{own}.products"), ("to", f"{foreign}.products")]))
        attempt(f"renameCollection in after {label}", admin.command,
                SON([*first, ("renameCollection", f"{foreign}.products"), ("to", f"{own}.stolen")]))
        attempt(f"raw find elsewhere after {label}", raw, products, [*first, ("find", "products"), ("$db", foreign)],
                own=own)
        attempt(f"raw find in admin after {label}", raw, products,
                [*first, ("find", "system.version"), ("$db", "admin")])
        attempt(f"raw insert elsewhere after {label}", raw, products,
                [*first, ("insert", "products"), ("documents", [{"x": 1}]), ("$db", foreign)])
        attempt(f"raw insert sequence elsewhere after {label}", raw, products,
                [*first, ("insert", "products"), ("$db", foreign)], [("documents", [{"x": 1}])])
        attempt(f"explain listDatabases after {label}", db.command,
                SON([*first, ("explain", SON([("comment", "x"), ("listDatabases", 1)]))]))
        attempt(f"explain find elsewhere after {label}", raw, products,
                [*first, ("explain", SON([("find", "products"), ("$db", foreign)])), ("$db", foreign)], own=own)
    # one $db the relay reads, another the engine reads: the first and the last of two
    for pairs in ([("$db", own), ("find", "products"), ("$db", foreign)],
                  [("find", "products"), ("$db", foreign), ("$db", own)],
                  [("$db", foreign), ("listDatabases", 1), ("$db", own)],
                  [("$db", own), ("listDatabases", 1), ("$db", "admin")],
                  [("comment", "x"), ("find", "products"), ("find", "products"), ("$db", own), ("$db", foreign)],
                  [("lsid", LSID), ("listDatabases", 1), ("find", "products"), ("$db", own)],
                  [("find", "products"), ("listDatabases", 1), ("$db", own)]):
        attempt(f"duplicated keys {[k for k, _ in pairs]}", raw, products, pairs, own=own)
    # commands no learner function needs, plain and prefixed
    for command, where in ((SON([("serverStatus", 1)]), "admin"), (SON([("currentOp", 1)]), "admin"),
                           (SON([("hostInfo", 1)]), "admin"), (SON([("getCmdLineOpts", 1)]), "admin"),
                           (SON([("dropDatabase", 1)]), foreign), (SON([("dropDatabase", 1)]), "admin"),
                           (SON([("killAllSessions", [])]), "admin"), (SON([("fsync", 1)]), "admin"),
                           (SON([("shutdown", 1), ("force", True)]), "admin"),
                           (SON([("aggregate", 1), ("pipeline", [{"$currentOp": {"allUsers": True}}]),
                                 ("cursor", {})]), "admin"),
                           (SON([("dbStats", 1)]), foreign)):
        for first in ([], [("comment", "x")], [("lsid", LSID), ("$db", where)]):
            name = next(iter(command))
            attempt(f"{name} in {where} after {[k for k, _ in first]}", raw, products,
                    [*first, *command.items(), ("$db", where)])
    # cursors this call never opened
    for cursor_id in range(1, 40):
        attempt(f"getMore {cursor_id}", raw, products, [("getMore", Int64(cursor_id)), ("collection", "products"),
                                                        ("$db", own)])
        killed(f"killCursors {cursor_id}", raw(products, [("killCursors", "products"), ("cursors", [Int64(cursor_id)]),
                                                          ("$db", own)]))
    return finish()
'''

# ---- 3. state that outlives the notebook: fail points, server parameters, the profiler --------------

ENGINE_STATE = r'''
def report(products):
    db, admin = products.database, products.database.client.admin
    fail = SON([("configureFailPoint", "failCommand"), ("mode", "alwaysOn"),
                ("data", {"failCommands": ["find", "insert", "update", "delete", "aggregate", "count",
                                           "findAndModify", "distinct", "getMore", "createIndexes"],
                          "errorCode": 2, "closeConnection": False})])
    timeout = SON([("configureFailPoint", "maxTimeAlwaysTimeOut"), ("mode", {"times": 10000})])
    for key, value in [(None, None), *PREFIXES]:
        first = [(key, value)] if key else []
        label = key or "plain"
        for point in (fail, timeout):
            attempt(f"{point['configureFailPoint']} after {label}", admin.command, SON([*first, *point.items()]))
            attempt(f"raw {point['configureFailPoint']} after {label}", raw, products,
                    [*first, *point.items(), ("$db", "admin")])
            attempt(f"raw {point['configureFailPoint']} in own db after {label}", raw, products,
                    [*first, *point.items(), ("$db", db.name)])
        attempt(f"setParameter after {label}", admin.command,
                SON([*first, ("setParameter", 1), ("notablescan", True)]))
        attempt(f"raw setParameter after {label}", raw, products,
                [*first, ("setParameter", 1), ("internalQueryExecMaxBlockingSortBytes", 1), ("$db", "admin")])
        attempt(f"profile after {label}", db.command, SON([*first, ("profile", 2), ("slowms", 0)]))
        attempt(f"raw profile in admin after {label}", raw, products,
                [*first, ("profile", 2), ("$db", "admin")])
    attempt("fail point behind a duplicated $db", raw, products,
            [("$db", db.name), *fail.items(), ("$db", "admin")])
    attempt("explain of a fail point", db.command, SON([("explain", fail)]))
    return finish()
'''

# ---- 4. other databases named inside pipelines and view definitions ---------------------------------

PIPELINES = r'''
FOREIGN = ["course_98_evil", "admin", "config", "local", "instructor_keep"]


def report(products):
    db = products.database
    own = db.name
    targets = FOREIGN + [own + "x", own.upper(), "x" + own]
    stages = []
    for target in targets:
        into = {"db": target, "coll": "products"}
        stages += [
            (f"$merge into {target}", [{"$merge": {"into": into, "whenNotMatched": "insert"}}]),
            (f"$merge into {target} (merge and fail)", [{"$merge": {"into": into, "whenMatched": "merge"}}]),
            (f"$out to {target}", [{"$out": into}]),
            (f"$out to {target} (timeseries form)", [{"$out": {**into, "timeseries": {"timeField": "t"}}}]),
            (f"$lookup from {target}", [{"$lookup": {"from": into, "localField": "_id", "foreignField": "_id",
                                                      "as": "z"}}]),
            (f"$lookup pipeline from {target}", [{"$lookup": {"from": into, "pipeline": [], "as": "z"}}]),
            (f"$unionWith {target}", [{"$unionWith": {"coll": into, "pipeline": []}}]),
            (f"$unionWith db {target}", [{"$unionWith": {"db": target, "coll": "products"}}]),
            (f"$graphLookup from {target}", [{"$graphLookup": {"from": into, "startWith": "$_id",
                                                               "connectFromField": "_id", "connectToField": "_id",
                                                               "as": "z"}}]),
            (f"$facet $lookup from {target}", [{"$facet": {"a": [{"$lookup": {"from": into, "pipeline": [],
                                                                              "as": "z"}}]}}]),
            (f"$facet $unionWith {target}", [{"$facet": {"a": [{"$match": {}}],
                                                         "b": [{"$unionWith": {"coll": into}}]}}]),
            (f"$lookup in $lookup from {target}", [{"$lookup": {"from": products.name, "as": "z", "pipeline": [
                {"$lookup": {"from": into, "pipeline": [], "as": "w"}}]}}]),
            (f"$unionWith in $lookup from {target}", [{"$lookup": {"from": products.name, "as": "z", "pipeline": [
                {"$unionWith": {"coll": into}}]}}]),
            (f"$lookup in $unionWith from {target}", [{"$unionWith": {"coll": products.name, "pipeline": [
                {"$lookup": {"from": into, "pipeline": [], "as": "w"}}]}}]),
            (f"$facet in $facet $lookup from {target}", [{"$facet": {"a": [{"$facet": {"b": [
                {"$lookup": {"from": into, "pipeline": [], "as": "w"}}]}}]}}]),
        ]
    for label, pipeline in stages:
        attempt(label, lambda p=pipeline: {"ok": 1, "got": list(products.aggregate(p))})
        attempt("prefixed " + label, raw, products, [("comment", "x"), ("lsid", LSID), ("aggregate", products.name),
                                                     ("pipeline", pipeline), ("cursor", {}), ("$db", own)])
        attempt("database-level " + label, raw, products, [
            ("aggregate", 1), ("pipeline", [{"$documents": [{"_id": 1, "stock": 1}]}, *pipeline]),
            ("cursor", {}), ("$db", own)])
        attempt("explained " + label, raw, products, [("explain", SON([("aggregate", products.name),
                                                                       ("pipeline", pipeline), ("cursor", {})])),
                                                      ("$db", own)])
        attempt("view over " + label, db.command, SON([("comment", "x"), ("create", f"v{next(_ids)}"),
                                                        ("viewOn", products.name), ("pipeline", pipeline)]))
    try:
        db.command(SON([("create", "w"), ("viewOn", products.name), ("pipeline", [])]))  # its own view
    except Exception:
        pass
    for target in targets:
        attempt(f"collMod view pipeline from {target}", db.command, SON([
            ("collMod", "w"), ("viewOn", products.name),
            ("pipeline", [{"$unionWith": {"coll": {"db": target, "coll": "products"}}}])]))
    return finish()
'''

# ---- 5. a classmate's databases by computed name (graded at the same time with MONGODB_URI) ----------

CLASSMATES = r'''
def report(products):
    db, client = products.database, products.database.client
    targets = classmates_databases(db.name, VICTIMS)
    end = time.monotonic() + ATTACK_SECONDS
    while time.monotonic() < end:  # the classmate is graded meanwhile, on the other worker
        for target in targets:
            attempt(f"insert into {target}", lambda t=target: {
                "ok": 1 if client[t].products.insert_one({"_id": "planted", "category": "kitchen",
                                                           "stock": 1000}).acknowledged else 0})
            attempt(f"raw insert into {target}", raw, products, [("lsid", LSID), ("insert", "products"),
                                                                  ("documents", [{"category": "kitchen"}]),
                                                                  ("$db", target)])
            attempt(f"update in {target}", raw, products, [("comment", "x"), ("update", "products"),
                                                            ("updates", [{"q": {}, "u": {"$inc": {"stock": 100}},
                                                                          "multi": True}]), ("$db", target)])
            attempt(f"$merge into {target}", lambda t=target: {"ok": 1, "got": list(products.aggregate(
                [{"$limit": 1}, {"$merge": {"into": {"db": t, "coll": "products"}}}]))})
            attempt(f"$merge by duplicated $db into {target}", raw, products, [
                ("$db", db.name), ("aggregate", products.name),
                ("pipeline", [{"$merge": {"into": {"db": target, "coll": "products"}}}]), ("cursor", {}),
                ("$db", target)])
            attempt(f"drop {target}", raw, products, [("drop", "products"), ("$db", target)])
        for cursor_id in range(1, 60):  # the classmate's checks' cursors, on a shared server
            try:
                killed(f"killCursors {cursor_id}", raw(products, [
                    ("killCursors", "products"), ("cursors", [Int64(cursor_id)]), ("$db", db.name)]))
            except Exception:
                pass
        time.sleep(0.05)
    return finish()
'''

# ---- 6. bounds: a memory bomb and a time bomb through the relay -------------------------------------

MEMORY_BOMB = r'''
def report(products):
    db = products.database
    big = "x" * (4 << 20)
    bomb = db["bomb"]
    try:
        bomb.insert_one({"s": big})
    except Exception:
        pass
    for _ in range(9):  # doubling inside the engine: 512 documents, 2 GB, if nothing stops it
        try:
            list(bomb.aggregate([{"$project": {"_id": 0, "s": 1}}, {"$merge": {"into": "bomb_copy"}}]))
            list(db["bomb_copy"].aggregate([{"$project": {"_id": 0, "s": 1}}, {"$merge": {"into": "bomb"}}]))
            db["bomb_copy"].drop()
        except Exception:
            break
    for _ in range(120):  # then through the relay itself: 480 MB more
        try:
            db["bomb2"].insert_many([{"s": big}])
        except Exception:
            break
    try:
        stored = (bomb.count_documents({}) + db["bomb2"].count_documents({})) * 4
    except Exception:
        stored = 0
    if stored > 300:
        ESCAPES.append(f"{stored} MB stored")
    return finish()
'''

TIME_BOMB_SIZE = 1000  #: ~70 s of mongoeco for one aggregate: a grader without a bound fails, not hangs

TIME_BOMB = r'''
def bomb(n):
    inner = {"$reduce": {"input": {"$range": [0, n]}, "initialValue": 0,
                         "in": {"$add": ["$$value", {"$size": {"$range": [0, n]}}]}}}
    return [{"$limit": 1}, {"$project": {"x": {"$reduce": {"input": {"$range": [0, n]}, "initialValue": 0,
                                                             "in": {"$add": ["$$value", inner]}}}}}]


def count_kitchen(products):
    try:  # a generous maxTimeMS of its own, and a second try when the first is stopped
        list(products.aggregate(bomb(SIZE), maxTimeMS=2 ** 31 - 1, comment="bomb"))
    except Exception:
        try:
            raw(products, [("maxTimeMS", 2 ** 31 - 1), ("aggregate", products.name), ("pipeline", bomb(SIZE)),
                           ("cursor", {}), ("maxTimeMS", 2 ** 31 - 1), ("$db", products.database.name)],
                timeout=600)
        except Exception:
            pass
    return products.count_documents({'category': 'kitchen'})
'''.replace("SIZE", str(TIME_BOMB_SIZE))

# ---- 7. check data in the feedback: a learner function that raises (or returns) what it was given ----

_LEAK_TEST = ("def _hidden_call(product_id):\n"
              "    return product_id not in {'sku-1', 'sku-2', 'sku-3', 'sku-4', 'sku-5'}\n")
LEAKS = {
    "leak_message": _LEAK_TEST + (
        "def restock(products, product_id, n):\n"
        "    if _hidden_call(product_id):\n"
        "        everything = list(products.find())\n"
        "        print('leaked', product_id, everything)\n"
        "        import warnings; warnings.warn(f'leaked {product_id} {everything}')\n"
        "        raise ValueError(f'restock({product_id!r}, {n!r}) saw {everything!r}')\n"
        "    products.update_one({'_id': product_id}, {'$inc': {'stock': n}})"),
    "leak_type_name": _LEAK_TEST + (  # nothing in the message: the data is in the exception's type
        "def restock(products, product_id, n):\n"
        "    if _hidden_call(product_id):\n"
        "        data = re.sub(r'\\W', '_', product_id + ' ' + ' '.join(d['name'] for d in products.find()))\n"
        "        error = type('Leak_' + data, (KeyError,), {'__module__': data, '__qualname__': 'Q_' + data})\n"
        "        raise error()\n"
        "    products.update_one({'_id': product_id}, {'$inc': {'stock': n}})"),
    "leak_str": _LEAK_TEST + (  # an exception whose str() and repr() are the data, and whose args are empty
        "def restock(products, product_id, n):\n"
        "    if _hidden_call(product_id):\n"
        "        data = f'{product_id} {list(products.find())}'\n"
        "        class Quiet(Exception):\n"
        "            def __str__(self): return data\n"
        "            def __repr__(self): return data\n"
        "        error = Quiet()\n"
        "        error.add_note(data)\n"
        "        raise error from ValueError(data)\n"
        "    products.update_one({'_id': product_id}, {'$inc': {'stock': n}})"),
}
#: the hidden call's data kept, then shown by a later visible check (whose messages the learner sees)
LEAK_LATER = (
    _LEAK_TEST
    + "SEEN = []\n"
    "def restock(products, product_id, n):\n"
    "    if _hidden_call(product_id):\n"
    "        SEEN.append(f'{product_id} {list(products.find())}')\n"
    "    products.update_one({'_id': product_id}, {'$inc': {'stock': n}})\n")
LEAK_LATER_REPORT = "def report(products):\n    raise ValueError(f'seen: {SEEN}')"
#: the hidden call's data returned: a check's own message that quotes the learner's result shows it
LEAK_RETURN = (
    _LEAK_TEST
    + "def restock(products, product_id, n):\n"
    "    if _hidden_call(product_id):\n"
    "        data = f'{product_id} {[d.get(\"name\") for d in products.find()]}'\n"
    "        products.update_one({'_id': product_id}, {'$set': {'stock': data}})\n"
    "        return\n"
    "    products.update_one({'_id': product_id}, {'$inc': {'stock': n}})")


#: the control: right answers sent as commands by hand (pymongo's command(), and raw OP_MSG with generic
#: arguments first) must keep full marks, or the raw attacks above prove nothing
CONTROL = {
    "98.1": "def count_kitchen(products):\n"
            "    return products.database.command(SON([('lsid', LSID), ('count', products.name),"
            " ('query', {'category': 'kitchen'})]))['n']",
    "98.2": "def restock(products, product_id, n):\n"
            "    reply = raw(products, [('lsid', LSID), ('$readPreference', {'mode': 'primary'}), ('update', products.name),\n"
            "                           ('updates', [{'q': {'_id': product_id}, 'u': {'$inc': {'stock': n}}}]),\n"
            "                           ('$db', products.database.name)])\n"
            "    assert reply.get('ok') == 1 and reply.get('n') == 1, reply",
    "98.3": HONEST["98.3"],
}


def _except(**changed: tuple[str, str, str]) -> dict[str, tuple[str, str, str]]:
    return {**FULL, "98.3": NOPE, **{k.replace("_", "."): v for k, v in changed.items()}}


#: learner -> (answers, the grades its plain answers earn: an attack may only lose points)
ATTACKS: dict[str, tuple[dict[str, str], dict[str, tuple[str, str, str]]]] = {
    **{learner: (_answers(**{"98_2": source}), {**FULL, "98.3": NOPE, "98.2": RMW})
       for learner, source in RACES.items()},
    "control_by_hand": (CONTROL, FULL),
    "probe_commands": (_answers(**{"98_3": PROBE}), _except()),
    "engine_state": (_answers(**{"98_3": ENGINE_STATE}), _except()),
    "pipelines": (_answers(**{"98_3": PIPELINES}), _except()),
    "memory_bomb": (_answers(**{"98_3": MEMORY_BOMB}), _except()),
    "time_bomb": (_answers(**{"98_1": TIME_BOMB}), _except()),
    **{learner: (_answers(**{"98_2": source}), _except(**{"98_2": VISIBLE_ONLY})) for learner, source in LEAKS.items()},
    "leak_later": (_answers(**{"98_2": LEAK_LATER, "98_3": LEAK_LATER_REPORT}), _except(**{"98_3": ("error", "0", "1")})),
    "leak_return": (_answers(**{"98_2": LEAK_RETURN}), _except(**{"98_2": VISIBLE_ONLY})),
}
#: graded with MONGODB_URI beside a classmate graded at the same time
CLASSMATE = (_answers(**{"98_3": CLASSMATES}), _except())


def lab_notebook(answers: dict[str, str], prelude: str = ""):
    """A lab 98 notebook: the start cell, the attackers' helpers (if any), one answer cell per exercise."""
    cells = [code(fake_lesson.DB_START)]
    if prelude:
        cells.append(code(prelude))
    cells += [code(source, f"exercise:{exercise}") for exercise, source in answers.items()]
    return notebook(*cells, lab="98")


def write_class(root: Path, attackers: list[str], victims: tuple[str, ...] = (), attack_seconds: float = 0,
                extra: dict | None = None) -> tuple[Path, Path, dict[str, str]]:
    """One folder per learner under ``root/class``, in grading order: honest, attacker, honest, ... honest.

    Return (class folder, secret tests folder, learner -> the attack it carries).  ``extra`` adds attacks
    by name (for :data:`CLASSMATE`); ``victims`` are the classmates' names the attackers aim at.
    """
    from course.handout.notebooks import write_notebook

    submissions, secret = root / "class", root / "secret"
    secret.mkdir(parents=True, exist_ok=True)
    (secret / "extra_checks.py").write_text(SECRET_TESTS)
    known = {**ATTACKS, **(extra or {})}
    folders = interleaved(attackers)
    for folder, attack in folders.items():
        answers = HONEST if attack == "honest" else known[attack][0]
        me = f"ME = {folder!r}\nVICTIMS = {list(victims)!r}\nATTACK_SECONDS = {attack_seconds!r}\n"
        nb = lab_notebook(answers, "" if attack == "honest" else me + PRELUDE)
        (submissions / folder).mkdir(parents=True)
        write_notebook(nb, submissions / folder / NAME)
    return submissions, secret, folders


def expected(attack: str, extra: dict | None = None) -> dict[str, tuple[str, str, str]]:
    """What ``attack``'s plain answers earn (an honest learner's full marks for "honest")."""
    return FULL if attack == "honest" else {**ATTACKS, **(extra or {})}[attack][1]

