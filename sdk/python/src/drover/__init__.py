"""Drover's Python SDK (distribution ``drover-client``): clients, a worker
and a topic consumer for ``drover serve``'s HTTP API, sync and asyncio.

    client = drover.Client("http://127.0.0.1:8080", token)
    client.insert("email", {"to": "ada@example.com"})

    worker = drover.Worker("http://127.0.0.1:8080", token, concurrency=20)

    @worker.task("email")
    def send(args: dict, ctx: drover.JobContext) -> None: ...

    worker.run()

``AsyncClient``, ``AsyncWorker`` and ``AsyncConsumer`` do the same for
asyncio code; ``Consumer`` runs handlers of topic subscriptions.
"""

from ._async_client import AsyncClient
from ._version import __version__
from .client import Client
from .consumer import AsyncConsumer, Consumer, ConsumerOptions, DeliveryContext, FailedMessages
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
    BatchPage,
    BulkAction,
    BulkTask,
    Delivery,
    InsertedBatch,
    Job,
    JobCount,
    JobPage,
    JobResult,
    JobSpec,
    JobState,
    Message,
    PeriodicJob,
    Queue,
    ReceivedBatch,
    ResultPage,
    SearchOrder,
    Step,
    SubscriptionLag,
    SubscriptionLane,
    SubscriptionRewind,
    Topic,
    UnroutableJobs,
    WorkerInfo,
    Workflow,
    WorkflowEdge,
    WorkflowGraph,
    WorkflowJob,
)
from .worker import AsyncWorker, Cancel, JobContext, Retry, Snooze, Worker, WorkerOptions

__all__ = [
    "AsyncClient",
    "AsyncConsumer",
    "AsyncWorker",
    "AttemptError",
    "AuthError",
    "Batch",
    "BatchCounts",
    "BatchPage",
    "BulkAction",
    "BulkTask",
    "Cancel",
    "Client",
    "ConflictError",
    "Consumer",
    "ConsumerOptions",
    "Delivery",
    "DeliveryContext",
    "DroverConnectionError",
    "DroverError",
    "FailedMessages",
    "ForbiddenError",
    "InsertedBatch",
    "Job",
    "JobContext",
    "JobCount",
    "JobPage",
    "JobResult",
    "JobSpec",
    "JobState",
    "Message",
    "NotFoundError",
    "PayloadTooLargeError",
    "PeriodicJob",
    "Queue",
    "RateLimitedError",
    "ReceivedBatch",
    "ResultPage",
    "Retry",
    "RetryableError",
    "SearchOrder",
    "ServerError",
    "Snooze",
    "Step",
    "SubscriptionLag",
    "SubscriptionLane",
    "SubscriptionRewind",
    "Topic",
    "UnauthorizedError",
    "UnavailableError",
    "UnroutableJobs",
    "ValidationError",
    "Worker",
    "WorkerInfo",
    "WorkerOptions",
    "Workflow",
    "WorkflowEdge",
    "WorkflowGraph",
    "WorkflowJob",
    "__version__",
]
