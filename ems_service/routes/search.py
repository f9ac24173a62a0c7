"""Similarity search over stored episodes."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from ems_service.auth import namespace_of
from ems_service.limits import within_limits
from ems_service.routes.deps import runtime
from ems_service.runtime import Runtime
from ems_service.schemas import SearchRequest, SearchResponse, SearchResult

router = APIRouter(prefix="/v1", tags=["search"])


@router.post("/search", response_model=SearchResponse)
@within_limits
def search(body: SearchRequest, rt: Runtime = Depends(runtime), namespace: str = Depends(namespace_of)) -> SearchResponse:
    """The k most similar episodes to a text or a (partial) trajectory, with cosine similarity."""
    hits = rt.memory.search(
        namespace=namespace, text=body.text, trajectory=body.trajectory, k=body.k, domain=body.domain,
        success=body.success, exclude_task_id=body.exclude_task_id, min_similarity=body.min_similarity,
    )
    return SearchResponse(
        results=[
            SearchResult(
                id=h.record.id, similarity=round(h.similarity, 6), domain=h.record.domain, task=h.record.task,
                success=h.record.success, summary=h.record.summary, label_source=h.record.label_source,
                trust=h.record.trust, n_steps=h.record.n_steps, failure_categories=h.record.failure_categories,
                error_patterns=h.record.error_patterns, task_id=h.record.task_id, source=h.record.source,
            )
            for h in hits
        ]
    )
