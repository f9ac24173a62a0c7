"""The index feed: what an in-process index reads from the episodes table and the deletion log."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ems_service.index.base import IndexRow
from ems_service.tables import DeletionRecord, EpisodeRecord


class IndexFeed:
    """Reads for index start-up, catch-up and replica following (mixed into Store; never re-embeds)."""

    def session(self) -> AbstractContextManager[Session]:  # provided by Store
        raise NotImplementedError

    def iter_index_rows(self, namespace: str, *, after_id: int = 0, chunk: int = 20_000) -> Iterator[list[IndexRow]]:
        """Stored vectors with their filter fields, in id order, in chunks (never re-embeds)."""
        last = after_id
        while True:
            with self.session() as s:
                rows = s.execute(
                    select(
                        EpisodeRecord.id, EpisodeRecord.embedding, EpisodeRecord.embedding_dim,
                        EpisodeRecord.domain, EpisodeRecord.success, EpisodeRecord.task_id,
                    )
                    .where(EpisodeRecord.namespace == namespace, EpisodeRecord.id > last)
                    .order_by(EpisodeRecord.id)
                    .limit(chunk)
                ).all()
            if not rows:
                return
            yield [
                IndexRow(r.id, np.frombuffer(r.embedding, dtype=np.float32, count=r.embedding_dim), r.domain,
                         r.success, r.task_id)
                for r in rows
            ]
            last = rows[-1].id

    def ids_from(self, namespace: str, min_id: int) -> list[int]:
        with self.session() as s:
            return list(s.scalars(select(EpisodeRecord.id).where(EpisodeRecord.namespace == namespace,
                                                                 EpisodeRecord.id >= min_id)))

    def index_rows(self, namespace: str, ids: list[int]) -> list[IndexRow]:
        if not ids:
            return []
        with self.session() as s:
            rows = s.execute(
                select(EpisodeRecord.id, EpisodeRecord.embedding, EpisodeRecord.embedding_dim, EpisodeRecord.domain,
                       EpisodeRecord.success, EpisodeRecord.task_id)
                .where(EpisodeRecord.namespace == namespace, EpisodeRecord.id.in_(ids)).order_by(EpisodeRecord.id)
            ).all()
        return [IndexRow(r.id, np.frombuffer(r.embedding, dtype=np.float32, count=r.embedding_dim), r.domain,
                         r.success, r.task_id) for r in rows]

    def embedding_models(self, namespace: str, *, after_id: int = 0) -> list[tuple[str, int]]:
        """(model, dimension) pairs of the stored vectors with ids above `after_id`."""
        with self.session() as s:
            return [
                (m, d)
                for m, d in s.execute(
                    select(EpisodeRecord.embedding_model, EpisodeRecord.embedding_dim)
                    .where(EpisodeRecord.namespace == namespace, EpisodeRecord.id > after_id)
                    .distinct()
                )
            ]

    def max_deletion_seq(self, namespace: str) -> int:
        with self.session() as s:
            return int(s.scalar(select(func.max(DeletionRecord.seq)).where(DeletionRecord.namespace == namespace)) or 0)

    def deletions_since(self, namespace: str, seq: int) -> list[tuple[int, int]]:
        """(seq, episode_id) of deletions after `seq`."""
        with self.session() as s:
            return [
                (q, e)
                for q, e in s.execute(
                    select(DeletionRecord.seq, DeletionRecord.episode_id)
                    .where(DeletionRecord.namespace == namespace, DeletionRecord.seq > seq)
                    .order_by(DeletionRecord.seq)
                )
            ]

