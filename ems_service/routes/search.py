"""Similarity search over stored episodes."""

from __future__ import annotations

from fastapi import APIRouter

from ems_service.limits import within_limits
from ems_service.routes.deps import Checked, Namespace, Retrieval
from ems_service.routes.responses import ModelJSON
from ems_service.schemas import SearchRequest, SearchResponse, SearchResult

router = APIRouter(prefix="/v1", tags=["search"])


@router.post("/search", response_model=SearchResponse)
@within_limits
def search(body: SearchRequest, retrieval: Retrieval, namespace: Namespace, limits: Checked) -> ModelJSON:
    """The k most similar episodes to a text or a (partial) trajectory, with cosine similarity."""
    hits = retrieval.search(
        namespace=namespace, text=body.text, trajectory=body.trajectory, k=body.k, domain=body.domain,
        success=body.success, exclude_task_id=body.exclude_task_id, min_similarity=body.min_similarity,
    )
    return ModelJSON(SearchResponse(results=[SearchResult.of(h.episode, h.similarity) for h in hits]))
