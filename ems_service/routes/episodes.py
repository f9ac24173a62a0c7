"""Episodes: ingest (one or a batch), read, list, delete."""

from __future__ import annotations

from fastapi import APIRouter, Query, Response
from pydantic import ValidationError

from condenser import Trajectory
from ems_service.auth import DOWNGRADE_NOTE
from ems_service.dataset import describe_validation_error
from ems_service.errors import LimitExceeded
from ems_service.limits import within_limits
from ems_service.repositories import EpisodeFilter
from ems_service.routes.deps import Checked, Episodes, Ingest, Namespace, Role
from ems_service.routes.responses import ModelJSON
from ems_service.schemas import (
    BatchItem,
    BatchRequest,
    BatchResponse,
    EpisodeCreate,
    EpisodePage,
    EpisodeRead,
    IngestResponse,
    RowId,
    parse_cursor,
)

router = APIRouter(prefix="/v1", tags=["episodes"])


@router.post("/episodes", status_code=201, response_model=IngestResponse,
             responses={200: {"model": IngestResponse, "description": "already stored: the existing id (deduplicated)"}})
@within_limits
def ingest(body: EpisodeCreate, ingest: Ingest, namespace: Namespace, role: Role, limits: Checked) -> ModelJSON:
    """Store one finished trajectory; 201 once its row is committed (200 with deduplicated=true for a repeat).
    A writer key's verified claim is stored as an unverified self-report (`label_downgraded: true`)."""
    result = ingest.ingest(namespace=namespace, trajectories=[body], role=role)[0]
    if result.error:
        raise result.error
    return ModelJSON(IngestResponse(id=result.id, deduplicated=result.deduplicated,
                                    label_downgraded=result.label_downgraded,
                                    notes=[DOWNGRADE_NOTE] if result.label_downgraded else []),
                     status_code=200 if result.deduplicated else 201)


@router.post("/episodes:batch", response_model=BatchResponse)
@within_limits
def ingest_batch(body: BatchRequest, ingest: Ingest, namespace: Namespace, role: Role,
                 limits: Checked) -> BatchResponse:
    """Store many trajectories (embedded in one batch), with one result per item, in order: `{id, deduplicated,
    label_downgraded}` or `{error}`. An item is checked, limited and stored on its own: a bad one never sinks
    the others, on either database. Only the batch's own limits (body size, item count) refuse it whole."""
    items: list[BatchItem | None] = [None] * len(body.episodes)
    valid: list[tuple[int, Trajectory]] = []
    for i, raw in enumerate(body.episodes):
        try:
            trajectory = Trajectory.model_validate(raw)
            limits.check(trajectory)  # an item is a run: the limits of POST /v1/episodes, item by item
        except ValidationError as exc:
            items[i] = BatchItem(error=describe_validation_error(exc))
        except LimitExceeded as exc:
            items[i] = BatchItem(error=exc.detail)
        else:
            valid.append((i, trajectory))
    results = ingest.ingest(namespace=namespace, trajectories=[t for _, t in valid], role=role)
    for (i, _), res in zip(valid, results, strict=True):
        items[i] = (BatchItem(error=res.error.detail) if res.error else
                    BatchItem(id=res.id, deduplicated=res.deduplicated, label_downgraded=res.label_downgraded))
    return BatchResponse(results=[it for it in items if it is not None])


@router.get("/episodes/{episode_id}", response_model=EpisodeRead)
@within_limits
def get_episode(episode_id: RowId, episodes: Episodes, namespace: Namespace, limits: Checked,
                include_trajectory: bool = False) -> EpisodeRead:
    """One episode; `include_trajectory=true` adds the stored (redacted) raw trajectory."""
    record = episodes.get(namespace=namespace, episode_id=episode_id)
    trajectory = (episodes.trajectory(namespace=namespace, episode_id=episode_id).model_dump(mode="json")
                  if include_trajectory else None)
    return EpisodeRead.of(record, trajectory=trajectory)


@router.get("/episodes", response_model=EpisodePage)
@within_limits
def list_episodes(
    domain: str | None = None,
    success: bool | None = None,
    source: str | None = Query(None, pattern="^(self|seed|import)$"),
    cursor: str | None = Query(None, description="next_cursor of the previous page"),
    limit: int = Query(50, ge=1),
    *,
    episodes: Episodes,
    namespace: Namespace,
    limits: Checked,
) -> EpisodePage:
    """Episodes in id order, filtered, one page at a time."""
    after = parse_cursor(cursor)
    records = episodes.page(namespace=namespace, flt=EpisodeFilter(domain, success, source), cursor=after,
                             limit=limit + 1)
    page = records[:limit]
    next_cursor = str(page[-1].id) if len(records) > limit else None
    return EpisodePage(items=[EpisodeRead.of(r) for r in page], next_cursor=next_cursor)


@router.delete("/episodes/{episode_id}", status_code=204)
@within_limits
def delete_episode(episode_id: RowId, ingest: Ingest, namespace: Namespace, role: Role, limits: Checked) -> Response:
    """Delete an episode's row and vector (a verified episode: a verifier or admin key only, 403 otherwise)."""
    ingest.delete(namespace=namespace, episode_id=episode_id, role=role)
    return Response(status_code=204)
