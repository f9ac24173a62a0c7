"""Experience tiers (P1..P5) per (domain, url pattern, intent), and facts merged per (domain, intent)."""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from typing import Any

from coach.words import reads_as_order
from condenser import classify_intent, domain_of, url_pattern
from condenser.redact import redact_text
from condenser.sites import registrable_domain
from ems_service.errors import BadRequest, Conflict, ValidationFailed
from ems_service.lessons import instruction_markup, orders_agents
from ems_service.limits import Limits
from ems_service.repositories import EpisodeRepository, FactRepository, Facts, aware, utcnow

HALF_LIFE_DAYS = 60.0
TIERS = [("P1", 0.85), ("P2", 0.60), ("P3", 0.40)]
FACT_KEYS = ("selectors", "interaction_hints", "known_blockers", "anti_patterns")
UNVERIFIED_HELD = ("interaction_hints", "known_blockers", "anti_patterns")  # free sentences: served once verified


def _segments(pattern: str) -> list[str]:
    return [p for p in pattern.split("/")[1:] if p]


def pattern_matches(known: str, query: str) -> bool:
    """A known pattern matches a query pattern when its path segments are a prefix of the query's (`*` = any)."""
    k, q = _segments(known), _segments(query)
    return len(k) <= len(q) and all(a == b or "*" in (a, b) for a, b in zip(k, q, strict=False))


# what may take a browser somewhere: a url with a scheme (browsers read `https:\\x` and `https:/x` as `https://x`),
# a protocol-relative `//host`, a `www.` host, and schemes that are never the site itself
_URL = re.compile(r"""(?ix)
    \b[a-z][a-z0-9+.-]{0,15}:[\\/]+[^\s'"<>(){}\[\],]+
  | (?<![\w:/\\])[\\/]{2}[^\s'"<>(){}\[\],/\\]+
  | \bwww\.[^\s'"<>(){}\[\],]+
""")
_LOCAL_SCHEME = re.compile(r"(?i)\b(?:javascript|data|vbscript|file|blob|view-source):(?=\S)")
# navigation verbs whose first argument is a place even without a scheme (`navigate evil.example/login`)
_NAVIGATE = re.compile(
    r"""(?ix)^\s*(?:navigate(?:_to)?|go_?to|go\s+to|open(?:_url|_tab|_new_tab)?|new_tab|visit|load(?:_url)?|browse)
        [\s(:='"]*(?:url\s*=\s*)?['"]?([^\s'")]+)""")


def _left_site(brief: list[Any], site: str | None) -> bool:
    """A step of the run was on a page of another registrable domain than `site` (a step's address: where its action
    led)."""
    return any(isinstance(st, dict) and st.get("url") and offsite_targets(str(st["url"]), site) for st in brief)


def offsite_targets(text: str, site: str | None) -> list[str]:
    """The places `text` (an action, a hint) points to that are not on `site` (a registrable domain): urls of
    another registrable domain, unreadable ones, and local schemes (`javascript:`, `data:`, `file:`)."""
    found: list[str] = []
    if local := _LOCAL_SCHEME.search(text):
        found.append(local.group(0))
    candidates = [m.group(0) for m in _URL.finditer(text)]
    nav = _NAVIGATE.match(text)
    if nav and not nav.group(1).startswith(("/", "#", "?", ".")):
        candidates.append(nav.group(1))
    for candidate in candidates:
        rest = re.sub(r"^(?:[a-z][a-z0-9+.-]*:)?[\\/]*", "", candidate, flags=re.I).replace("\\", "/")
        host = domain_of("http://" + rest)
        if host is None or registrable_domain(host) != site:
            found.append(candidate)
    return list(dict.fromkeys(found))


def tier_of(confidence: float) -> str:
    return next((name for name, low in TIERS if confidence >= low), "P4")


def lower(tier: str) -> str:
    return f"P{min(5, int(tier[1]) + 1)}"


def confidence_of(successes: list[datetime], failures: list[datetime], now: datetime) -> float:
    """Recency-weighted success ratio with Laplace smoothing, blended (70/30) with the recency of the latest
    success (60-day half-life)."""
    def weight(ts: datetime) -> float:
        return 0.5 ** (max((now - aware(ts)).total_seconds(), 0) / 86400 / HALF_LIFE_DAYS)

    s = sum(weight(t) for t in successes)
    f = sum(weight(t) for t in failures)
    ratio = (s + 1) / (s + f + 2)
    recency = max((weight(t) for t in successes), default=0.0)
    return round(0.7 * ratio + 0.3 * recency, 4)


class ExperienceService:
    """Replay tiers for known tasks on known sites, from the same episodes (only verified ones set a tier)."""

    def __init__(self, *, episodes: EpisodeRepository, facts: FactRepository, limits: Limits) -> None:
        self.episodes = episodes
        self.facts = facts
        self.limits = limits  # a merged list's length (EMS_LIMITS__MAX_ITEMS): only the stored entry can tell it

    def experience(self, namespace: str, *, url: str, intent: str | None, now: datetime | None = None) -> dict:
        now = now or utcnow()
        domain = domain_of(url)
        if not domain:
            raise BadRequest(f"url {url!r} has no host")
        site = registrable_domain(domain)
        query_pattern = url_pattern(url) or domain + "/"
        wanted = classify_intent(intent) if intent else None
        # the same host, a parent or a child of it (found in SQL), and always the same registrable domain (a query
        # for a public suffix such as `co.uk` is not every site under it)
        rows = [r for r in self.episodes.near(namespace, domain, intent=wanted)
                if r.domain and (domain == r.domain or domain.endswith("." + r.domain) or r.domain.endswith("." + domain))
                and registrable_domain(r.domain) == site]
        facts = self.facts.get(namespace, domain=domain, intent=wanted or "other")
        known = sorted({r.url_pattern for r in rows if r.url_pattern and pattern_matches(r.url_pattern, query_pattern)},
                       key=lambda p: -len(_segments(p)))
        matched = known[0] if known and _segments(known[0]) else None
        if matched:
            rows = [r for r in rows if r.url_pattern == matched]
        verified = [r for r in rows if r.verified or r.label_source in {"judge", "human", "benchmark"}]
        succ = [r for r in verified if r.success is True]
        fail = [r for r in verified if r.success is False]
        warnings: list[str] = []
        if not rows:
            tier, confidence = "P5", 0.0
        elif not verified:
            tier, confidence = "P4", 0.0
            warnings.append("only unverified runs are known here")
        else:
            confidence = confidence_of([r.created_at for r in succ], [r.created_at for r in fail], now)
            tier = tier_of(confidence)
        if any("captcha_or_bot_wall" in r.failure_categories for r in rows if r.success is False):
            tier = lower(tier)
            warnings.append("a bot wall (captcha) was hit on this site")
        blockers: Counter[str] = Counter()
        for r in rows:
            if r.success is False:
                blockers.update(r.failure_categories)
        for r in fail:  # an error's own words only from a verified failure: a writer's self-report gives its category
            blockers.update(r.error_patterns)
        steps: list[str] = []
        if tier in {"P1", "P2"} and succ:  # a playbook only from verified successes that stay on the site
            ranked = sorted(succ, key=lambda r: (-aware(r.created_at).timestamp(), r.n_steps))
            # a run with a step that leaves the site, or whose words order something (an instruction, a software
            # install, a secret asked for: coach.words.reads_as_order), is no playbook to replay
            # (nor one whose steps led to another site: a vouched run that clicked through to a lure's checkout)
            best = next((r for r in ranked if not any(offsite_targets(a, site) or reads_as_order(a)
                                                      for a in r.actions) and not _left_site(r.steps_brief, site)),
                        None)
            if best is not None:
                steps = list(best.actions)
            if best is not ranked[0]:
                left = ranked.index(best) if best is not None else len(ranked)
                warnings.append(f"{left} verified run(s) leaving {site} or ordering more than the page were not offered "
                                "as a playbook")
        fact_data = dict(facts.facts) if facts else {}
        held = 0  # a writer's sentences about the site wait for a verifier: "Enter your password in the search box"
        # reads as how the site works to an agent (a red team's), and no list catches every way to say it
        for key in () if facts is None or facts.verified else UNVERIFIED_HELD:
            held += len(fact_data.get(key, []))
            fact_data[key] = []
        if held:
            warnings.append(f"{held} unverified fact sentence(s) held back until a verifier verifies them")
        dropped = 0
        for key in FACT_KEYS:
            if key in fact_data:
                kept = [v for v in fact_data[key] if not offsite_targets(v, site) and not orders_agents(v)]
                dropped += len(fact_data[key]) - len(kept)
                fact_data[key] = kept
        if dropped:
            warnings.append(f"{dropped} fact(s) pointing away from {site} or ordering the agent were left out")
        return {
            "tier": tier, "confidence": confidence, "domain": domain, "intent": wanted or "any",
            "url_pattern": matched or domain, "steps": steps,
            "known_blockers": [{"blocker": b, "count": n} for b, n in blockers.most_common(10)],
            "warnings": warnings + [f"anti-pattern: {a}" for a in fact_data.get("anti_patterns", [])],
            "episodes": [r.id for r in sorted(rows, key=lambda r: r.id)[:20]],
            "facts": fact_data | ({"verified": facts.verified} if facts else {}),
        }

    def merge_facts(self, namespace: str, *, domain: str, intent: str, facts: dict[str, list[str]],
                    verify: bool = False) -> Facts:
        """Merge lists into the (domain, intent) entry, in one transaction with its event; a verified entry
        refuses merges (409), a list that would outgrow EMS_LIMITS__MAX_ITEMS refuses it (413), nothing written.

        Linear in the items (a dict keeps first-seen order): the `not in list` merge took 64 s for 100k selectors.
        """
        dom = domain_of(domain) or domain.lower().strip()
        intent_ = classify_intent(intent)
        for key, values in facts.items():  # served to agents by get_experience: checked like a hand-added lesson
            for i, value in enumerate(values):
                if instruction_markup(value):
                    raise ValidationFailed(f"{key}.{i}: role markup or instruction phrases are not allowed in facts "
                                           "(they are served to agents)")
                if orders_agents(value):
                    raise ValidationFailed(f"{key}.{i}: orders to the agent (to stop, to give an answer, to pay or go "
                                           "elsewhere, what other agents always do) are not allowed in facts (they "
                                           "are served to agents)")

        def merged(current: Facts | None) -> tuple[dict[str, list[str]], bool]:
            if current is not None and current.verified:
                raise Conflict(f"facts for ({dom}, {intent_}) are verified and can no longer be merged into")
            lists = {k: dict.fromkeys(current.facts.get(k, []) if current is not None else []) for k in FACT_KEYS}
            for key, values in facts.items():  # stored text: redacted like every stored field
                lists[key].update(dict.fromkeys(redact_text(v) for v in values))
                self.limits.merged_items(len(lists[key]), f"facts {key} for ({dom}, {intent_})")
            return {k: list(v) for k, v in lists.items()}, verify

        return self.facts.merge(namespace, domain=dom, intent=intent_, merged=merged)
