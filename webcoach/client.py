"""Sync and async clients for the WebCoach EMS REST API (httpx), with retries and typed models.

Retries: connection errors and 5xx responses are retried with exponential backoff (`retries` times); a 4xx is
never retried: it names what is wrong with the request and raises ApiError at once. Appending steps to a
session is not idempotent, so it is retried only when the request provably did not reach the server
(connection refused / connect timeout) or the server answered 503 (nothing written).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from coach.models import Guidance
from condenser.models import Outcome, Step, Trajectory
from webcoach.tracecontext import trace_headers

StepLike = Step | Mapping[str, Any]
TrajectoryLike = Trajectory | Mapping[str, Any]

_NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout)


class ApiError(Exception):
    """The service refused a request: `status`, `error` (a short code), `detail`, `request_id`."""

    def __init__(self, status: int, error: str, detail: str, request_id: str | None = None) -> None:
        super().__init__(f"{status} {error}: {detail}")
        self.status, self.error, self.detail, self.request_id = status, error, detail, request_id

    @classmethod
    def of(cls, response: httpx.Response) -> ApiError:
        try:
            body = response.json()
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        return cls(response.status_code, str(body.get("error", response.reason_phrase)),
                   str(body.get("detail", response.text[:500])), body.get("request_id"))


def _dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, Mapping):
        return {k: _dump(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_dump(v) for v in value]
    return value


def _trajectory(trajectory: TrajectoryLike | None, fields: Mapping[str, Any]) -> dict[str, Any]:
    body = _dump(trajectory) if trajectory is not None else {}
    body.update(_dump(dict(fields)))
    if "task" not in body:
        raise ValueError("a trajectory needs a task")
    return body


def _outcome(success: bool | None, label_source: str, status: str | None, verified: bool) -> dict[str, Any]:
    return Outcome(success=success, label_source=label_source, status=status, verified=verified).model_dump(mode="json")


def _search_body(text: str | None, trajectory: TrajectoryLike | None, k: int, **filters: Any) -> dict[str, Any]:
    if (text is None) == (trajectory is None):
        raise ValueError("give either text or trajectory")
    body: dict[str, Any] = {"k": k, **{key: v for key, v in filters.items() if v is not None}}
    if text is not None:
        body["text"] = text
    else:
        body["trajectory"] = _dump(trajectory)
    return body


class _Retry:
    def __init__(self, retries: int, backoff: float) -> None:
        self.retries, self.backoff = retries, backoff

    def delay(self, attempt: int) -> float:
        return self.backoff * (2**attempt) * (0.5 + random.random() / 2)  # jitter, not a secret: random is fine

    def should_retry(self, attempt: int, *, error: Exception | None, status: int | None, idempotent: bool) -> bool:
        if attempt >= self.retries:
            return False
        if error is not None:
            return idempotent or isinstance(error, _NEVER_SENT)
        assert status is not None
        return status >= 500 and (idempotent or status == 503)


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"User-Agent": "webcoach-sdk/0.1"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


class Client:
    """Blocking client. Use as a context manager or call close()."""

    def __init__(self, base_url: str = "http://127.0.0.1:8080", *, api_key: str | None = None,
                 timeout: float = 10.0, retries: int = 3, backoff: float = 0.2,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._http = httpx.Client(base_url=base_url, timeout=timeout, headers=_headers(api_key), transport=transport)
        self._retry = _Retry(retries, backoff)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, *, idempotent: bool = True, **kwargs: Any) -> Any:
        """One API call with retries; returns the decoded JSON (None for 204) or raises ApiError."""
        if trace := trace_headers():  # the caller's trace context (W3C traceparent), when it has one
            kwargs["headers"] = {**trace, **kwargs.get("headers", {})}
        attempt = 0
        while True:
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                if not self._retry.should_retry(attempt, error=exc, status=None, idempotent=idempotent):
                    raise
            else:
                if response.status_code < 400:
                    return response.json() if response.content else None
                if not self._retry.should_retry(attempt, error=None, status=response.status_code,
                                                idempotent=idempotent):
                    raise ApiError.of(response)
            time.sleep(self._retry.delay(attempt))
            attempt += 1

    # -- memory ---------------------------------------------------------------------------------------------

    def ingest(self, trajectory: TrajectoryLike | None = None, **fields: Any) -> dict[str, Any]:
        """Store a finished run: {id, deduplicated}. Safe to retry (the service deduplicates by content)."""
        return self.request("POST", "/v1/episodes", json=_trajectory(trajectory, fields))

    def ingest_batch(self, trajectories: Iterable[TrajectoryLike]) -> list[dict[str, Any]]:
        """Store many runs; one result per run ({id, deduplicated} or {error})."""
        body = {"episodes": [_dump(t) for t in trajectories]}
        return self.request("POST", "/v1/episodes:batch", json=body)["results"]

    def search(self, text: str | None = None, *, trajectory: TrajectoryLike | None = None, k: int = 5,
               domain: str | None = None, success: bool | None = None, exclude_task_id: str | None = None,
               min_similarity: float | None = None) -> list[dict[str, Any]]:
        body = _search_body(text, trajectory, k, domain=domain, success=success, exclude_task_id=exclude_task_id,
                            min_similarity=min_similarity)
        return self.request("POST", "/v1/search", json=body)["results"]

    def episode(self, episode_id: int, *, include_trajectory: bool = False) -> dict[str, Any]:
        return self.request("GET", f"/v1/episodes/{episode_id}", params={"include_trajectory": include_trajectory})

    def delete_episode(self, episode_id: int) -> None:
        self.request("DELETE", f"/v1/episodes/{episode_id}")

    def stats(self) -> dict[str, Any]:
        return self.request("GET", "/v1/stats")

    # -- coaching -------------------------------------------------------------------------------------------

    def coach(self, trajectory: TrajectoryLike | None = None, *, k: int | None = None,
              exclude_task_id: str | None = None, domain: str | None = None, **fields: Any) -> Guidance:
        """Guidance for a partial run (stateless)."""
        body = {"trajectory": _trajectory(trajectory, fields), "k": k, "exclude_task_id": exclude_task_id,
                "domain": domain}
        return Guidance.model_validate(self.request("POST", "/v1/coach", json=_dump(body)))

    def start_session(self, trajectory: TrajectoryLike | None = None, **fields: Any) -> Session:
        """Start a live run (task, start_url, agent, ...); stream its steps with Session.add_steps."""
        data = self.request("POST", "/v1/sessions", json=_trajectory(trajectory, fields))
        return Session(self, data["id"])

    # -- lessons and experience -----------------------------------------------------------------------------

    def lessons(self, *, tier: int | None = None) -> list[dict[str, Any]]:
        params = {"tier": tier} if tier is not None else None
        return self.request("GET", "/v1/lessons", params=params)["lessons"]

    def add_lesson(self, lesson: str, *, category: str = "site_specific", domain: str | None = None,
                   failed_command: str | None = None, error: str | None = None) -> dict[str, Any]:
        body = {"lesson": lesson, "category": category, "domain": domain, "failed_command": failed_command,
                "error": error}
        return self.request("POST", "/v1/lessons", json=_dump(body), idempotent=False)

    def recall(self, *, command: str | None = None, error: str | None = None,
               domain: str | None = None) -> list[dict[str, Any]]:
        body = _dump({"command": command, "error": error, "domain": domain})
        return self.request("POST", "/v1/lessons/recall", json=body)["lessons"]

    def experience(self, url: str, *, intent: str | None = None) -> dict[str, Any]:
        params = {"url": url, **({"intent": intent} if intent else {})}
        return self.request("GET", "/v1/experience", params=params)


class Session:
    """A live run on the service."""

    def __init__(self, client: Client, session_id: str) -> None:
        self.client, self.id = client, session_id

    def add_steps(self, steps: Iterable[StepLike]) -> Guidance | None:
        """Append steps; returns the guidance when the coach intervenes, else None."""
        data = self.client.request("POST", f"/v1/sessions/{self.id}/steps", json={"steps": _dump(list(steps))},
                                   idempotent=False)
        return Guidance.model_validate(data["guidance"]) if data.get("guidance") else None

    def coaching(self) -> Guidance:
        return Guidance.model_validate(self.client.request("GET", f"/v1/sessions/{self.id}/coaching"))

    def state(self) -> dict[str, Any]:
        return self.client.request("GET", f"/v1/sessions/{self.id}")

    def finish(self, success: bool | None = None, *, label_source: str = "self_report", status: str | None = None,
               verified: bool = False) -> dict[str, Any]:
        """End the run: it becomes an episode ({episode_id, deduplicated, lessons})."""
        body = {"outcome": _outcome(success, label_source, status, verified)}
        return self.client.request("POST", f"/v1/sessions/{self.id}/finish", json=body)


class AsyncClient:
    """The same API for asyncio agents."""

    def __init__(self, base_url: str = "http://127.0.0.1:8080", *, api_key: str | None = None,
                 timeout: float = 10.0, retries: int = 3, backoff: float = 0.2,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._http = httpx.AsyncClient(base_url=base_url, timeout=timeout, headers=_headers(api_key),
                                       transport=transport)
        self._retry = _Retry(retries, backoff)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(self, method: str, path: str, *, idempotent: bool = True, **kwargs: Any) -> Any:
        if trace := trace_headers():
            kwargs["headers"] = {**trace, **kwargs.get("headers", {})}
        attempt = 0
        while True:
            try:
                response = await self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                if not self._retry.should_retry(attempt, error=exc, status=None, idempotent=idempotent):
                    raise
            else:
                if response.status_code < 400:
                    return response.json() if response.content else None
                if not self._retry.should_retry(attempt, error=None, status=response.status_code,
                                                idempotent=idempotent):
                    raise ApiError.of(response)
            await asyncio.sleep(self._retry.delay(attempt))
            attempt += 1

    async def ingest(self, trajectory: TrajectoryLike | None = None, **fields: Any) -> dict[str, Any]:
        return await self.request("POST", "/v1/episodes", json=_trajectory(trajectory, fields))

    async def ingest_batch(self, trajectories: Iterable[TrajectoryLike]) -> list[dict[str, Any]]:
        body = {"episodes": [_dump(t) for t in trajectories]}
        return (await self.request("POST", "/v1/episodes:batch", json=body))["results"]

    async def search(self, text: str | None = None, *, trajectory: TrajectoryLike | None = None, k: int = 5,
                     domain: str | None = None, success: bool | None = None, exclude_task_id: str | None = None,
                     min_similarity: float | None = None) -> list[dict[str, Any]]:
        body = _search_body(text, trajectory, k, domain=domain, success=success, exclude_task_id=exclude_task_id,
                            min_similarity=min_similarity)
        return (await self.request("POST", "/v1/search", json=body))["results"]

    async def stats(self) -> dict[str, Any]:
        return await self.request("GET", "/v1/stats")

    async def coach(self, trajectory: TrajectoryLike | None = None, *, k: int | None = None,
                    exclude_task_id: str | None = None, domain: str | None = None, **fields: Any) -> Guidance:
        body = {"trajectory": _trajectory(trajectory, fields), "k": k, "exclude_task_id": exclude_task_id,
                "domain": domain}
        return Guidance.model_validate(await self.request("POST", "/v1/coach", json=_dump(body)))

    async def start_session(self, trajectory: TrajectoryLike | None = None, **fields: Any) -> AsyncSession:
        data = await self.request("POST", "/v1/sessions", json=_trajectory(trajectory, fields))
        return AsyncSession(self, data["id"])

    async def lessons(self, *, tier: int | None = None) -> list[dict[str, Any]]:
        params = {"tier": tier} if tier is not None else None
        return (await self.request("GET", "/v1/lessons", params=params))["lessons"]

    async def recall(self, *, command: str | None = None, error: str | None = None,
                     domain: str | None = None) -> list[dict[str, Any]]:
        body = _dump({"command": command, "error": error, "domain": domain})
        return (await self.request("POST", "/v1/lessons/recall", json=body))["lessons"]

    async def experience(self, url: str, *, intent: str | None = None) -> dict[str, Any]:
        params = {"url": url, **({"intent": intent} if intent else {})}
        return await self.request("GET", "/v1/experience", params=params)


class AsyncSession:
    def __init__(self, client: AsyncClient, session_id: str) -> None:
        self.client, self.id = client, session_id

    async def add_steps(self, steps: Iterable[StepLike]) -> Guidance | None:
        data = await self.client.request("POST", f"/v1/sessions/{self.id}/steps",
                                         json={"steps": _dump(list(steps))}, idempotent=False)
        return Guidance.model_validate(data["guidance"]) if data.get("guidance") else None

    async def coaching(self) -> Guidance:
        return Guidance.model_validate(await self.client.request("GET", f"/v1/sessions/{self.id}/coaching"))

    async def finish(self, success: bool | None = None, *, label_source: str = "self_report",
                     status: str | None = None, verified: bool = False) -> dict[str, Any]:
        body = {"outcome": _outcome(success, label_source, status, verified)}
        return await self.client.request("POST", f"/v1/sessions/{self.id}/finish", json=body)
