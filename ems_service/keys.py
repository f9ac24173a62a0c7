"""API keys and tenants: keys are stored hashed; each resolves to exactly one namespace."""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from ems_service.errors import BadRequest, NotFound
from ems_service.store import Store, utcnow
from ems_service.tables import ApiKeyRecord

_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
REFRESH_S = 1.0


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class KeyInfo:
    id: int
    namespace: str
    admin: bool
    revoked: bool


class KeyRing:
    """Creates, revokes and resolves keys; a small cache keeps lookups off the database on the hot path."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._cache: dict[str, KeyInfo] = {}
        self._any = False
        self._loaded = 0.0
        self._lock = threading.Lock()

    def _refresh(self, *, force: bool = False) -> None:
        with self._lock:
            if not force and time.monotonic() - self._loaded < REFRESH_S:
                return
            with self.store.session() as s:
                rows = list(s.scalars(select(ApiKeyRecord)))
            self._cache = {r.key_hash: KeyInfo(r.id, r.namespace, r.admin, r.revoked_at is not None) for r in rows}
            self._any = bool(rows)
            self._loaded = time.monotonic()

    def enabled(self) -> bool:
        """True as soon as one key exists: from then on every request needs a valid key."""
        self._refresh()
        return self._any

    def resolve(self, key: str) -> KeyInfo | None:
        """The key's record (revoked ones too), or None for an unknown key."""
        digest = hash_key(key)
        self._refresh()
        info = self._cache.get(digest)
        if info is None:
            self._refresh(force=True)
            info = self._cache.get(digest)
        return info

    def create(self, *, namespace: str, admin: bool = False) -> tuple[KeyInfo, str]:
        """A new key for `namespace`; the plaintext is returned once and never stored."""
        if not _NAMESPACE.match(namespace):
            raise BadRequest("namespace must be 1-128 characters of letters, digits, '_', '.', '-'")
        key = "ems_" + secrets.token_urlsafe(32)
        row = ApiKeyRecord(namespace=namespace, key_hash=hash_key(key), prefix=key[:10], admin=admin,
                           created_at=utcnow())
        with self.store.session() as s:
            s.add(row)
        self._refresh(force=True)
        return KeyInfo(row.id, namespace, admin, False), key

    def ensure(self, key: str, *, namespace: str, admin: bool) -> None:
        """Make sure a given key exists (EMS_ADMIN_KEY at start-up); an existing one is left as it is."""
        if len(key) < 16:
            raise BadRequest("EMS_ADMIN_KEY must be at least 16 characters")
        digest = hash_key(key)
        try:
            with self.store.session() as s:
                if s.scalar(select(ApiKeyRecord.id).where(ApiKeyRecord.key_hash == digest)) is None:
                    s.add(ApiKeyRecord(namespace=namespace, key_hash=digest, prefix=key[:10], admin=admin,
                                       created_at=utcnow()))
        except IntegrityError:
            pass  # another replica starting at the same moment created it
        self._refresh(force=True)

    def revoke(self, ident: str) -> KeyInfo:
        """Revoke a key by id, by its prefix, or by the key itself."""
        with self.store.session() as s:
            q = select(ApiKeyRecord)
            if ident.isdigit():
                q = q.where(ApiKeyRecord.id == int(ident))
            elif len(ident) > 16:
                q = q.where(ApiKeyRecord.key_hash == hash_key(ident))
            else:
                q = q.where(ApiKeyRecord.prefix == ident)
            rows = list(s.scalars(q))
            if len(rows) != 1:
                raise NotFound(f"no single key matches {ident[:10]!r}")
            rows[0].revoked_at = rows[0].revoked_at or utcnow()
            info = KeyInfo(rows[0].id, rows[0].namespace, rows[0].admin, True)
        self._refresh(force=True)
        return info

    def list(self) -> list[dict]:
        with self.store.session() as s:
            return [{"id": r.id, "namespace": r.namespace, "prefix": r.prefix, "admin": r.admin,
                     "created_at": r.created_at.isoformat(), "revoked": r.revoked_at is not None}
                    for r in s.scalars(select(ApiKeyRecord).order_by(ApiKeyRecord.id))]
