export { Client, Workflow } from "./client.js";
export { Worker, Cancel, Retry, Snooze, encodeResult, MAX_RESULT_BYTES, MAX_ERROR_BYTES, } from "./worker.js";
export { Backoff } from "./runtime.js";
export { Consumer, FailedMessages, } from "./consumer.js";
export { DroverError, ValidationError, AuthError, UnauthorizedError, ForbiddenError, NotFoundError, ConflictError, PayloadTooLargeError, RetryableError, RateLimitedError, UnavailableError, ServerError, ConnectionError, errorForStatus, } from "./errors.js";
//# sourceMappingURL=index.js.map