export { Client, Workflow, type Step, type ClientOptions, type JobFilter, type ListJobsOptions } from "./client.js";
export { Worker, Cancel, Retry, Snooze, encodeResult, MAX_RESULT_BYTES, MAX_ERROR_BYTES, type WorkerOptions, type Handler, type HandlerOptions, type JobContext, type ClaimedJob, type CancelReason, type Logger, } from "./worker.js";
export { Backoff } from "./runtime.js";
export { Consumer, FailedMessages, type ConsumerOptions, type SubscribeOptions, type DeliveryContext, type DeliveryCancelReason, type MessageHandler, type BatchHandler, } from "./consumer.js";
export { DroverError, ValidationError, AuthError, UnauthorizedError, ForbiddenError, NotFoundError, ConflictError, PayloadTooLargeError, RetryableError, RateLimitedError, UnavailableError, ServerError, ConnectionError, errorForStatus, } from "./errors.js";
export type * from "./types.js";
export type { components, operations, paths } from "./generated/api.js";
