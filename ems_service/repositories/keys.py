"""API keys: the key table (only hashes are stored), read and written as plain `StoredKey`s."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from ems_service.repositories.database import Database, utcnow
from ems_service.tables import ApiKeyRecord


@dataclass(frozen=True)
class StoredKey:
    id: int
    namespace: str
    key_hash: str
    prefix: str
    role: str
    created_at: datetime
    revoked_at: datetime | None


def _key(row: ApiKeyRecord) -> StoredKey:
    return StoredKey(row.id, row.namespace, row.key_hash, row.prefix, row.role, row.created_at, row.revoked_at)


class KeyRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def all(self) -> list[StoredKey]:
        """Every key, in id order (small: one row per key)."""
        with self.db.session() as s:
            return [_key(r) for r in s.scalars(select(ApiKeyRecord).order_by(ApiKeyRecord.id))]

    def add(self, *, namespace: str, key_hash: str, prefix: str, role: str) -> StoredKey:
        with self.db.session() as s:
            row = ApiKeyRecord(namespace=namespace, key_hash=key_hash, prefix=prefix, role=role, created_at=utcnow())
            s.add(row)
            s.flush()
            return _key(row)

    def add_if_missing(self, *, namespace: str, key_hash: str, prefix: str, role: str) -> None:
        """Store a key unless its hash is stored (also when another process stores it at the same moment)."""
        try:
            with self.db.session() as s:
                if s.scalar(select(ApiKeyRecord.id).where(ApiKeyRecord.key_hash == key_hash)) is None:
                    s.add(ApiKeyRecord(namespace=namespace, key_hash=key_hash, prefix=prefix, role=role,
                                       created_at=utcnow()))
        except IntegrityError:
            pass  # another replica starting at the same moment created it

    def revoke_one(self, *, key_id: int | None = None, key_hash: str | None = None,
                   prefix: str | None = None) -> list[StoredKey]:
        """The keys matching the one criterion given; when exactly one matches it is revoked (if not already)."""
        with self.db.session() as s:
            q = select(ApiKeyRecord)
            if key_id is not None:
                q = q.where(ApiKeyRecord.id == key_id)
            elif key_hash is not None:
                q = q.where(ApiKeyRecord.key_hash == key_hash)
            else:
                q = q.where(ApiKeyRecord.prefix == prefix)
            rows = list(s.scalars(q))
            if len(rows) == 1:
                rows[0].revoked_at = rows[0].revoked_at or utcnow()
            return [_key(r) for r in rows]
