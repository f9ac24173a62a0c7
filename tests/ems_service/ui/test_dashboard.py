"""The dashboard in a real headless Chromium: log in, browse, page, search by keyboard, open episodes and a live
session, and check what is shown, including stored markup that must stay text and namespaces that never mix.
Screenshots of each page go to docs/screenshots/ (EMS_UI_SCREENSHOTS elsewhere)."""

from __future__ import annotations

import base64
import re

import pytest
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait

from tests.ems_service.ui.conftest import B_TASK, PAYLOAD, SESSION_TASK, SHOTS

pytestmark = pytest.mark.slow


def main_text(driver) -> str:
    return driver.find_element(By.TAG_NAME, "main").text


def h1(driver) -> str:
    return driver.find_element(By.TAG_NAME, "h1").text


def wait_for(driver, condition) -> None:
    """Until `condition(driver)` holds on a loaded page; a page still being replaced (stale or missing nodes) is
    not a failure yet, only when it lasts 30 s."""
    WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script("return document.readyState") == "complete" and condition(d))


def wait_path(driver, fragment: str) -> None:
    wait_for(driver, EC.url_contains(fragment))


def shot(driver, name: str) -> None:
    """A screenshot of the whole page (up to 2,400 px tall), saved for the README."""
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 2400), "scale": 1}
    png = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                            "clip": clip})["data"]
    (SHOTS / f"{name}.png").write_bytes(base64.b64decode(png))


def console_errors(driver) -> list[str]:
    """Errors the page logged (a CSP violation, a failed resource) since the last call."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def login(driver, memory, who: str) -> None:
    console_errors(driver)  # what earlier tests provoked (404 pages) is theirs
    driver.delete_all_cookies()
    driver.get(memory.url + "/ui/")
    wait_path(driver, "/ui/login")
    field = driver.find_element(By.ID, "key")
    assert driver.switch_to.active_element == field  # autofocus: the key can be typed at once
    field.send_keys(memory.keys[who] + Keys.ENTER)
    wait_for(driver, lambda d: "/ui/login" not in d.current_url and h1(d).startswith("Namespace"))


def test_login_keeps_the_key_in_an_httponly_strict_cookie(browser, memory):
    browser.delete_all_cookies()
    browser.get(memory.url + "/ui/episodes")
    wait_path(browser, "/ui/login")
    assert h1(browser) == "Log in"
    browser.find_element(By.ID, "key").send_keys("ems_not_a_key" + Keys.ENTER)
    wait_for(browser, lambda d: "Unknown API key." in main_text(d))
    assert browser.get_cookies() == []
    assert [m for m in console_errors(browser) if "status of 401" not in m] == []  # the refused key, nothing else
    shot(browser, "login")

    login(browser, memory, "a")
    assert "Namespace fleet-a" in h1(browser)
    assert "writer" in browser.find_element(By.CLASS_NAME, "who").text
    stats = main_text(browser)
    assert re.search(r"episodes\s+26\b", stats), stats  # 25 dev runs and the markup task
    cookies = browser.get_cookies()
    assert [(c["name"], c["httpOnly"], c["sameSite"], c["path"]) for c in cookies] == [
        ("ems_ui_key", True, "Strict", "/ui")]
    assert browser.execute_script("return document.cookie") == ""  # scripts never see the key
    assert not console_errors(browser)
    shot(browser, "overview")


def test_episodes_page_filter_and_open(browser, memory):
    login(browser, memory, "a")
    browser.find_element(By.LINK_TEXT, "Episodes").click()
    wait_path(browser, "/ui/episodes")
    Select(browser.find_element(By.ID, "f-limit")).select_by_visible_text("10")
    browser.find_element(By.CSS_SELECTOR, ".filters button").click()
    wait_path(browser, "limit=10")

    def ids() -> list[int]:
        return [int(a.text) for a in browser.find_elements(By.CSS_SELECTOR, "table.episodes tbody td:first-child a")]

    seen = ids()
    assert len(seen) == 10 and seen == sorted(seen)
    shot(browser, "episodes")
    for expected in (10, 6):
        browser.find_element(By.LINK_TEXT, "Next page").click()
        wait_for(browser, lambda d, last=seen[-1]: ids() and ids()[0] > last)
        page = ids()
        assert len(page) == expected and page[0] > seen[-1]
        seen += page
    assert len(set(seen)) == 26
    assert not browser.find_elements(By.LINK_TEXT, "Next page")
    browser.find_element(By.LINK_TEXT, "First page").click()
    wait_for(browser, lambda d: ids()[:1] == seen[:1])

    Select(browser.find_element(By.ID, "f-outcome")).select_by_visible_text("failure")
    browser.find_element(By.CSS_SELECTOR, ".filters button").click()
    wait_path(browser, "outcome=failure")
    badges = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "table.episodes .badge")]
    assert badges and set(badges) == {"failure"}

    first = browser.find_element(By.CSS_SELECTOR, "table.episodes tbody td:first-child a")
    episode_id = first.text
    first.click()
    wait_for(browser, lambda d: h1(d) == f"Episode {episode_id}")
    text = main_text(browser)
    assert "Summary" in text and "failure" in text
    n_steps = int(browser.find_element(By.XPATH, "//dt[text()='Steps']/following-sibling::dd").text)
    assert len(browser.find_elements(By.CSS_SELECTOR, "ol.steps > li")) == n_steps
    similar = browser.find_elements(By.CSS_SELECTOR, "section[aria-labelledby=similar] tbody tr")
    assert 1 <= len(similar) <= 5
    scores = [float(r.find_element(By.CSS_SELECTOR, "td.num").text) for r in similar]
    assert scores == sorted(scores, reverse=True) and all(-1 <= s <= 1 for s in scores)
    assert not console_errors(browser)
    shot(browser, "episode")


def test_keyboard_reaches_search_and_enter_submits(browser, memory):
    login(browser, memory, "a")
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    skip = browser.switch_to.active_element
    assert skip.text == "Skip to content" and skip.is_displayed() and skip.rect["y"] >= 0
    outline = browser.execute_script("return getComputedStyle(arguments[0]).outlineStyle", skip)
    assert outline == "solid"  # the focus ring is visible
    skip.send_keys(Keys.ENTER)
    assert browser.switch_to.active_element.get_attribute("id") == "main"

    browser.get(memory.url + "/ui/")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    for _ in range(12):
        if browser.switch_to.active_element.get_attribute("id") == "q":
            break
        browser.switch_to.active_element.send_keys(Keys.TAB)
    box = browser.switch_to.active_element
    assert box.get_attribute("id") == "q", "Tab never reached the search box"
    box.send_keys("add all DLC of Dota 2 to the cart on steam" + Keys.ENTER)
    wait_path(browser, "/ui/search?q=add+all+DLC")
    heading = browser.find_element(By.ID, "results").text
    assert re.match(r"\d+ results? for", heading), heading
    rows = browser.find_elements(By.CSS_SELECTOR, "main table tbody tr")
    assert rows and "steampowered.com" in rows[0].text
    assert not console_errors(browser)
    shot(browser, "search")


def test_stored_markup_shows_as_text_and_runs_nothing(browser, memory):
    login(browser, memory, "a")
    browser.get(f"{memory.url}/ui/episodes/{memory.payload_id}")
    assert browser.find_element(By.CLASS_NAME, "task-title").text == PAYLOAD
    assert '<img src=x onerror="window.__pwned = 3">' in browser.find_element(By.CLASS_NAME, "err").text
    assert "click('<b>Search</b>')" in browser.find_element(By.CLASS_NAME, "action").text
    shot(browser, "stored-markup")
    for path in ("/ui/episodes?limit=100", "/ui/search?q=flights+to+Oslo"):
        browser.get(memory.url + path)
        assert PAYLOAD in main_text(browser)
    for page in (f"/ui/episodes/{memory.payload_id}", "/ui/episodes?limit=100", "/ui/search?q=flights+to+Oslo"):
        browser.get(memory.url + page)
        assert browser.execute_script("return window.__pwned") is None
        assert browser.find_elements(By.TAG_NAME, "img") == []
        assert browser.find_elements(By.TAG_NAME, "script") == []
        assert browser.find_elements(By.TAG_NAME, "b") == []
    assert not console_errors(browser)


def test_a_key_never_sees_another_namespace(browser, memory):
    login(browser, memory, "a")
    for path in ("/ui/episodes?limit=100", "/ui/search?q=renew+the+zebra+licence&k=100", "/ui/sessions"):
        browser.get(memory.url + path)
        assert "licence of fleet B" not in main_text(browser), path
    browser.get(memory.url + "/ui/experience?url=https%3A%2F%2Fexample.org%2Flicences")
    assert browser.find_element(By.ID, "tier").text.startswith("Tier P5")  # fleet-b's runs there are unknown here
    for path in (f"/ui/episodes/{memory.b_ids[0]}", f"/ui/sessions/{memory.b_session_id}"):
        browser.get(memory.url + path)
        assert h1(browser) == "Not found" and "does not exist in this namespace" in main_text(browser)

    login(browser, memory, "b")
    browser.get(memory.url + "/ui/episodes")
    text = main_text(browser)
    assert f"{B_TASK} #0" in text and f"{B_TASK} #1" in text and "Oslo" not in text
    browser.get(memory.url + "/ui/search?q=flights+to+Oslo")
    assert PAYLOAD not in main_text(browser) and "kayak.com" not in main_text(browser)
    browser.get(f"{memory.url}/ui/episodes/{memory.payload_id}")
    assert h1(browser) == "Not found"

    login(browser, memory, "admin")  # an admin sees which namespaces have keys, and only its own memory
    names = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "section[aria-labelledby=namespaces] td:first-child")]
    assert names == ["fleet-a", "fleet-b", "ops (this key)"]
    browser.get(memory.url + "/ui/episodes")
    assert "No episodes match." in main_text(browser)


def test_live_session_chart_and_guidance(browser, memory):
    login(browser, memory, "a")
    browser.find_element(By.LINK_TEXT, "Live sessions").click()
    wait_path(browser, "/ui/sessions")
    row = browser.find_element(By.XPATH, f"//tr[td[contains(., '{SESSION_TASK}')]]")
    assert "open" in row.text and str(memory.appends) in row.text
    row.find_element(By.TAG_NAME, "a").click()
    wait_path(browser, f"/ui/sessions/{memory.session_id}")
    assert browser.find_element(By.CLASS_NAME, "task-title").text == SESSION_TASK
    chart = browser.find_element(By.CSS_SELECTOR, "figure.chart svg")
    assert chart.size["width"] > 300 and chart.size["height"] > 100
    assert len(chart.find_elements(By.CSS_SELECTOR, "circle")) == memory.appends
    assert len(chart.find_elements(By.CSS_SELECTOR, "circle.guided")) == len(memory.advice)
    given = [p.text for p in browser.find_elements(By.CSS_SELECTOR, "ol.guidance .advice")]
    assert given == memory.advice
    assert len(browser.find_elements(By.CSS_SELECTOR, "ol.steps > li")) == memory.appends
    assert not console_errors(browser)
    shot(browser, "session")


def test_lessons_and_experience_tiers(browser, memory):
    login(browser, memory, "a")
    browser.find_element(By.LINK_TEXT, "Lessons").click()
    wait_path(browser, "/ui/lessons")
    seed = browser.find_element(By.XPATH, "//tr[td[contains(., 'Press Enter to submit a search')]]")
    assert seed.find_element(By.CSS_SELECTOR, ".badge.tier1").text == "1"
    shot(browser, "lessons")

    browser.find_element(By.LINK_TEXT, "Experience").click()
    wait_path(browser, "/ui/experience")
    field = browser.find_element(By.ID, "x-url")
    field.send_keys("https://store.steampowered.com/app/570/" + Keys.ENTER)
    wait_path(browser, "url=https")
    heading = browser.find_element(By.ID, "tier").text
    assert re.match(r"Tier P[1-5] for ", heading), heading
    assert "only unverified runs are known here" in main_text(browser)  # a writer's runs never set a tier
    assert not console_errors(browser)
    shot(browser, "experience")


def test_logout_forgets_the_key(browser, memory):
    login(browser, memory, "a")
    browser.find_element(By.XPATH, "//button[text()='Log out']").click()
    wait_path(browser, "/ui/login")
    assert "You are logged out." in main_text(browser)
    assert browser.get_cookies() == []
    browser.get(memory.url + "/ui/sessions")
    wait_path(browser, "/ui/login")
