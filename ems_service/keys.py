"""API keys and tenants: keys are stored hashed; each resolves to exactly one namespace and one role."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from dataclasses import dataclass

from ems_service.auth import ROLES
from ems_service.errors import BadRequest, NotFound
from ems_service.repositories import KeyRepository, StoredKey

# fullmatch, never `$`: `$` also matches before a trailing newline ("fleet-a\n" was accepted)
_NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_ROW_ID = re.compile(r"[0-9]{1,19}")


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class KeyInfo:
    id: int
    namespace: str
    role: str
    revoked: bool

    @property
    def admin(self) -> bool:
        return self.role == "admin"


def _info(row: StoredKey, *, revoked: bool | None = None) -> KeyInfo:
    return KeyInfo(row.id, row.namespace, row.role, row.revoked_at is not None if revoked is None else revoked)


class KeyRing:
    """Creates, revokes and resolves keys. Resolving never touches the database: the key table is held in memory
    and reloaded by `refresh()` (at start-up, after every change made here, and every EMS_REPLICA__FOLLOW_EVERY_S
    by the runtime's follower thread for keys made by other processes). An unknown key used to reload the whole
    table synchronously inside the middleware: a flood of random keys made a legitimate client's p50 ten times
    slower."""

    def __init__(self, keys: KeyRepository) -> None:
        self.keys = keys
        self._cache: dict[str, tuple[str, KeyInfo]] = {}
        self._any = False
        self._lock = threading.Lock()
        self.loads = 0  # table reloads (tests check that unknown keys cause none)
        self.refreshed_at = 0.0

    def refresh(self) -> None:
        """Reload the key table (small: one row per key)."""
        rows = self.keys.all()
        cache = {r.key_hash: (r.key_hash, _info(r)) for r in rows}
        with self._lock:
            self._cache, self._any = cache, bool(rows)
            self.loads += 1
            self.refreshed_at = time.monotonic()

    def enabled(self) -> bool:
        """True as soon as one key exists: from then on every request needs a valid key."""
        return self._any

    def resolve(self, key: str) -> KeyInfo | None:
        """The key's record (revoked ones too), or None for an unknown key; no database access."""
        digest = hash_key(key)
        stored, info = self._cache.get(digest, ("", None))
        # the dict lookup is on the sha256 of the key, so its timing tells nothing about the key; the final
        # comparison is constant-time all the same
        return info if info is not None and hmac.compare_digest(stored, digest) else None

    def create(self, *, namespace: str, role: str = "writer", admin: bool = False) -> tuple[KeyInfo, str]:
        """A new key for `namespace` with `role` (`admin=True` is role admin); the plaintext is returned once
        and never stored."""
        role = "admin" if admin else role
        check_namespace(namespace)
        check_role(role)
        key = "ems_" + secrets.token_urlsafe(32)
        row = self.keys.add(namespace=namespace, key_hash=hash_key(key), prefix=key[:10], role=role)
        self.refresh()
        return KeyInfo(row.id, namespace, role, False), key

    def ensure(self, key: str, *, namespace: str, role: str = "admin") -> None:
        """Make sure a given key exists (EMS_ADMIN_KEY at start-up); an existing one is left as it is."""
        if len(key) < 16:
            raise BadRequest("EMS_ADMIN_KEY must be at least 16 characters")
        check_role(role)
        self.keys.add_if_missing(namespace=namespace, key_hash=hash_key(key), prefix=key[:10], role=role)
        self.refresh()

    def revoke(self, ident: str) -> KeyInfo:
        """Revoke a key by id, by its prefix, or by the key itself."""
        if _ROW_ID.fullmatch(ident):
            rows = self.keys.revoke_one(key_id=int(ident))
        elif len(ident) > 16:
            rows = self.keys.revoke_one(key_hash=hash_key(ident))
        else:
            rows = self.keys.revoke_one(prefix=ident)
        if len(rows) != 1:
            raise NotFound(f"no single key matches {ident[:10]!r}")
        info = _info(rows[0], revoked=True)
        self.refresh()
        return info

    def list(self) -> list[dict]:
        return [{"id": r.id, "namespace": r.namespace, "prefix": r.prefix, "role": r.role, "admin": r.role == "admin",
                 "created_at": r.created_at.isoformat(), "revoked": r.revoked_at is not None}
                for r in self.keys.all()]


def check_namespace(namespace: str) -> None:
    """Refuse a namespace that is not 1-128 of letters, digits, '_', '.', '-' (the whole string)."""
    if not isinstance(namespace, str) or not _NAMESPACE.fullmatch(namespace):
        raise BadRequest("namespace must be 1-128 characters of letters, digits, '_', '.', '-' (starting with a "
                         "letter or digit), nothing else")


def check_role(role: str) -> None:
    if role not in ROLES:
        raise BadRequest(f"role must be one of {', '.join(ROLES)}")
