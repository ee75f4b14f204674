"""The exceptions of the SDK: one class per way a request can fail.

Every error the server sends is JSON, ``{"error": "...", "status": N}``, with
a message that names the field or parameter at fault; :class:`DroverError`
carries that message and the status. :attr:`DroverError.retryable` tells a
caller whether sending the same request again later can succeed.
"""

from __future__ import annotations

__all__ = [
    "AuthError",
    "ConflictError",
    "DroverConnectionError",
    "DroverError",
    "ForbiddenError",
    "NotFoundError",
    "PayloadTooLargeError",
    "RateLimitedError",
    "RetryableError",
    "ServerError",
    "UnauthorizedError",
    "UnavailableError",
    "ValidationError",
]


class DroverError(Exception):
    """Base of every error raised by the SDK."""

    #: True when the same request may succeed if sent again later.
    retryable: bool = False

    def __init__(self, message: str, status: int | None = None, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.path = path

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        code = f" (HTTP {self.status})" if self.status else ""
        return f"{where}{self.message}{code}"


class ValidationError(DroverError):
    """400 (or 415): the request is invalid; the message names the field."""


class AuthError(DroverError):
    """401 or 403: the token is missing, unknown, or lacks the scope."""


class UnauthorizedError(AuthError):
    """401: no token, or one the server does not know."""


class ForbiddenError(AuthError):
    """403: the token lacks the scope the endpoint needs."""


class NotFoundError(DroverError):
    """404: no job or batch has that id."""


class ConflictError(DroverError):
    """409: the job cannot be retried (its unique key is taken, it is a
    finished batch member, or other jobs depend on it)."""


class PayloadTooLargeError(DroverError):
    """413: the body, or the number of jobs, results or attempts, is over the
    server's limit (--max-body, --max-batch). Split the request."""


class RetryableError(DroverError):
    """The server could not answer now; the same request may succeed later."""

    retryable = True


class RateLimitedError(RetryableError):
    """429: too many requests."""


class UnavailableError(RetryableError):
    """503: the server is starting, stopping, or its store is unreachable."""


class ServerError(RetryableError):
    """500 or another 5xx: the store failed while answering."""


class DroverConnectionError(RetryableError):
    """The server could not be reached, or the connection broke before an
    answer arrived. For a request that changes something (an insert), the
    change may or may not have been made."""


def error_for_status(status: int, message: str, path: str) -> DroverError:
    """Returns the exception for an error answer of the server."""
    cls: type[DroverError]
    if status in (400, 415, 422):
        cls = ValidationError
    elif status == 401:
        cls = UnauthorizedError
    elif status == 403:
        cls = ForbiddenError
    elif status == 404:
        cls = NotFoundError
    elif status == 409:
        cls = ConflictError
    elif status == 413:
        cls = PayloadTooLargeError
    elif status == 429:
        cls = RateLimitedError
    elif status in (502, 503, 504):
        cls = UnavailableError
    elif status >= 500:
        cls = ServerError
    else:
        cls = DroverError
    return cls(message, status=status, path=path)
