"""Drover's Python SDK: a client and a worker for ``drover serve``'s HTTP API.

    client = drover.Client("http://127.0.0.1:8080", token)
    client.insert("email", {"to": "ada@example.com"})

    worker = drover.Worker("http://127.0.0.1:8080", token, concurrency=20)

    @worker.task("email")
    def send(args: dict, ctx: drover.JobContext) -> None: ...

    worker.run()
"""

from ._version import __version__
from .client import Client, Step, Workflow
from .errors import (
    AuthError,
    ConflictError,
    DroverConnectionError,
    DroverError,
    ForbiddenError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitedError,
    RetryableError,
    ServerError,
    UnauthorizedError,
    UnavailableError,
    ValidationError,
)
from .models import (
    AttemptError,
    Batch,
    BatchCounts,
    InsertedBatch,
    Job,
    JobCount,
    JobPage,
    JobResult,
    JobSpec,
    JobState,
    PeriodicJob,
    ResultPage,
    SearchOrder,
)
from .worker import Cancel, JobContext, Retry, Snooze, Worker

__all__ = [
    "AttemptError",
    "AuthError",
    "Batch",
    "BatchCounts",
    "Cancel",
    "Client",
    "ConflictError",
    "DroverConnectionError",
    "DroverError",
    "ForbiddenError",
    "InsertedBatch",
    "Job",
    "JobContext",
    "JobCount",
    "JobPage",
    "JobResult",
    "JobSpec",
    "JobState",
    "NotFoundError",
    "PayloadTooLargeError",
    "PeriodicJob",
    "RateLimitedError",
    "ResultPage",
    "Retry",
    "RetryableError",
    "SearchOrder",
    "ServerError",
    "Snooze",
    "Step",
    "UnauthorizedError",
    "UnavailableError",
    "ValidationError",
    "Worker",
    "Workflow",
    "__version__",
]
