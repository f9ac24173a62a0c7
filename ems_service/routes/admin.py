"""Key management with an admin key."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from ems_service.auth import require_admin
from ems_service.limits import within_limits
from ems_service.routes.deps import Checked, Keys
from ems_service.schemas import RowId

router = APIRouter(prefix="/v1/admin", tags=["admin"], dependencies=[Depends(require_admin)])


class KeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    namespace: str = Field(min_length=1)
    role: Literal["admin", "writer", "verifier"] = "writer"
    admin: StrictBool = Field(False, description="the same as role=admin (kept for older clients)")


@router.post("/keys", status_code=201)
@within_limits
def create_key(body: KeyCreate, keys: Keys, limits: Checked) -> dict:
    """A new key for a namespace with a role (writer by default); the key is shown once."""
    info, key = keys.create(namespace=body.namespace, role=body.role, admin=body.admin)
    return {"id": info.id, "namespace": info.namespace, "role": info.role, "admin": info.admin, "key": key}


@router.get("/keys")
def list_keys(keys: Keys) -> dict:
    """Keys (prefixes only, never the keys)."""
    return {"keys": keys.list()}


@router.delete("/keys/{key_id}")
@within_limits
def revoke_key(key_id: RowId, keys: Keys, limits: Checked) -> dict:
    """Revoke a key: its requests get 403 from now on."""
    info = keys.revoke(str(key_id))
    return {"id": info.id, "namespace": info.namespace, "revoked": True}
