"""The index feed: what a vector backend reads of the database (stored vectors, ids, the deletion log, namespaces).

Handed to the backend by the composition root instead of the whole database: it reads, never re-embeds. A backend
that keeps the vectors in the rows (pgvector) also gets the engine, a transaction and `write_vectors_into`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager

from sqlalchemy import Connection, Engine, Table, func, select, text
from sqlalchemy.orm import Session

from ems_service.index.base import IndexRow
from ems_service.repositories.database import Database
from ems_service.repositories.episodes import EpisodeRepository, index_row
from ems_service.tables import DeletionRecord, EpisodeRecord

_INDEX_COLUMNS = (EpisodeRecord.id, EpisodeRecord.embedding, EpisodeRecord.embedding_dim, EpisodeRecord.domain,
                  EpisodeRecord.success, EpisodeRecord.task_id)


class IndexFeed:
    """Reads for index start-up, catch-up and replica following."""

    def __init__(self, db: Database, episodes: EpisodeRepository) -> None:
        self.db = db
        self.engine: Engine = db.engine
        self._episodes = episodes

    def session(self) -> AbstractContextManager[Session]:
        return self.db.session()

    def reads(self) -> AbstractContextManager[Connection]:
        return self.db.reads()

    def write_vectors_into(self, table: Table, column: str) -> None:
        """Every new episode's vector goes into `column` of `table` in its INSERT (see EpisodeRepository)."""
        self._episodes.write_vectors_into(table, column)

    def count(self, namespace: str) -> int:
        return self._episodes.count(namespace)

    def namespaces(self) -> list[str]:
        """Namespaces holding episodes: one index probe per namespace (a skip scan), not a scan of every row
        (the replica follower asks every second)."""
        with self.db.session() as s:
            return sorted(s.scalars(text(
                "WITH RECURSIVE ns(name) AS ("
                " SELECT MIN(namespace) FROM episodes"
                " UNION ALL"
                " SELECT (SELECT MIN(namespace) FROM episodes WHERE namespace > ns.name) FROM ns WHERE ns.name IS NOT NULL"
                ") SELECT name FROM ns WHERE name IS NOT NULL")))

    def iter_index_rows(self, namespace: str, *, after_id: int = 0, chunk: int = 20_000) -> Iterator[list[IndexRow]]:
        """Stored vectors with their filter fields, in id order, in chunks (never re-embeds)."""
        last = after_id
        while True:
            with self.db.session() as s:
                rows = s.execute(select(*_INDEX_COLUMNS)
                                 .where(EpisodeRecord.namespace == namespace, EpisodeRecord.id > last)
                                 .order_by(EpisodeRecord.id).limit(chunk)).all()
            if not rows:
                return
            yield [index_row(r) for r in rows]
            last = rows[-1].id

    def ids_from(self, namespace: str, min_id: int) -> list[int]:
        with self.db.session() as s:
            return list(s.scalars(select(EpisodeRecord.id).where(EpisodeRecord.namespace == namespace,
                                                                 EpisodeRecord.id >= min_id)))

    def index_rows(self, namespace: str, ids: list[int]) -> list[IndexRow]:
        if not ids:
            return []
        with self.db.session() as s:
            rows = s.execute(select(*_INDEX_COLUMNS).where(EpisodeRecord.namespace == namespace,
                                                           EpisodeRecord.id.in_(ids)).order_by(EpisodeRecord.id)).all()
        return [index_row(r) for r in rows]

    def embedding_models(self, namespace: str, *, after_id: int = 0) -> list[tuple[str, int]]:
        """(model, dimension) pairs of the stored vectors with ids above `after_id`."""
        with self.db.session() as s:
            return [(m, d) for m, d in s.execute(
                select(EpisodeRecord.embedding_model, EpisodeRecord.embedding_dim)
                .where(EpisodeRecord.namespace == namespace, EpisodeRecord.id > after_id).distinct())]

    def max_deletion_seq(self, namespace: str) -> int:
        with self.db.session() as s:
            return int(s.scalar(select(func.max(DeletionRecord.seq)).where(DeletionRecord.namespace == namespace)) or 0)

    def deletions_since(self, namespace: str, seq: int) -> list[tuple[int, int]]:
        """(seq, episode_id) of deletions after `seq`."""
        with self.db.session() as s:
            return [(q, e) for q, e in s.execute(
                select(DeletionRecord.seq, DeletionRecord.episode_id)
                .where(DeletionRecord.namespace == namespace, DeletionRecord.seq > seq).order_by(DeletionRecord.seq))]
