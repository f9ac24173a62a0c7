"""JSON columns read back through orjson, with the standard parser for what orjson refuses but json.dumps (the
columns' writer) may have written."""

from __future__ import annotations

import math

import numpy as np
from sqlalchemy.engine import make_url

from condenser import Outcome, Step, Trajectory, condense
from ems_service.db import json_loads
from ems_service.repositories import Database, EpisodeRepository


def test_json_loads_parses_what_orjson_refuses():
    assert json_loads('{"a": [1, "ü", 2.5, null]}') == {"a": [1, "ü", 2.5, None]}
    for big in (2**64 + 1, -(2**63) - 1, 10**30 + 7):  # past 64 bits: orjson would give a float (2**64 + 1 -> 2**64)
        [value] = json_loads(f"[{big}]")
        assert type(value) is int and value == big
        assert json_loads(f"[{big}]".encode()) == [big]  # psycopg hands the text over as bytes
    value = json_loads('{"x": NaN, "y": Infinity}')
    assert math.isnan(value["x"]) and value["y"] == math.inf


def test_episode_json_columns_round_trip(db_url):
    repo = EpisodeRepository(Database(db_url))
    episode = condense(Trajectory(task="book a table", steps=[Step(action="click[1]")], outcome=Outcome(success=True),
                                  domain="resy.com", tags={"team": "ünïcode ✓"}), namespace="ns")
    brief = [{"step": 1, "big": 2**70 + 1, "share": 0.25, "text": "a \"quoted\" value\n"}]
    sqlite = make_url(db_url).get_backend_name() == "sqlite"
    if sqlite:  # PostgreSQL's json type refuses NaN on the way in; SQLite stores what json.dumps wrote
        brief.append({"nan": math.nan})
    [episode_id] = repo.insert([episode.model_copy(update={"steps_brief": brief})], np.ones((1, 384), np.float32), "m")
    got = repo.summaries("ns", [episode_id])[episode_id]
    assert got.tags == {"team": "ünïcode ✓"}
    assert got.steps_brief[0] == brief[0] and type(got.steps_brief[0]["big"]) is int
    if sqlite:
        assert math.isnan(got.steps_brief[1]["nan"])
