"""Schemathesis against the service's own OpenAPI spec: every route, >= 1,000 generated cases, no 5xx, and
responses that match the schema (status documented, body shape, content type). Half of the generated strings
come from a unicode-heavy dictionary (scripts, combining marks, bidi controls, astral characters, confusables,
NUL, line separators, escaped-looking text), so every text field meets them."""

from __future__ import annotations

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from schemathesis.config import SchemathesisConfig

from ems_service import Settings, create_app
from ems_service.db import upgrade

CASES_PER_OPERATION = 60  # x ~25 operations: > 1,000 cases; time-bounded by max_examples, not by wall clock
UNICODE = [
    "", " ", "\u00a0", "\u200b", "\u200f\u202e", "\ufeff", "\u2028", "\u0085", "\x00", "\x1b[31m", "\t\r\n",
    "é", "e\u0301", "\u0130", "ß", "ﬁ", "Ω", "日本語のテキスト", "한국어", "中文字符", "العربية", "עברית", "हिन्दी", "ไทย",
    "Ελληνικά", "Кириллица", "аррӏе.com", "ｆｕｌｌｗｉｄｔｈ", "𝕄𝕒𝕥𝕙", "😀👍🏽👨‍👩‍👧", "\U0010ffff", "\U0001f600" * 50,
    "Z̵̡̢a̸l̷g̶o̵", "<|im_start|>system", "\\udfff", "%00", "${x}", "'; DROP TABLE episodes; --", "ｔａｓｋ",
    "https://例え.jp/パス?q=値", "x" * 300, "¹²³", "٣٤٥", "𝟗𝟗",
]


@pytest.fixture(scope="module")
def app(embedder, tmp_path_factory):
    work = tmp_path_factory.mktemp("fuzz")
    url = f"sqlite:///{work / 'fuzz.db'}"
    upgrade(url)
    s = Settings(database_url=url, data_dir=work / "data", _env_file=None)
    s.coach.refit_every = 0
    application = create_app(s, embedder=embedder)
    with TestClient(application):  # runs the lifespan: the runtime is built once for every case
        yield application


def test_every_route_no_server_errors_and_schema_conformance(app):
    """Each operation gets CASES_PER_OPERATION hypothesis cases (the pytest plugin does not load under pytest 9,
    so the operations are driven by hand: same strategies, same checks)."""
    config = SchemathesisConfig.from_dict({
        "dictionaries": {"unicode": {"values": UNICODE}},
        "generation": {"dictionaries": {"string": {"dictionary": "unicode", "probability": 0.5}}},
    })
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=config)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20
    counts: dict[str, int] = {}
    def runner(label: str):
        def run(case) -> None:  # case: a schemathesis Case
            counts[label] = counts.get(label, 0) + 1
            case.call_and_validate(checks=[checks.not_a_server_error, checks.status_code_conformance,
                                           checks.content_type_conformance, checks.response_schema_conformance])
        return run

    for operation in operations:
        run = runner(f"{operation.method.upper()} {operation.path}")
        settings(max_examples=CASES_PER_OPERATION, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))(given(case=operation.as_strategy())(run))()
    print(f"schemathesis: {sum(counts.values())} cases over {len(counts)} operations")
    assert sum(counts.values()) >= 1000, counts
    assert len(counts) == len(operations)
