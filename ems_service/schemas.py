"""API models (wire format /v1): requests and responses of the REST routes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Path as FastPath
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, model_validator

from coach import Guidance, PartialRun, as_data, typed_values_masked
from condenser import Outcome, Step, Trajectory
from ems_service.errors import BadRequest
from ems_service.repositories import StoredEpisode

EpisodeCreate = Trajectory


def _utc(value: datetime) -> datetime:
    """SQLite hands back naive datetimes (stored as UTC): answer RFC 3339 with the offset, as PostgreSQL does."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


UtcDatetime = Annotated[datetime, AfterValidator(_utc)]
# ids are signed 64-bit in both databases: anything else is a 422 before it reaches SQL
RowId = Annotated[int, FastPath(ge=1, le=2**63 - 1, description="a row id (1 .. 2^63-1)")]
MAX_ROW_ID = 2**63 - 1


def parse_cursor(cursor: str | None) -> int | None:
    """A page cursor: the decimal id of the previous page's last row. ASCII digits only ("²" is a digit to
    `str.isdigit` but not to `int`), at most 19 of them, within int64; else 400."""
    if cursor is None:
        return None
    if not (0 < len(cursor) <= 19 and cursor.isascii() and cursor.isdigit()) or int(cursor) > MAX_ROW_ID:
        raise BadRequest("cursor must be the next_cursor value of a previous page")
    return int(cursor)


class Notes(BaseModel):
    """What the service changed about a write, said in the response (e.g. a writer's verified claim)."""

    label_downgraded: bool = Field(False, description="a verified/judge/human/benchmark label from a writer key "
                                                      "was stored as an unverified self-report")
    notes: list[str] = Field(default_factory=list)


class IngestResponse(Notes):
    id: int
    deduplicated: bool


class BatchRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"example": {"episodes": [{"task": "...", "steps": []}]}})
    episodes: list[dict[str, Any]] = Field(description="trajectories; each is validated on its own")


class BatchItem(BaseModel):
    """One item's result: `{id, deduplicated, label_downgraded}` or `{error}`; items never affect each other."""

    id: int | None = None
    deduplicated: bool | None = None
    label_downgraded: bool | None = None
    error: str | None = None


class BatchResponse(BaseModel):
    results: list[BatchItem]


class EpisodeRead(BaseModel):
    id: int
    task: str
    domain: str | None
    url_pattern: str | None
    summary: str
    success: bool | None
    label_source: str
    status: str | None
    trust: float
    error_patterns: list[str]
    failure_categories: list[str]
    n_steps: int
    agent: str | None
    model: str | None
    task_id: str | None
    source: str
    tags: dict[str, str]
    created_at: UtcDatetime
    last_retrieved_at: UtcDatetime | None
    retrieval_count: int
    seen_count: int
    embedding_model: str
    trajectory: dict[str, Any] | None = None

    @classmethod
    def of(cls, record: StoredEpisode, *, trajectory: dict[str, Any] | None = None) -> EpisodeRead:
        fields = {name: getattr(record, name) for name in cls.model_fields if name != "trajectory"}
        return cls(**fields, trajectory=trajectory)


class EpisodePage(BaseModel):
    items: list[EpisodeRead]
    next_cursor: str | None


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    text: str | None = Field(None, min_length=1)
    trajectory: Trajectory | None = None
    k: StrictInt = Field(5, ge=1)
    domain: str | None = None
    success: StrictBool | None = None
    exclude_task_id: str | None = None
    min_similarity: StrictFloat | None = Field(None, ge=-1, le=1)

    @model_validator(mode="after")
    def _one_query(self) -> SearchRequest:
        if (self.text is None) == (self.trajectory is None):
            raise ValueError("give exactly one of `text` or `trajectory`")
        return self


class SearchResult(BaseModel):
    id: int
    similarity: float
    domain: str | None
    task: str
    success: bool | None
    summary: str
    label_source: str
    trust: float
    n_steps: int
    failure_categories: list[str]
    error_patterns: list[str]
    task_id: str | None
    source: str

    @classmethod
    def of(cls, episode: StoredEpisode, similarity: float) -> SearchResult:
        fields = {name: getattr(episode, name) for name in cls.model_fields if name != "similarity"}
        # a stored task or summary is data for the agent reading it (MCP's search_memory too), quoted as the coach
        # quotes its evidence: an order written into it is [removed], the values its actions typed are not shown
        fields["task"], fields["summary"] = as_data(episode.task), as_data(typed_values_masked(episode.summary))
        return cls(**fields, similarity=round(similarity, 6))


class SearchResponse(BaseModel):
    results: list[SearchResult]


class ErrorBody(BaseModel):
    error: str
    detail: str
    request_id: str


class CoachRequest(BaseModel):
    """A partial run and the retrieval controls (same as search)."""

    model_config = ConfigDict(extra="forbid")
    trajectory: PartialRun
    k: StrictInt | None = Field(None, ge=1, description="neighbours to retrieve (default EMS_COACH__K)")
    exclude_task_id: str | None = Field(None, description="leave out every run of this task (leakage control)")
    exclude_own_task: StrictBool = Field(False, description="leave out every run of the run's own task: its task_id, or "
                                   "the id derived from its task text when it has none")
    domain: str | None = Field(None, description="retrieve only from this site")


class SessionCreate(PartialRun):
    """Start a live run: the task (and optionally its first steps)."""


class SessionRead(BaseModel):
    id: str
    status: str
    n_steps: int
    task: str
    episode_id: int | None
    created_at: UtcDatetime
    updated_at: UtcDatetime


class StepsAppend(BaseModel):
    model_config = ConfigDict(extra="forbid")
    steps: list[Step] = Field(min_length=1)


class StepsResponse(BaseModel):
    session_id: str
    n_steps: int
    guidance: Guidance | None = Field(None, description="present only when the coach intervenes")


class FinishRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    outcome: Outcome


class FinishResponse(Notes):
    session_id: str
    episode_id: int
    deduplicated: bool
