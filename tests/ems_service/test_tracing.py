"""OpenTelemetry (opt-in): spans with the right parents and attributes, the caller's traceparent honoured and sent
by the SDK, and no content in any exported attribute (in-memory exporter, real app, real model, both databases)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from ems_service import EmbeddedServer, Settings, tracing
from ems_service.keys import KeyRing
from ems_service.repositories import KeyRepository
from webcoach import Client, traceparent

TASK = "Order the Zebra-Quokka-7731 teapot in jade green"  # distinctive: must never reach an exporter
URL = "https://shop.quokka-secret.example/teapots?colour=jade"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
EXPORTER = InMemorySpanExporter()


def _provider() -> TracerProvider:
    """The process's provider: ours with the in-memory exporter (a global provider can be set only once)."""
    current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        current = TracerProvider()
        current.add_span_processor(SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(current)
    return current


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    _provider()
    EXPORTER.clear()
    yield EXPORTER
    tracing.shutdown()
    EXPORTER.clear()


def _run(n_failures: int = 3) -> dict:
    steps = [{"url": URL, "action": "click('Add to basket')", "error": "TimeoutError: element not visible"}
             for _ in range(n_failures)]
    return {"task": TASK, "start_url": URL, "steps": steps}


def _by_name(finished: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in finished if s.name == name]


def _ancestors(span: ReadableSpan, finished: tuple[ReadableSpan, ...]) -> list[str]:
    by_id = {s.context.span_id: s for s in finished}
    names = []
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        names.append(span.name)
    return names


def _traced_settings(settings: Settings) -> Settings:
    settings.tracing.enabled = True
    settings.coach.refit_every = 0
    return settings


def test_spans_parents_and_attributes(spans, make_client, settings):
    with make_client(_traced_settings(settings)) as client:
        ingest = client.post("/v1/episodes", json=_run() | {"outcome": {"success": False}})
        assert ingest.status_code == 201
        spans.clear()
        header = f"00-{TRACE_ID}-{PARENT_ID}-01"
        coached = client.post("/v1/coach", json={"trajectory": _run(4), "k": 5}, headers={"traceparent": header})
        assert coached.status_code == 200
    finished = spans.get_finished_spans()
    request = [s for s in finished if s.kind == SpanKind.SERVER]
    assert [s.name for s in request] == ["POST /v1/coach"]
    root = request[0]
    assert format(root.context.trace_id, "032x") == TRACE_ID  # the caller's trace ...
    assert format(root.parent.span_id, "016x") == PARENT_ID  # ... and the caller's span is the parent
    assert root.attributes["http.response.status_code"] == 200
    assert root.attributes["ems.namespace"] == "default"
    (coach,) = _by_name(finished, "coach")
    assert coach.parent.span_id == root.context.span_id
    assert coach.attributes["ems.namespace"] == "default"
    assert coach.attributes["ems.k"] == 5 and coach.attributes["ems.steps"] == 4
    assert coach.attributes["ems.intervene"] == coached.json()["intervene"]
    assert coach.attributes["ems.risk"] == pytest.approx(coached.json()["failure_risk"], abs=1e-4)
    for name in ("embed", "index", "store"):
        assert any("coach" in _ancestors(s, finished) for s in _by_name(finished, name)), name
    (search,) = [s for s in _by_name(finished, "index") if s.attributes.get("ems.op") == "search"]
    assert search.attributes["ems.k"] >= 5 and search.attributes["ems.namespace"] == "default"
    assert all(s.context.trace_id == root.context.trace_id for s in finished)


def test_ingest_spans_condense_embed_store_index(spans, make_client, settings):
    with make_client(_traced_settings(settings)) as client:
        assert client.post("/v1/episodes", json=_run() | {"outcome": {"success": True}}).status_code == 201
    finished = spans.get_finished_spans()
    (ingest,) = _by_name(finished, "ingest")
    assert ingest.attributes["ems.count"] == 1 and ingest.attributes["ems.namespace"] == "default"
    assert _ancestors(ingest, finished) == ["POST /v1/episodes"]
    (condense,) = _by_name(finished, "condense")
    assert condense.attributes["ems.steps"] == 3 and _ancestors(condense, finished)[0] == "ingest"
    assert any(_ancestors(s, finished)[:1] == ["ingest"] for s in _by_name(finished, "embed"))
    adds = [s for s in _by_name(finished, "index") if s.attributes.get("ems.op") == "add"]
    assert adds and adds[0].attributes["ems.count"] == 1
    inserts = [s for s in _by_name(finished, "store") if s.attributes.get("db.operation") == "INSERT"]
    assert inserts and all("ingest" in _ancestors(s, finished) for s in inserts)


def test_no_content_in_any_attribute(spans, make_client, settings):
    """A distinctive task, url and API key go through ingest, search, sessions and coaching (and a refusal):
    none of them, nor any part of them, appears in a span name or attribute."""
    with make_client(_traced_settings(settings)) as client:
        rt = client.app.state.runtime
        _, key = KeyRing(KeyRepository(rt.db)).create(namespace="tenant-a", role="writer")
        rt.keys.refresh()
        auth = {"Authorization": f"Bearer {key}"}
        assert client.post("/v1/episodes", json=_run() | {"outcome": {"success": False}}, headers=auth).status_code == 201
        assert client.post("/v1/search", json={"text": TASK, "k": 3}, headers=auth).status_code == 200
        assert client.post("/v1/coach", json={"trajectory": _run()}, headers=auth).status_code == 200
        session = client.post("/v1/sessions", json={"task": TASK, "start_url": URL}, headers=auth).json()
        assert client.post(f"/v1/sessions/{session['id']}/steps", json={"steps": _run()["steps"]},
                           headers=auth).status_code == 200
        assert client.post("/v1/search", json={"text": TASK, "k": 10_000}, headers=auth).status_code == 413
        assert client.get("/v1/experience", params={"url": URL}, headers=auth).status_code == 200
        assert client.post("/v1/search", json={"text": TASK}, headers={"Authorization": "Bearer nope"}).status_code == 401
    finished = spans.get_finished_spans()
    assert len(finished) > 20
    assert {s.attributes.get("ems.namespace") for s in finished if s.kind == SpanKind.SERVER} >= {"tenant-a"}
    words = {"Zebra", "Quokka", "7731", "teapot", "jade", "quokka-secret", "Add to basket", "TimeoutError", key,
             key[:10], session["id"], "nope"}
    for s in finished:
        texts = [s.name] + [str(v) for v in s.attributes.values()]
        texts += [str(v) for e in s.events for v in e.attributes.values()]
        for word in words:
            assert not any(word in t for t in texts), (s.name, word)


def test_off_means_no_spans(spans, make_client, settings):
    settings.coach.refit_every = 0
    assert not settings.tracing.enabled
    with make_client(settings) as client:
        assert client.post("/v1/coach", json={"trajectory": _run()}).status_code == 200
        assert not tracing.enabled()
        assert all(m.cls is not tracing.TraceRequests for m in client.app.user_middleware)
    assert spans.get_finished_spans() == ()


def test_sdk_sends_the_callers_trace(spans, embedder, tmp_path):
    """The webcoach client sends the active span's context, or a traceparent the caller gives."""
    settings = _traced_settings(Settings(database_url=f"sqlite:///{tmp_path / 'ems.db'}", data_dir=tmp_path / "d",
                                         _env_file=None))
    agent = _provider().get_tracer("agent")
    with EmbeddedServer(settings, embedder=embedder) as server, Client(server.url) as ems:
        spans.clear()
        with agent.start_as_current_span("agent step") as step:
            ems.coach(_run())
        given = f"00-{TRACE_ID}-{PARENT_ID}-01"
        with traceparent(given):
            ems.search(TASK, k=2)
        ems.stats()  # neither: a trace of its own
        with pytest.raises(ValueError):
            with traceparent("00-" + "0" * 32 + "-" + PARENT_ID + "-01"):
                pass
    served = {s.name: s for s in spans.get_finished_spans() if s.kind == SpanKind.SERVER}
    assert served["POST /v1/coach"].parent.span_id == step.get_span_context().span_id
    assert served["POST /v1/coach"].context.trace_id == step.get_span_context().trace_id
    assert format(served["POST /v1/search"].parent.span_id, "016x") == PARENT_ID
    assert format(served["POST /v1/search"].context.trace_id, "032x") == TRACE_ID
    assert served["GET /v1/stats"].parent is None


def test_store_of_a_fresh_runtime_is_traced_once(spans, make_client, settings):
    """Instrumenting twice (two apps on one shared embedder) never nests a span in a copy of itself."""
    with make_client(_traced_settings(settings)) as client:
        tracing.instrument(client.app.state.runtime)
        assert client.post("/v1/search", json={"text": "teapot", "k": 2}).status_code == 200
    finished = spans.get_finished_spans()
    embeds = _by_name(finished, "embed")
    assert len(embeds) == 1 and "embed" not in _ancestors(embeds[0], finished)
