"""Dashboard pages over the episodic memory: the namespace overview, episodes (filtered, paged, one by one) and
search. Each page calls the service methods its REST route calls, in the viewer's namespace only."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from ems_service.errors import LimitExceeded
from ems_service.repositories import EpisodeFilter
from ems_service.routes.deps import Checked, Episodes, Keys, Retrieval
from ems_service.schemas import RowId, parse_cursor
from ems_service.ui.login import Who
from ems_service.ui.render import link, page

router = APIRouter(prefix="/ui")
PAGE_SIZES = (10, 20, 50, 100)
SIMILAR = 5
OutcomeFilter = Literal["", "success", "failure"]


def _success(value: str) -> bool | None:
    return {"success": True, "failure": False}.get(value)


@router.get("", include_in_schema=False)
async def root() -> RedirectResponse:
    return RedirectResponse("/ui/", status_code=307)


@router.get("/", response_class=HTMLResponse)
def overview(request: Request, catalog: Episodes, keys: Keys, who: Who) -> HTMLResponse:
    """What the key may see: its own namespace (counts as /v1/stats gives them); an admin key also sees which
    namespaces have keys (as /v1/admin/keys shows them), never their episodes."""
    stats = catalog.stats(namespace=who.namespace)
    namespaces: list[tuple[str, str]] = []
    if who.role == "admin":
        roles: dict[str, Counter[str]] = {}
        for key in keys.list():
            if not key["revoked"]:
                roles.setdefault(key["namespace"], Counter())[key["role"]] += 1
        namespaces = [(ns, ", ".join(f"{n} {role}" for role, n in sorted(c.items()))) for ns, c in sorted(roles.items())]
    return page(request, "overview.html", viewer=who, active="overview", stats=stats, namespaces=namespaces)


@router.get("/episodes", response_class=HTMLResponse)
def episodes(
    request: Request,
    catalog: Episodes,
    limits: Checked,
    who: Who,
    domain: str = "",
    outcome: OutcomeFilter = "",
    source: Literal["", "self", "seed", "import"] = "",
    cursor: str | None = None,
    limit: int = Query(20, ge=1),
) -> HTMLResponse:
    """Episodes in id order, filtered, one page at a time (the cursor of GET /v1/episodes)."""
    if limit > limits.settings.max_page:
        raise LimitExceeded(f"limit={limit} exceeds {limits.settings.max_page} (EMS_LIMITS__MAX_PAGE)")
    limits.check(domain=domain or None)
    after = parse_cursor(cursor or None)
    records = catalog.page(namespace=who.namespace, cursor=after, limit=limit + 1,
                           flt=EpisodeFilter(domain.strip().lower() or None, _success(outcome), source or None))
    rows = records[:limit]
    filters = {"domain": domain, "outcome": outcome, "source": source, "limit": limit if limit != 20 else None}
    next_url = link("/ui/episodes", **filters, cursor=rows[-1].id) if len(records) > limit else None
    return page(request, "episodes.html", viewer=who, active="episodes", rows=rows, next_url=next_url,
                first_url=link("/ui/episodes", **filters) if after is not None else None,
                domain=domain, outcome=outcome, source=source, limit=limit, page_sizes=PAGE_SIZES)


@router.get("/episodes/{episode_id}", response_class=HTMLResponse)
def episode(request: Request, episode_id: RowId, catalog: Episodes, retrieval: Retrieval,
            who: Who) -> HTMLResponse:
    """One episode: its summary, outcome, steps (the stored, redacted run) and the episodes most like it.

    The neighbours come from the run's own query text, through the search path the coach uses (not the stored
    vector, whose home differs between vector backends), without counting as retrievals: looking at memory must
    not change what eviction keeps."""
    record = catalog.get(namespace=who.namespace, episode_id=episode_id)
    trajectory = catalog.trajectory(namespace=who.namespace, episode_id=episode_id)
    vector = retrieval.embed_query(who.namespace, retrieval.query_text(trajectory=trajectory))
    hits = retrieval.search_vector(namespace=who.namespace, vector=vector, k=SIMILAR + 1, touch=False)
    similar = [h for h in hits if h.episode.id != record.id][:SIMILAR]
    site = record.domain and link("/ui/experience", url=trajectory.start_url or f"https://{record.domain}/")
    return page(request, "episode.html", viewer=who, active="episodes", e=record, trajectory=trajectory,
                similar=similar, experience_url=site)


@router.get("/search", response_class=HTMLResponse)
def search(request: Request, retrieval: Retrieval, limits: Checked, who: Who, q: str = "",
           k: int = Query(10, ge=1), domain: str = "", outcome: OutcomeFilter = "") -> HTMLResponse:
    """The most similar episodes to a text (POST /v1/search with `text`), without counting as retrievals."""
    hits = []
    if q.strip():
        limits.check(text=q, k=k, domain=domain or None)
        vector = retrieval.embed_query(who.namespace, retrieval.query_text(text=q))
        hits = retrieval.search_vector(namespace=who.namespace, vector=vector, k=k, domain=domain.strip() or None,
                                    success=_success(outcome), touch=False)
    return page(request, "search.html", viewer=who, active="search", q=q, k=k, domain=domain, outcome=outcome,
                hits=hits, searched=bool(q.strip()))
