"""The dashboard's fixtures: a real service on a free port with a little memory in two namespaces, and a real
headless Chromium (Debian's chromium and chromium-driver) driven by selenium."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from ems_service import EmbeddedServer, Settings
from ems_service.dataset import to_trajectory
from tests.conftest import IN_CI, ROOT, dev_records

CHROMIUM = Path(os.environ.get("EMS_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("EMS_CHROMEDRIVER", "/usr/bin/chromedriver"))
SHOTS = Path(os.environ.get("EMS_UI_SCREENSHOTS", ROOT / "docs" / "screenshots"))
# a task that is also markup: it must show as text on every page and run nothing
PAYLOAD = 'Find <script>window.__pwned = 1</script> flights <img src=x onerror="window.__pwned = 2"> to Oslo'
B_TASK = "Renew the zebra licence of fleet B on example.org"
SESSION_TASK = "Add the Dota 2 DLC bundle to the cart on steam"


@dataclass
class Memory:
    url: str
    keys: dict[str, str]
    payload_id: int = 0
    b_ids: list[int] = field(default_factory=list)
    session_id: str = ""
    b_session_id: str = ""
    advice: list[str] = field(default_factory=list)  # what the coach told the session's agent
    appends: int = 0


def _post(client: httpx.Client, key: str, path: str, body: dict) -> dict:
    r = client.post(path, json=body, headers={"X-API-Key": key})
    assert r.status_code in (200, 201), r.text
    return r.json()


def _session_steps() -> list[dict]:
    url = "https://store.steampowered.com/"
    stuck = {"action": "click('Add all DLC to Cart')", "url": url + "app/570/",
             "error": "element not found: Add all DLC to Cart"}
    return [{"action": "click('Search')", "url": url},
            {"action": "type('#store_nav_search_term', 'Dota 2')", "url": url}, stuck, stuck, stuck]


@pytest.fixture(scope="module")
def memory(embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    """The service over HTTP with 25 dev runs and a markup task in fleet-a, two runs in fleet-b, and a live
    session in each, all made through the REST API as an agent would."""
    tmp = tmp_path_factory.mktemp("dashboard")
    settings = Settings(database_url=f"sqlite:///{tmp / 'ems.db'}", data_dir=tmp / "data", _env_file=None)
    with EmbeddedServer(settings, embedder=embedder) as server:
        rt = server.app.state.runtime
        keys = {name: rt.keys.create(namespace=ns, role=role)[1]
                for name, ns, role in (("a", "fleet-a", "writer"), ("b", "fleet-b", "writer"),
                                       ("admin", "ops", "admin"))}
        mem = Memory(server.url, keys)
        with httpx.Client(base_url=server.url, timeout=60) as client:
            runs = [to_trajectory(r).model_dump(mode="json", exclude_none=True)
                    for r in dev_records("webcanvas.jsonl", 25)]
            results = _post(client, keys["a"], "/v1/episodes:batch", {"episodes": runs})["results"]
            assert all(r["id"] for r in results)
            mem.payload_id = _post(client, keys["a"], "/v1/episodes", {
                "task": PAYLOAD, "start_url": "https://www.kayak.com/flights", "outcome": {"success": False},
                "steps": [{"action": "click('<b>Search</b>')", "url": "https://www.kayak.com/flights",
                           "error": '<img src=x onerror="window.__pwned = 3">'}]})["id"]
            for i in range(2):
                mem.b_ids.append(_post(client, keys["b"], "/v1/episodes", {
                    "task": f"{B_TASK} #{i}", "start_url": "https://example.org/licences",
                    "outcome": {"success": i == 0}, "steps": [{"action": "click('Renew')"}]})["id"])
            mem.session_id = _post(client, keys["a"], "/v1/sessions",
                                   {"task": SESSION_TASK, "start_url": "https://store.steampowered.com/"})["id"]
            for step in _session_steps():
                guidance = _post(client, keys["a"], f"/v1/sessions/{mem.session_id}/steps", {"steps": [step]})["guidance"]
                mem.appends += 1
                if guidance:
                    mem.advice.append(guidance["advice"])
            assert mem.advice, "the stuck session should have drawn guidance"
            mem.b_session_id = _post(client, keys["b"], "/v1/sessions", {"task": B_TASK})["id"]
        yield mem


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless Chromium; absent only outside CI (in CI a missing browser fails, it is part of the suite)."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        why = f"Debian's chromium ({CHROMIUM}) and chromium-driver ({CHROMEDRIVER}) are not installed: " \
              "apt-get install -y chromium chromium-driver"
        if IN_CI:
            pytest.fail(why)
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000",
                "--disable-gpu", "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()
