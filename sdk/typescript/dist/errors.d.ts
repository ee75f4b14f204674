/**
 * The errors of the SDK: one class per way a request can fail.
 *
 * Every error the server sends is JSON, `{"error": "…", "status": N}`, with a
 * message that names the field or parameter at fault; {@link DroverError}
 * carries that message, the status and the request path.
 * {@link DroverError.retryable} tells whether the same request may succeed
 * if sent again later.
 */
export declare class DroverError extends Error {
    /** The server's message (without status and path). */
    readonly serverMessage: string;
    /** The HTTP status, undefined when no answer arrived. */
    readonly status: number | undefined;
    /** The request path, such as `/v1/jobs`. */
    readonly path: string | undefined;
    /** True when the same request may succeed if sent again later. */
    get retryable(): boolean;
    constructor(message: string, status?: number, path?: string, options?: {
        cause?: unknown;
    });
}
/** 400, 415 or 422: the request is invalid; the message names the field. */
export declare class ValidationError extends DroverError {
}
/** 401 or 403: the token is missing, unknown, or lacks the scope. */
export declare class AuthError extends DroverError {
}
/** 401: no token, or one the server does not know. */
export declare class UnauthorizedError extends AuthError {
}
/** 403: the token lacks the scope, or may not use that queue. */
export declare class ForbiddenError extends AuthError {
}
/** 404: no job or batch has that id (or it is in a queue the token may not use). */
export declare class NotFoundError extends DroverError {
}
/** 409: the job cannot be retried (unique key taken, finished batch member, has dependants). */
export declare class ConflictError extends DroverError {
}
/** 413: over the server's --max-body or --max-batch. Split the request. */
export declare class PayloadTooLargeError extends DroverError {
}
/** The server could not answer now; the same request may succeed later. */
export declare class RetryableError extends DroverError {
    get retryable(): boolean;
}
/** 429: too many requests. */
export declare class RateLimitedError extends RetryableError {
}
/** 502, 503, 504: the server is starting, stopping, or its store is unreachable. */
export declare class UnavailableError extends RetryableError {
}
/** 500 or another 5xx. */
export declare class ServerError extends RetryableError {
}
/**
 * No answer: refused, reset, timed out. For an insert, the job may or may
 * not have been stored (give it a unique_key to make a retry safe).
 */
export declare class ConnectionError extends RetryableError {
}
/** Returns the error for an error answer of the server. */
export declare function errorForStatus(status: number, message: string, path?: string): DroverError;
