"""JSON columns give back what was stored: integers past 64 bits stay integers (orjson, tried for speed, reads them
as floats), NaN on SQLite (json.dumps, the columns' writer, writes it)."""

from __future__ import annotations

import math

import numpy as np
from sqlalchemy.engine import make_url

from condenser import Outcome, Step, Trajectory, condense
from ems_service.repositories import Database, EpisodeRepository


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
