"""One error tree: each subclass carries its HTTP status; one handler renders them all."""

from __future__ import annotations


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


class LimitExceeded(EMSError):
    status_code = 413


class ValidationFailed(EMSError):
    status_code = 422


class NotFound(EMSError):
    status_code = 404


class EpisodeNotFound(NotFound):
    pass


class SessionNotFound(NotFound):
    pass


class Conflict(EMSError):
    status_code = 409


class ReadOnly(EMSError):
    """A write sent to a read-only replica (its database is a standby): send writes to the primary."""

    status_code = 405


class StoreUnavailable(EMSError):
    status_code = 503


class NotReady(EMSError):
    status_code = 503


class EmbedderUnavailable(EMSError):
    """The embedding model cannot be loaded or does not match stored vectors."""

    status_code = 503


class DimensionMismatch(EMSError):
    status_code = 500


class UnsupportedMediaType(EMSError):
    """A body that is not JSON (Content-Type), or one compressed in a way the service does not read."""

    status_code = 415
