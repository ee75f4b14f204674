export function specToJSON(spec) {
    const out = { kind: spec.kind, args: spec.args === undefined ? {} : spec.args };
    if (spec.queue !== undefined)
        out.queue = spec.queue;
    if (spec.priority !== undefined)
        out.priority = spec.priority;
    if (spec.runAt !== undefined)
        out.run_at = spec.runAt instanceof Date ? spec.runAt.toISOString() : spec.runAt;
    if (spec.maxAttempts !== undefined)
        out.max_attempts = spec.maxAttempts;
    if (spec.tags !== undefined)
        out.tags = spec.tags;
    if (spec.metadata !== undefined)
        out.metadata = spec.metadata;
    if (spec.timeoutMs !== undefined)
        out.timeout_ms = spec.timeoutMs;
    if (spec.dependsOn !== undefined)
        out.depends_on = spec.dependsOn;
    if (spec.key !== undefined)
        out.key = spec.key;
    if (spec.keyLimit !== undefined)
        out.key_limit = spec.keyLimit;
    if (spec.keyRate !== undefined)
        out.key_rate = spec.keyRate;
    if (spec.keyRatePeriodMs !== undefined)
        out.key_rate_period_ms = spec.keyRatePeriodMs;
    if (spec.uniqueKey !== undefined)
        out.unique_key = spec.uniqueKey;
    if (spec.uniqueStates !== undefined)
        out.unique_states = spec.uniqueStates;
    if (spec.uniqueByQueue !== undefined)
        out.unique_by_queue = spec.uniqueByQueue;
    if (spec.workerType !== undefined)
        out.worker_type = spec.workerType;
    if (spec.workerNames !== undefined)
        out.worker_names = spec.workerNames;
    if (spec.workerLabels !== undefined)
        out.worker_labels = spec.workerLabels;
    if (spec.onWorkerAbsent !== undefined)
        out.on_worker_absent = spec.onWorkerAbsent;
    if (spec.workerAbsentAfterMs !== undefined)
        out.worker_absent_after_ms = spec.workerAbsentAfterMs;
    return out;
}
/** One decoder for every payload: making one per message cost more than the decoding. */
const utf8 = new TextDecoder("utf-8", { fatal: true });
/** Whether bytes are a JSON text (the server's rule for sending `payload`), and its value. */
function jsonOf(data) {
    try {
        return { ok: true, value: JSON.parse(utf8.decode(data)) };
    }
    catch {
        return { ok: false, value: undefined };
    }
}
/**
 * Reads a delivery of a receive answer, which carries the payload as
 * `payload` when it is JSON and as `payload_base64` otherwise (an older
 * server sent both).
 */
export function deliveryOf(d, topic, subscription) {
    const data = d.payload_base64 !== undefined ? Buffer.from(d.payload_base64, "base64") : Buffer.from(JSON.stringify(d.payload ?? null));
    // The server sends payload only for a payload that is JSON text, so one
    // without it is not JSON: decoding its bytes to find out again (a
    // decoder and an exception per message) was most of a delivery's cost.
    const isJSON = "payload" in d;
    return {
        id: d.id,
        topic,
        subscription,
        key: d.key ?? "",
        data,
        isJSON,
        payload: isJSON ? d.payload : undefined,
        metadata: d.metadata ?? {},
        publishedAt: d.published_at,
        attempt: d.attempt,
    };
}
/**
 * Reads a retry job's args, in the job's attempt `jobAttempt`, as the
 * delivery it retries: its attempt counts on from the deliveries before the
 * failure, as a Go consumer's does.
 */
export function deliveryOfRetry(a, jobAttempt) {
    const attempt = jobAttempt + Math.max(a.delivered ?? 1, 1);
    const data = Buffer.from(a.payload ?? "", "base64");
    const parsed = jsonOf(data);
    return {
        id: a.id,
        topic: a.topic,
        subscription: a.subscription,
        key: a.key ?? "",
        data,
        isJSON: parsed.ok,
        payload: parsed.value,
        metadata: a.metadata ?? {},
        publishedAt: a.published_at,
        attempt,
    };
}
/** The JSON of a message to publish. */
export function messageToJSON(m, i, withTopic) {
    if (withTopic && !m.topic)
        throw new TypeError(`messages[${i}]: topic: required by publishMany (each message names its topic)`);
    if (!withTopic && m.topic !== undefined)
        throw new TypeError(`messages[${i}]: topic: publish names the topic; leave it unset`);
    const out = {};
    if (withTopic)
        out["topic"] = m.topic;
    if (m.key)
        out["key"] = m.key;
    if (m.payload instanceof Uint8Array)
        out["payload_base64"] = Buffer.from(m.payload).toString("base64");
    else
        out["payload"] = m.payload === undefined ? null : m.payload;
    if (m.metadata !== undefined)
        out["metadata"] = m.metadata;
    return out;
}
//# sourceMappingURL=types.js.map