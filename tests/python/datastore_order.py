"""Writes one entity per value type through Google's Python Datastore client, then reads the
kind back ordered by that property, both ways, and with equality filters: what any Datastore
client sees of Datastore mode's value order. Prints JSON on stdout.

Environment: DATASTORE_EMULATOR_HOST, and PROJECT (a project no other test uses).
"""
import datetime
import json
import os

from google.cloud import datastore
from google.cloud.datastore.helpers import GeoPoint
from google.cloud.datastore.query import PropertyFilter

client = datastore.Client(project=os.environ["PROJECT"])
utc = datetime.timezone.utc
values = {
    "null": None,
    "int_min": -(2**63),
    "ts_1970_plus_1us": datetime.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=utc),
    "int_3": 3,
    "ts_2020": datetime.datetime(2020, 1, 1, tzinfo=utc),
    "int_1e18": 10**18,
    "false": False,
    "true": True,
    "blob_00": b"\x00",
    "str_a": "a",
    "blob_ab": b"ab",
    "str_e_acute": "\u00e9",
    "blob_ff": b"\xff",
    "double_-inf": float("-inf"),
    "double_-0": -0.0,
    "double_0": 0.0,
    "double_1.5": 1.5,
    "double_inf": float("inf"),
    "double_nan": float("nan"),
    "geo_0_5": GeoPoint(0, 5),
    "geo_1_1": GeoPoint(1, 1),
    "key_A_5": client.key("A", 5),
    "key_A_a": client.key("A", "a"),
    "key_A_a_C_c": client.key("A", "a", "C", "c"),
    "key_B_1": client.key("B", 1),
}
entities = []
for name, value in values.items():
    entity = datastore.Entity(client.key("Ordered", name))
    entity["p"] = value
    entities.append(entity)
client.put_multi(entities)


def names(query):
    return [entity.key.name for entity in query.fetch()]


ascending = client.query(kind="Ordered")
ascending.order = ["p"]
descending = client.query(kind="Ordered")
descending.order = ["-p"]
equal = {}
for name, value in [("double_0", 0.0), ("int_0", 0), ("double_nan", float("nan"))]:
    query = client.query(kind="Ordered")
    query.add_filter(filter=PropertyFilter("p", "=", value))
    equal[name] = names(query)
print(json.dumps({"ascending": names(ascending), "descending": names(descending), "equal": equal}))
