"""Episodes: every SQL statement over the episodes table and its deletion log; answers are plain `StoredEpisode`s.

A method returns what it names: `get` / `summaries` / `page` / `near` the stored fields (never the raw trajectory or
the vector), `trajectory` / `trajectories` the stored run, `tasks` only (task, domain).

`tasks` is the coach's ranking read (every coaching call asks it for a pool of candidates), so its answers are kept
in a bounded in-process LRU: an episode's task and domain never change, and the entries of rows deleted through
this repository are dropped with them. No id is given twice (SQLite's AUTOINCREMENT since migration 0009,
PostgreSQL's identity), so a row deleted by another process leaves an entry that no row answers to."""

from __future__ import annotations

import builtins
import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, cast

import numpy as np
from sqlalchemy import Table, bindparam, case, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from condenser import Episode, Trajectory
from ems_service.errors import EMSError, ValidationFailed
from ems_service.index.base import IndexRow
from ems_service.repositories.database import Database, utcnow
from ems_service.repositories.events import add_event
from ems_service.tables import DeletionRecord, EpisodeRecord


@dataclass(frozen=True)
class StoredEpisode:
    """An episode as stored, without its raw trajectory and vector (ask for those by name)."""

    id: int
    namespace: str
    trajectory_hash: str
    task: str
    domain: str | None
    url_pattern: str | None
    summary: str
    embed_text: str
    success: bool | None
    label_source: str
    status: str | None
    trust: float
    error_patterns: list[str]
    failure_categories: list[str]
    n_steps: int
    actions: list[str]
    steps_brief: list[Any]
    intent: str
    verified: bool
    agent: str | None
    model: str | None
    task_id: str | None
    source: str
    tags: dict[str, str]
    created_at: datetime
    last_retrieved_at: datetime | None
    retrieval_count: int
    seen_count: int
    embedding_model: str


_COLUMNS = [getattr(EpisodeRecord, f.name) for f in fields(StoredEpisode)]
# the search path's two reads, built once (an expanding IN: one cached compilation for every list of ids)
_BY_IDS = (EpisodeRecord.namespace == bindparam("namespace")) & EpisodeRecord.id.in_(bindparam("ids", expanding=True))
_SUMMARIES = select(*_COLUMNS).where(_BY_IDS)
_TASKS = select(EpisodeRecord.id, EpisodeRecord.task, EpisodeRecord.domain).where(_BY_IDS)
_BY_HASHES = select(EpisodeRecord.trajectory_hash, EpisodeRecord.id).where(
    (EpisodeRecord.namespace == bindparam("namespace"))
    & EpisodeRecord.trajectory_hash.in_(bindparam("hashes", expanding=True)))
TASKS_KEPT = 20_000  # (task, domain) pairs remembered for ranking: about 6 MB at most


@dataclass(frozen=True)
class EpisodeFilter:
    domain: str | None = None
    success: bool | None = None
    source: str | None = None


def pack_trajectory(trajectory: Trajectory) -> bytes:
    return zlib.compress(trajectory.model_dump_json(exclude_none=True).encode("utf-8"), 6)


def unpack_trajectory(blob: bytes) -> Trajectory:
    return Trajectory.model_validate_json(zlib.decompress(blob))


def index_row(r: Any) -> IndexRow:
    return IndexRow(r.id, np.frombuffer(r.embedding, dtype=np.float32, count=r.embedding_dim), r.domain, r.success,
                    r.task_id)


class EpisodeRepository:
    """The episodes of every namespace; every method is one short transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._table = cast(Table, EpisodeRecord.__table__)  # a declarative class's table is a Table
        self._vector_column: str | None = None
        self._insert = insert(self._table).returning(self._table.c.id, sort_by_parameter_order=True)  # built once
        self._tasks: OrderedDict[tuple[str, int], tuple[str, str | None]] = OrderedDict()
        self._tasks_lock = threading.Lock()
        self._deletions = 0  # deletions so far: a read that overlapped one is not remembered

    def write_vectors_into(self, table: Table, column: str) -> None:
        """Store each new episode's vector in `column` of `table` (the episodes table as a backend that keeps the
        vectors in the rows sees it), in the INSERT itself: the vector commits or fails with its row."""
        self._table, self._vector_column = table, column
        self._insert = insert(table).returning(table.c.id, sort_by_parameter_order=True)

    # -- writes ---------------------------------------------------------------------------------------------

    def insert(self, episodes: list[Episode], vectors: np.ndarray, model_name: str) -> list[int]:
        """Insert new episodes in one transaction (one multi-row INSERT ... RETURNING); their ids in order."""
        now = utcnow()
        rows: list[dict[str, Any]] = [
            {
                "namespace": ep.namespace, "trajectory_hash": ep.trajectory_hash, "task": ep.task, "domain": ep.domain,
                "url_pattern": ep.url_pattern, "summary": ep.summary, "embed_text": ep.embed_text,
                "success": ep.success, "label_source": ep.label_source, "status": ep.status, "trust": ep.trust,
                "error_patterns": ep.error_patterns, "failure_categories": [c.value for c in ep.failure_categories],
                "n_steps": ep.n_steps, "actions": ep.actions, "steps_brief": ep.steps_brief, "intent": ep.intent,
                "verified": ep.verified, "agent": ep.agent, "model": ep.model, "task_id": ep.task_id,
                "source": ep.source, "tags": ep.tags, "created_at": now, "retrieval_count": 0, "seen_count": 1,
                "embedding": np.ascontiguousarray(vec, dtype=np.float32).tobytes(), "embedding_model": model_name,
                "embedding_dim": int(vec.shape[0]), "trajectory": pack_trajectory(ep.trajectory),
            }
            for ep, vec in zip(episodes, vectors, strict=True)
        ]
        if self._vector_column is not None:
            for row, vec in zip(rows, vectors, strict=True):
                row[self._vector_column] = vec
        with self.db.writes() as conn:
            return list(conn.scalars(self._insert, rows))

    def insert_each(self, namespace: str, episodes: list[Episode], vectors: np.ndarray,
                    model_name: str) -> list[int | EMSError]:
        """Ids in order; one multi-row INSERT, or (when a row is refused) one insert per episode, so a refusal
        becomes that item's error (ValidationFailed) on both databases instead of failing the whole batch."""
        try:
            return list(self.insert(episodes, vectors, model_name))
        except (IntegrityError, ValidationFailed):
            # A concurrent writer stored one of these hashes first (keep its id), or the database refused a value
            ids: list[int | EMSError] = []
            for ep, vec in zip(episodes, vectors, strict=True):
                try:
                    ids.extend(self.insert([ep], vec[None, :], model_name))
                except IntegrityError:
                    ids.append(self.find_by_hashes(namespace, [ep.trajectory_hash])[ep.trajectory_hash])
                except ValidationFailed as exc:
                    ids.append(exc)
            return ids

    def find_by_hashes(self, namespace: str, hashes: list[str]) -> dict[str, int]:
        if not hashes:
            return {}
        with self.db.reads() as conn:
            return {h: i for h, i in conn.execute(_BY_HASHES, {"namespace": namespace, "hashes": hashes})}

    def bump_seen(self, namespace: str, ids: list[int]) -> None:
        """Count repeat posts of already stored episodes and record the dedup events."""
        if not ids:
            return
        with self.db.session() as s:
            s.execute(update(EpisodeRecord).where(EpisodeRecord.namespace == namespace, EpisodeRecord.id.in_(ids))
                      .values(seen_count=EpisodeRecord.seen_count + 1))
            for i in ids:
                add_event(s, namespace, "episode_deduplicated", {"episode_id": i})

    def delete(self, namespace: str, ids: builtins.list[int], *, reason: str) -> builtins.list[int]:
        """Delete rows, log each deletion (for index catch-up) and record events; returns the deleted ids."""
        if not ids:
            return []
        now = utcnow()
        with self.db.session() as s:
            found = list(s.scalars(select(EpisodeRecord.id).where(EpisodeRecord.namespace == namespace,
                                                                  EpisodeRecord.id.in_(ids))))
            if not found:
                return []
            s.execute(delete(EpisodeRecord).where(EpisodeRecord.namespace == namespace, EpisodeRecord.id.in_(found)))
            s.add_all(DeletionRecord(namespace=namespace, episode_id=i, reason=reason, deleted_at=now) for i in found)
            event_type = "episode_evicted" if reason.startswith("evict") else "episode_deleted"
            add_event(s, namespace, event_type, {"episode_ids": found, "count": len(found), "reason": reason})
        with self._tasks_lock:
            self._deletions += 1
            for i in found:
                self._tasks.pop((namespace, i), None)
        return found

    def relabel(self, namespace: str, episode_id: int, *, success: bool | None, label_source: str,
                verified: bool, trust: float) -> tuple[StoredEpisode, IndexRow] | None:
        """Change an episode's outcome label (recorded with what it was before); the episode and its index row."""
        with self.db.session() as s:
            row = s.scalar(select(EpisodeRecord).where(EpisodeRecord.namespace == namespace,
                                                       EpisodeRecord.id == episode_id).with_for_update())
            if row is None:
                return None
            before = {"success": row.success, "label_source": row.label_source, "verified": row.verified}
            row.success, row.label_source, row.verified, row.trust = success, label_source, verified, trust
            add_event(s, namespace, "episode_relabelled", {
                "episode_id": episode_id, "before": before,
                "after": {"success": success, "label_source": label_source, "verified": verified}})
            s.flush()
            return StoredEpisode(**{f.name: getattr(row, f.name) for f in fields(StoredEpisode)}), index_row(row)

    def touch(self, namespace: str, hits: dict[int, int], when: datetime) -> None:
        """Record retrievals (count per id) for LRU eviction and usage statistics."""
        if not hits:
            return
        groups: dict[int, list[int]] = {}
        for key, value in hits.items():
            groups.setdefault(value, []).append(key)
        with self.db.writes() as conn:
            for count, ids in groups.items():
                conn.execute(update(EpisodeRecord).where(EpisodeRecord.namespace == namespace, EpisodeRecord.id.in_(ids))
                          .values(last_retrieved_at=when, retrieval_count=EpisodeRecord.retrieval_count + count))

    # -- reads ----------------------------------------------------------------------------------------------

    def get(self, namespace: str, episode_id: int) -> StoredEpisode | None:
        return self.summaries(namespace, [episode_id]).get(episode_id)

    def summaries(self, namespace: str, ids: list[int]) -> dict[int, StoredEpisode]:
        """Episodes by id, without their raw trajectory and vector (the search path)."""
        if not ids:
            return {}
        with self.db.reads() as conn:
            return {r.id: StoredEpisode(*r) for r in conn.execute(_SUMMARIES, {"namespace": namespace, "ids": ids})}

    def trajectory(self, namespace: str, episode_id: int) -> Trajectory | None:
        """The stored (redacted) run of an episode."""
        return self.trajectories(namespace, [episode_id]).get(episode_id)

    def trajectories(self, namespace: str, ids: list[int]) -> dict[int, Trajectory]:
        """The stored runs of many episodes, by id."""
        if not ids:
            return {}
        with self.db.reads() as conn:
            rows = conn.execute(select(EpisodeRecord.id, EpisodeRecord.trajectory).where(
                EpisodeRecord.namespace == namespace, EpisodeRecord.id.in_(ids)))
            return {i: unpack_trajectory(blob) for i, blob in rows}

    def tasks(self, namespace: str, ids: list[int]) -> dict[int, tuple[str, str | None]]:
        """(task, domain) by id: what ranking a wider candidate pool needs, without loading the rows (remembered,
        see the module docstring); ids with no row are left out."""
        found: dict[int, tuple[str, str | None]] = {}
        with self._tasks_lock:
            deletions = self._deletions
            for i in ids:
                if (known := self._tasks.get((namespace, i))) is not None:
                    found[i] = known
                    self._tasks.move_to_end((namespace, i))
        missing = [i for i in ids if i not in found]
        if not missing:
            return found
        with self.db.reads() as conn:
            read = {r.id: (r.task, r.domain) for r in conn.execute(_TASKS, {"namespace": namespace, "ids": missing})}
        with self._tasks_lock:
            if self._deletions == deletions:
                self._tasks.update(((namespace, i), pair) for i, pair in read.items())
            while len(self._tasks) > TASKS_KEPT:
                self._tasks.popitem(last=False)
        return found | read

    def page(self, namespace: str, flt: EpisodeFilter, *, after_id: int | None, limit: int) -> list[StoredEpisode]:
        """Episodes in id order after the cursor `after_id`."""
        q = select(*_COLUMNS).where(EpisodeRecord.namespace == namespace)
        if flt.domain is not None:
            q = q.where(EpisodeRecord.domain == flt.domain)
        if flt.success is not None:
            q = q.where(EpisodeRecord.success == flt.success)
        if flt.source is not None:
            q = q.where(EpisodeRecord.source == flt.source)
        if after_id is not None:
            q = q.where(EpisodeRecord.id > after_id)
        with self.db.reads() as conn:
            return [StoredEpisode(*r) for r in conn.execute(q.order_by(EpisodeRecord.id).limit(limit))]

    def near(self, namespace: str, domain: str, *, intent: str | None) -> list[StoredEpisode]:
        """Episodes on `domain`, a parent of it or a child of it (with that intent when given), found by the
        (namespace, domain) index and a suffix match, not by reading the namespace."""
        labels = domain.split(".")
        parents = [".".join(labels[i:]) for i in range(len(labels))]  # the host itself, then each parent
        q = select(*_COLUMNS).where(EpisodeRecord.namespace == namespace,
                                    EpisodeRecord.domain.in_(parents)
                                    | EpisodeRecord.domain.endswith("." + domain, autoescape=True))
        if intent is not None:
            q = q.where(EpisodeRecord.intent == intent)
        with self.db.reads() as conn:
            return [StoredEpisode(*r) for r in conn.execute(q.order_by(EpisodeRecord.id))]

    def labelled_ids(self, namespace: str) -> list[int]:
        """Ids of the episodes with a known outcome, in id order."""
        with self.db.reads() as conn:
            return list(conn.scalars(select(EpisodeRecord.id).where(
                EpisodeRecord.namespace == namespace, EpisodeRecord.success.is_not(None)).order_by(EpisodeRecord.id)))

    def count(self, namespace: str) -> int:
        with self.db.session() as s:
            return int(s.scalar(select(func.count()).where(EpisodeRecord.namespace == namespace)) or 0)

    def eviction_candidates(self, namespace: str, n: int, policy: str) -> builtins.list[int]:
        """The `n` episodes to evict: oldest first (fifo) or least recently retrieved first (lru)."""
        q = select(EpisodeRecord.id).where(EpisodeRecord.namespace == namespace)
        if policy == "lru":
            q = q.order_by(func.coalesce(EpisodeRecord.last_retrieved_at, EpisodeRecord.created_at), EpisodeRecord.id)
        else:
            q = q.order_by(EpisodeRecord.id)
        with self.db.session() as s:
            return list(s.scalars(q.limit(n)))

    def stats(self, namespace: str) -> dict:
        with self.db.session() as s:
            # one pass over the namespace's rows (three separate aggregates took ~0.2 s at 100k episodes)
            total, dedups, successes, failures, domains = s.execute(
                select(func.count(), func.sum(EpisodeRecord.seen_count - 1),
                       func.count(case((EpisodeRecord.success.is_(True), 1))),
                       func.count(case((EpisodeRecord.success.is_(False), 1))),
                       func.count(func.distinct(EpisodeRecord.domain)))
                .where(EpisodeRecord.namespace == namespace)
            ).one()
            evicted = s.scalar(select(func.count()).select_from(DeletionRecord).where(
                DeletionRecord.namespace == namespace, DeletionRecord.reason.like("evict%")))
            deleted = s.scalar(select(func.count()).select_from(DeletionRecord).where(DeletionRecord.namespace == namespace,
                                                                                      DeletionRecord.reason == "api"))
        return {
            "episodes": int(total or 0), "successes": int(successes or 0), "failures": int(failures or 0),
            "unlabelled": int((total or 0) - (successes or 0) - (failures or 0)), "domains": int(domains or 0),
            "deduplicated": int(dedups or 0), "evicted": int(evicted or 0), "deleted": int(deleted or 0),
        }
