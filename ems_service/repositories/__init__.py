"""Repositories: the only code that runs SQL. One per aggregate; each answers with plain models, never ORM rows.

- `database`: the engine, transactions (driver errors translated once), advisory locks, standby detection.
- `episodes`: episodes and their deletion log (`StoredEpisode`); `index_feed`: what a vector backend reads.
- `sessions`, `lessons`, `keys`, `events`, `risk_models`, `facts`: one table each.
"""

from ems_service.repositories.database import Database, aware, utcnow
from ems_service.repositories.episodes import (
    EpisodeFilter,
    EpisodeRepository,
    StoredEpisode,
    pack_trajectory,
    unpack_trajectory,
)
from ems_service.repositories.events import Event, EventRepository
from ems_service.repositories.facts import FactRepository, Facts
from ems_service.repositories.index_feed import IndexFeed
from ems_service.repositories.keys import KeyRepository, StoredKey
from ems_service.repositories.lessons import Lesson, LessonRepository
from ems_service.repositories.risk_models import RiskModelRepository, StoredRiskModel
from ems_service.repositories.sessions import LiveSession, SessionRepository

__all__ = [
    "Database", "EpisodeFilter", "EpisodeRepository", "Event", "EventRepository", "FactRepository", "Facts",
    "IndexFeed", "KeyRepository", "Lesson", "LessonRepository", "LiveSession", "RiskModelRepository",
    "SessionRepository", "StoredEpisode", "StoredKey", "StoredRiskModel", "aware", "pack_trajectory",
    "unpack_trajectory", "utcnow",
]
