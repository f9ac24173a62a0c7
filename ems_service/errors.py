"""One error tree: each class carries its HTTP status; `error_response` is the one writer of the error body.

Every error the service reports is one of these (routes, services, the middleware's refusals, the translated
exceptions of FastAPI, Starlette and the libraries), so a caller only ever sees `{error, detail, request_id}` with
`error` one of the names below:

    EMSError                     500  base; never raised itself
    ├── BadRequest               400  malformed request: a bad cursor, Content-Length, login form
    │   ├── MalformedJSON        400  the body is not JSON, or not UTF-8
    │   └── AmbiguousCredentials 400  more than one Authorization / X-API-Key header
    ├── Unauthorized             401  missing or unknown API key
    ├── Forbidden                403  the key's role may not do this, or the key is revoked
    ├── NotFound                 404  no such resource (or route) in this namespace
    │   ├── EpisodeNotFound      404
    │   └── SessionNotFound      404  unknown or expired session
    ├── MethodNotAllowed         405  the route exists, the method does not
    ├── ReadOnly                 405  a write sent to a read-only replica
    ├── Conflict                 409  conflict with the stored state
    │   └── CannotFit            409  the stored episodes cannot fit a risk model
    ├── LimitExceeded            413  a named EMS_LIMITS__* limit (ems_service.limits writes every message)
    ├── UnsupportedMediaType     415  not JSON (Content-Type), or compressed (Content-Encoding)
    ├── ValidationFailed         422  well-formed JSON, invalid content (which field, and why)
    ├── TooManyRequests          429  too many unknown API keys from one address
    ├── InternalError            500  an unexpected exception (logged under the request id)
    ├── DimensionMismatch        500  stored vectors do not match the embedder
    ├── SnapshotUnusable         500  an index snapshot is missing or damaged (never reaches a caller: rebuilt)
    ├── LLMError                 502  the LLM endpoint failed (the coach falls back to its template)
    ├── StoreUnavailable         503  the database does not answer
    ├── NotReady                 503  starting, or stopping
    ├── EmbedderUnavailable      503  the embedding model cannot be loaded
    └── HTTPError                any  an HTTPException of another status from FastAPI or Starlette

Third-party exceptions are translated once, where the library is called (`raise StoreUnavailable(...) from exc`).
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.responses import JSONResponse

from condenser import redact_text


class EMSError(Exception):
    """Base of every error the service reports to a caller."""

    status_code = 500

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    @property
    def name(self) -> str:
        return type(self).__name__


class BadRequest(EMSError):
    status_code = 400


class MalformedJSON(BadRequest):
    """A body that is not JSON, or not UTF-8 (FastAPI's parser gave up on it)."""


class AmbiguousCredentials(BadRequest):
    """More than one Authorization / X-API-Key header: which one counts would be a guess."""


class Unauthorized(EMSError):
    status_code = 401


class Forbidden(EMSError):
    status_code = 403


class NotFound(EMSError):
    status_code = 404


class EpisodeNotFound(NotFound):
    pass


class SessionNotFound(NotFound):
    pass


class MethodNotAllowed(EMSError):
    status_code = 405


class ReadOnly(EMSError):
    """A write sent to a read-only replica (its database is a standby): send writes to the primary."""

    status_code = 405


class Conflict(EMSError):
    status_code = 409


class CannotFit(Conflict):
    """The namespace's labelled episodes cannot fit a risk model (too few, or one outcome only)."""


class LimitExceeded(EMSError):
    status_code = 413


class UnsupportedMediaType(EMSError):
    """A body that is not JSON (Content-Type), or one compressed in a way the service does not read."""

    status_code = 415


class ValidationFailed(EMSError):
    status_code = 422


class TooManyRequests(EMSError):
    status_code = 429


class InternalError(EMSError):
    """An exception nobody translated: the caller gets the request id, the log gets the traceback."""


class DimensionMismatch(EMSError):
    status_code = 500


class SnapshotUnusable(EMSError):
    """A FAISS snapshot that is missing, damaged, of another format or model: the backend rebuilds the index from
    the table instead (this never reaches a caller)."""



class LLMError(EMSError):
    status_code = 502


class StoreUnavailable(EMSError):
    status_code = 503


class NotReady(EMSError):
    status_code = 503


class EmbedderUnavailable(EMSError):
    """The embedding model cannot be loaded or does not match stored vectors."""

    status_code = 503


class HTTPError(EMSError):
    """An HTTPException of a status the tree has no class for, passed on with that status."""

    def __init__(self, detail: str, *, status_code: int) -> None:
        super().__init__(detail)
        self.status_code = status_code


def error_response(error: EMSError, request_id: str, *, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The one writer of the error body: `{error, detail, request_id}` with the error's status (the app's
    exception handlers and the middleware's refusals both answer with it). The detail is redacted like a stored
    text: it may quote what the caller sent (a tag's name, a session id), and a secret never goes back out."""
    return JSONResponse({"error": error.name, "detail": redact_text(error.detail), "request_id": request_id},
                        status_code=error.status_code, headers=headers)
