/**
 * The errors of the SDK: one class per way a request can fail.
 *
 * Every error the server sends is JSON, `{"error": "…", "status": N}`, with a
 * message that names the field or parameter at fault; {@link DroverError}
 * carries that message, the status and the request path.
 * {@link DroverError.retryable} tells whether the same request may succeed
 * if sent again later.
 */
export class DroverError extends Error {
    /** The server's message (without status and path). */
    serverMessage;
    /** The HTTP status, undefined when no answer arrived. */
    status;
    /** The request path, such as `/v1/jobs`. */
    path;
    /** True when the same request may succeed if sent again later. */
    get retryable() {
        return false;
    }
    constructor(message, status, path, options) {
        super(`${path ? `${path}: ` : ""}${message}${status ? ` (HTTP ${status})` : ""}`, options);
        this.name = new.target.name;
        this.serverMessage = message;
        this.status = status;
        this.path = path;
    }
}
/** 400, 415 or 422: the request is invalid; the message names the field. */
export class ValidationError extends DroverError {
}
/** 401 or 403: the token is missing, unknown, or lacks the scope. */
export class AuthError extends DroverError {
}
/** 401: no token, or one the server does not know. */
export class UnauthorizedError extends AuthError {
}
/** 403: the token lacks the scope, or may not use that queue. */
export class ForbiddenError extends AuthError {
}
/** 404: no job or batch has that id (or it is in a queue the token may not use). */
export class NotFoundError extends DroverError {
}
/** 409: the job cannot be retried (unique key taken, finished batch member, has dependants). */
export class ConflictError extends DroverError {
}
/** 413: over the server's --max-body or --max-batch. Split the request. */
export class PayloadTooLargeError extends DroverError {
}
/** The server could not answer now; the same request may succeed later. */
export class RetryableError extends DroverError {
    get retryable() {
        return true;
    }
}
/** 429: too many requests. */
export class RateLimitedError extends RetryableError {
}
/** 502, 503, 504: the server is starting, stopping, or its store is unreachable. */
export class UnavailableError extends RetryableError {
}
/** 500 or another 5xx. */
export class ServerError extends RetryableError {
}
/**
 * No answer: refused, reset, timed out. For an insert, the job may or may
 * not have been stored (give it a unique_key to make a retry safe).
 */
export class ConnectionError extends RetryableError {
}
/** Returns the error for an error answer of the server. */
export function errorForStatus(status, message, path) {
    if (status === 400 || status === 415 || status === 422)
        return new ValidationError(message, status, path);
    if (status === 401)
        return new UnauthorizedError(message, status, path);
    if (status === 403)
        return new ForbiddenError(message, status, path);
    if (status === 404)
        return new NotFoundError(message, status, path);
    if (status === 409)
        return new ConflictError(message, status, path);
    if (status === 413)
        return new PayloadTooLargeError(message, status, path);
    if (status === 429)
        return new RateLimitedError(message, status, path);
    if (status === 502 || status === 503 || status === 504)
        return new UnavailableError(message, status, path);
    if (status >= 500)
        return new ServerError(message, status, path);
    return new DroverError(message, status, path);
}
//# sourceMappingURL=errors.js.map