export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is up. Needs no token. */
        get: operations["healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The server can serve: store reachable, schema current, loops running. Needs no token. */
        get: operations["readyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document. Needs no token. */
        get: operations["openapi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Search jobs, oldest or newest first, a page at a time (keyset: pass next_after as after). Filters combine (all must hold): states, queue, kind, tags, args and metadata containment, and ranges of each time. A page ends at limit jobs, at the server's byte budget (8 MiB by default), or once it has examined 200,000 job IDs past after or read for 250 ms, whichever comes first: a filter that few jobs match returns short (even empty) pages with a next_after, so that no page costs more than its scan whatever the table's size; follow next_after until it is null. With count=true the page also says how many jobs match: exactly while each table (waiting and running jobs; finished jobs) holds at most 50,000 jobs, otherwise an estimate from 50 samples of the table's ID range (count.exact false). */
        get: operations["listJobs"];
        put?: never;
        /** Enqueue one or many jobs, all or none. */
        post: operations["enqueue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One job, waiting, running or finished. */
        get: operations["getJob"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel a job: a waiting one at once, a running one at its worker's next heartbeat. */
        post: operations["cancelJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Make a finished, scheduled or retryable job run now. */
        post: operations["retryJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/claim": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Claim a batch of jobs for a worker, long-polling up to wait_ms when none is claimable.
         * @description Claims up to max jobs, and fewer when their JSON would pass the server's byte budget (8 MiB by default; one job always, however large): the jobs that do not fit are never left leased to the worker, they stay available with their attempt unspent.
         */
        post: operations["claim"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/finish": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Report the results of a batch of attempts, fenced by (id, attempt). */
        post: operations["finish"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/release": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Give back attempts a worker holds but will not run, without using them.
         * @description Each job becomes available at once, its attempt undone (the next claim gets the same attempt number; max_attempts is not spent and no error is recorded). Fenced by (id, attempt, lease_token) like a result; a job whose cancel was requested is cancelled instead.
         */
        post: operations["release"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/heartbeat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Extend the leases of attempts a worker holds; learn which to stop. */
        post: operations["heartbeat"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Jobs by state, in one queue or all. */
        get: operations["stats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics in the text exposition format.
         * @description Jobs inserted, completed, failed and cancelled through this server by queue and kind; queue depth by state and the age of the oldest claimable job (sampled every few seconds, never per scrape); pickup and run latency histograms; claim and finish batch sizes and durations; lease rescues; database pool figures; Go runtime and process figures.
         */
        get: operations["metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/discard": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Discard a waiting job (available, scheduled or retryable) at once; a running or finished job is left alone. */
        post: operations["discardJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/result": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A job's state and the result its worker set. */
        get: operations["getJobResult"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/workflow": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The workflow a job belongs to, as a graph: its jobs (found by following dependencies both ways, parents, dependants and theirs, as long as the jobs are kept) with their states and results, and the edges between them. At most 500 jobs, those nearest the job asked about (truncated then true). */
        get: operations["getJobWorkflow"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/batches": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Batches with their progress, newest first, a page at a time (keyset: pass next_before as before). Each batch's counts are read as GET /v1/batches/{id} reads them. */
        get: operations["listBatches"];
        put?: never;
        /** Enqueue jobs as one batch, all or none, with an optional callback job that becomes available once every member has ended. */
        post: operations["insertBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workflows": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Enqueue a workflow in one request, all or none: steps that wait for other steps of the same request (after, by ref) or for stored jobs (depends_on). The steps may come in any order; they are stored through the same path as Go's Client.InsertWorkflow. */
        post: operations["insertWorkflow"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/batches/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A batch's progress, read from its counters (the same cost for any size). */
        get: operations["getBatch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/batches/{id}/results": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The ended members of a batch with their results, in id order, a page at a time. */
        get: operations["getBatchResults"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every queue with stored settings or waiting or running jobs, by name, with its settings. */
        get: operations["listQueues"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One queue's stored settings (a queue without any is unpaused and unlimited). */
        get: operations["getQueue"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{name}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pause a queue across the fleet, or with ?kind= one kind within it: no worker starts its jobs (of the kind) until it is resumed; running jobs finish, enqueues still succeed. Each process sees the pause within a second. */
        post: operations["pauseQueue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{name}/resume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Resume a paused queue, or with ?kind= a kind paused within it: its workers start its jobs (of the kind) again. */
        post: operations["resumeQueue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/periodic": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the periodic (cron) jobs, stored and Go-configured, by name, with their next and last run. A token restricted to queues sees those of its queues. */
        get: operations["listPeriodic"];
        put?: never;
        /** Store a periodic job; the leader inserts its jobs from its next tick (at once in the server's process, within the reload interval in others). */
        post: operations["createPeriodic"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/periodic/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One periodic job. */
        get: operations["getPeriodic"];
        /** Replace the schedule, job and options of a stored periodic job, keeping whether it is paused. A Go-configured one changes in its Go config (409). */
        put: operations["updatePeriodic"];
        post?: never;
        /** Delete a periodic job; jobs it inserted stay. A Go-configured one is registered again by the next leader that has it. */
        delete: operations["deletePeriodic"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/periodic/{name}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pause a periodic job, stored or Go-configured: it inserts nothing until resumed. Stored, so it holds across leaders and deploys. */
        post: operations["pausePeriodic"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/periodic/{name}/resume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Resume a paused periodic job from its next tick; ticks missed while paused are not caught up. */
        post: operations["resumePeriodic"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/periodic/{name}/trigger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Insert one job of a periodic job now, outside its schedule, paused or not. Its metadata names the periodic job with "triggered": true; it counts as the last run. */
        post: operations["triggerPeriodic"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/bulk": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Retry, cancel, discard or delete every job of a filter, in the background; read its progress from /v1/bulk/{id}. */
        post: operations["startBulk"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/bulk-selection": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Retry, cancel, discard or delete the jobs a list of IDs names (the dashboard's selected rows), in the background; read its progress from /v1/bulk/{id}. */
        post: operations["startBulkSelection"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/bulk/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The progress of a bulk task: jobs read, jobs changed, and whether it is done. */
        get: operations["getBulk"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the topics with their subscriptions. */
        get: operations["listTopics"];
        put?: never;
        /** Create a topic; an identical one of that name is answered as it is, one with other options is a conflict (a topic's lanes and retention are fixed at creation). */
        post: operations["createTopic"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A topic: its options and its subscriptions. */
        get: operations["getTopic"];
        put?: never;
        post?: never;
        /** Delete a topic with its subscriptions, their positions and every message of the topic, at once. Jobs of its retry queue stay. */
        delete: operations["deleteTopic"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/publish": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Publish messages to a topic: every subscription of it receives each once. */
        post: operations["publish"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Publish messages of several topics, each naming its own, in one statement: every subscription of a message's topic receives it once. */
        post: operations["publishMany"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/lag": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** How far each subscription of a topic is behind. */
        get: operations["topicLag"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a topic's messages without consuming them: the newest, those published since a cursor, or the page before an older cursor.
         * @description Nothing records the read: no subscription moves and no lane is held. Pages go by each lane's position (keyset), never by an offset, so a page far back costs what the first does.
         */
        get: operations["peekTopic"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/subscriptions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a subscription of a topic; an existing one keeps its position and settings. */
        post: operations["createSubscription"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/subscriptions/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a subscription and its position. */
        delete: operations["deleteSubscription"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/subscriptions/{name}/receive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Receive batches of a subscription (each one lane's messages, in order), long-polling up to wait_ms when none is waiting.
         * @description A consumer gets at most its fair share of the subscription's lanes: the lanes divided by the consumers (worker IDs) holding some or waiting for some. The batches of one response hold at most the server's byte budget of payload and metadata (4 MiB by default), each batch at least one message whatever its size: a batch may hold fewer messages than batch_size. A batch not acknowledged before its lease ends is delivered again, and that delivery counts as an attempt.
         */
        post: operations["receive"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/subscriptions/{name}/ack": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Acknowledge received batches; failed messages (by ID) become jobs of the topic's retry queue, retried for this subscription alone. */
        post: operations["ack"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/subscriptions/{name}/nack": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Fail whole received batches: every message becomes a retry job. */
        post: operations["nack"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/subscriptions/{name}/extend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Extend the leases of received batches.
         * @description A consumer still handling batches after a third of their lease extends them. false for a receipt means that its lease had ended and another consumer may hold the lane: stop handling that batch, its ack will be refused.
         */
        post: operations["extendBatches"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/subscriptions/{name}/release": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Hand received batches back at once (a consumer shutting down).
         * @description The lanes are free for other consumers at once, their cursors unmoved, and the deliveries do not count as attempts.
         */
        post: operations["releaseBatches"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/subscriptions/{name}/rewind": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deliver again: move a subscription back to the earliest message kept or to a publish time.
         * @description Give exactly one of earliest and since. Each lane goes back to just before its first such message, and its later messages follow in order, so each key's order holds; positions follow commit order, so a message published before since whose transaction committed after such a message's is delivered again too. Messages retention removed cannot be delivered again: oldest_pending says where the subscription starts. Every lease of the subscription ends: batches out are delivered again and their acks answer accepted false. Other subscriptions do not move.
         */
        post: operations["rewindSubscription"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/subscriptions/{name}/lanes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The lanes of a subscription: cursor, lag, holder and attempt.
         * @description Which consumer holds each lane, until when, and how many times the lane's next message has been delivered.
         */
        get: operations["subscriptionLanes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/topics/{topic}/subscriptions/{name}/lanes/{lane}/release": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Free a held lane: its lease ends now, as if it had expired.
         * @description For a lane whose holder hangs: another consumer takes the lane and delivers its batch again. The delivery counts as an attempt, so that a message that hangs every consumer goes dead; the old holder's extend answers false and its ack is refused.
         */
        post: operations["releaseLane"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/workers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The worker registry, by name: every Go client and HTTP worker that registered, with its type, labels, queues, last heartbeat, jobs held and whether it is live. */
        get: operations["listWorkers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/unroutable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Waiting routed jobs that no live worker can take, grouped by queue and routing (at most 1,000 groups). */
        get: operations["listUnroutable"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/shards": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A fleet's shards (several PostgreSQL databases given as one store), each with its address (no password), record (attached, draining), whether it answers, its last error, and its figures as of the server's last sample; a lone database lists none. */
        get: operations["listShards"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{name}/strict": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Put a queue in strict order (its jobs start strictly in priority then insert order across the fleet, at most max_running at once, a failed job keeping its place at the head) or take it out (max_running 0). Each process sees the change within a second. */
        post: operations["setStrictOrder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Error: {
            /** @description What is wrong, naming the field or parameter at fault. */
            error: string;
            status: number;
        };
        AttemptError: {
            attempt: number;
            /** Format: date-time */
            at: string;
            error: string;
            trace?: string;
            /** @description Set when the attempt was interrupted because its client stopped and the job was given back: it did not count against max_attempts, so the job's attempt went back to the number before it. */
            released?: boolean;
        };
        Job: {
            /** Format: int64 */
            id: number;
            /** @enum {string} */
            state: "pending" | "blocked" | "scheduled" | "available" | "retryable" | "running" | "completed" | "cancelled" | "discarded";
            queue: string;
            kind: string;
            priority: number;
            /** @description The job's arguments as enqueued (any JSON). */
            args: unknown;
            metadata?: Record<string, never>;
            tags: string[];
            /** @description Attempts started so far. A claimed job's attempt must be named in its heartbeats and result. */
            attempt: number;
            max_attempts: number;
            /** @description The last 20 attempt errors, oldest first; older ones are dropped (see error_count). */
            errors: components["schemas"]["AttemptError"][];
            /** @description How many attempt errors the job recorded in all, errors holding only the last 20. */
            error_count: number;
            /** Format: int64 */
            timeout_ms?: number;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            run_at: string;
            /** Format: date-time */
            attempted_at?: string;
            /** Format: date-time */
            finalized_at?: string;
            /** @description The worker holding the job while it runs. */
            lease_owner?: string;
            /**
             * Format: date-time
             * @description When the job returns to the queue unless a heartbeat extends the lease.
             */
            lease_expires_at?: string;
            cancel_requested: boolean;
            /**
             * Format: int64
             * @description The batch the job belongs to, or calls back for; absent for none.
             */
            batch_id?: number;
            /** @description The ordering key the job was inserted with; absent once the job finished (finished jobs do not keep it). */
            key?: string;
            lease_token?: components["schemas"]["LeaseToken"];
            routing?: components["schemas"]["Routing"];
            /** @description True for a waiting routed job that no live worker can take: none that works its queue matches its routing. */
            unroutable?: boolean;
        };
        /** @description The secret a claim returns with each job it hands out (only there: reads of a job never show it). Every heartbeat and result about that attempt must echo it to be applied: one without it, or with another, is treated like a stale attempt (lost, rejected) and changes nothing; one that is not 32 lower-case hex digits is a malformed request (400). */
        LeaseToken: string;
        EnqueueJob: {
            kind: string;
            /** @description The job's arguments: a JSON object (anything else is refused with 400), at most 1 MiB, at most 64 levels deep. */
            args: Record<string, never>;
            /**
             * @description The queue; empty or absent means "default".
             * @default default
             */
            queue: string;
            /**
             * @description Lower runs first.
             * @default 0
             */
            priority: number;
            /**
             * Format: date-time
             * @description Schedule the job; absent or past means now. An RFC 3339 time with a zone (2026-05-01T09:30:00Z); anything else is refused with 400 naming the field. Years 1970 to 9999.
             */
            run_at?: string;
            /** @description 0 or absent: the server's default (25). */
            max_attempts?: number;
            tags?: string[];
            /** @description Free-form JSON object (anything else is refused with 400), at most 64 KiB. */
            metadata?: Record<string, never>;
            /** Format: int64 */
            timeout_ms?: number;
            /** @description Stored jobs this one waits for: it stays pending until all of them completed (see docs/workflows.md). */
            depends_on?: number[];
            /** @description Ordering key, at most 255 bytes (UTF-8) without NUL: at most key_limit jobs of a key of the queue run at once, in insert order; the others wait as blocked (see docs/ordering-and-limits.md). */
            key?: string;
            /** @description How many jobs of key may be active at once; 0 or absent: 1. */
            key_limit?: number;
            /** @description At most key_rate jobs of key start per key_rate_period_ms, cluster-wide (a token bucket; see docs/ordering-and-limits.md); 0 or absent: no rate set by this job. */
            key_rate?: number;
            /**
             * Format: int64
             * @description The period of key_rate, in milliseconds; required with key_rate.
             */
            key_rate_period_ms?: number;
            /** @description Skip the insert, without failing, while a job of the same kind (and queue, with unique_by_queue) holds this key (see unique_states); a skipped job's id is 0. */
            unique_key?: string;
            /** @description With unique_key: hold the key per queue as well as per kind, so that jobs of one kind in two queues do not conflict. */
            unique_by_queue?: boolean;
            /** @description With unique_key: the states in which a job holds its key. Absent: the unfinished states, so the key is free once the job finishes. Must list every unfinished state (pending, blocked, scheduled, available, retryable, running); adding completed, cancelled or discarded keeps the key held by a job that ended so until it is pruned (see docs/unique-and-cron.md). */
            unique_states?: ("pending" | "blocked" | "scheduled" | "available" | "retryable" | "running" | "completed" | "cancelled" | "discarded")[];
            /** @description Route the job to workers of this type (see docs/routing.md). */
            worker_type?: string;
            /** @description Route the job to one of these workers (their worker_name, or Go clients' Config.Worker.Name). */
            worker_names?: string[];
            /** @description Route the job to workers with every one of these labels. Labels: at most 32, keys of 1-63 letters, digits, '_', '.', '/' or '-' starting with a letter or digit, values of at most 255 bytes. */
            worker_labels?: {
                [key: string]: string;
            };
            /**
             * @description With worker_names: what happens when none of them has been seen for worker_absent_after_ms while the job waited that long: wait (default, reported as unroutable), fallback to any worker of worker_type (required then), or fail (discarded with an error).
             * @enum {string}
             */
            on_worker_absent?: "" | "wait" | "fallback" | "fail";
            /**
             * Format: int64
             * @description With on_worker_absent: how long; 0 or absent: 300000 (5 minutes).
             */
            worker_absent_after_ms?: number;
        } & (({
            /** @enum {unknown} */
            unique_by_queue?: false;
        } | {
            unique_key: unknown;
        }) & ({
            key_limit?: unknown;
        } | {
            key: unknown;
        }) & (unknown | {
            depends_on?: unknown;
        }) & (unknown | unknown) & ({
            key_rate?: unknown;
            key_rate_period_ms?: unknown;
        } | {
            key: unknown;
            key_rate: unknown;
            key_rate_period_ms: unknown;
        }));
        AttemptResult: {
            /** Format: int64 */
            id: number;
            /** @description The attempt the job was claimed with. */
            attempt: number;
            lease_token?: components["schemas"]["LeaseToken"];
            /**
             * @description snoozed puts the job back to wait until retry_at (or snooze_ms from now; one of them is required) without using an attempt: the next claim gets the same attempt number, and no error is recorded.
             * @enum {string}
             */
            outcome: "completed" | "failed" | "cancelled" | "snoozed";
            /**
             * @deprecated
             * @description Ignored; accepted for compatibility. A failed attempt retries with backoff, or discards the job when it was the last its stored max_attempts allows: the server decides, not the worker.
             */
            max_attempts?: number;
            error?: string;
            trace?: string;
            /**
             * Format: date-time
             * @description When a failed job runs again (default: the server's backoff), or when a snoozed one does: an RFC 3339 time with a zone.
             */
            retry_at?: string;
            /**
             * Format: int64
             * @description Only with outcome snoozed and without retry_at: the job waits this long from now.
             */
            snooze_ms?: number;
            /** @description Any JSON, at most 65536 bytes, stored as the job's result; only with outcome completed. */
            result?: unknown;
        } & ({
            /** @enum {unknown} */
            outcome?: "completed";
        } | unknown);
        AttemptRef: {
            /** Format: int64 */
            id: number;
            attempt: number;
            lease_token?: components["schemas"]["LeaseToken"];
        };
        IDList: number[];
        Readiness: {
            ready: boolean;
            checks: {
                [key: string]: string;
            };
        };
        JobResult: {
            /** Format: int64 */
            id: number;
            /** @enum {string} */
            state: "pending" | "blocked" | "scheduled" | "available" | "retryable" | "running" | "completed" | "cancelled" | "discarded";
            kind: string;
            /** @description What the worker set as the result; null unless the job completed with one. */
            result: unknown;
        };
        /** @description One job of a workflow's graph with its result. */
        WorkflowJob: {
            /** Format: int64 */
            id: number;
            /** @enum {string} */
            state: "pending" | "blocked" | "scheduled" | "available" | "retryable" | "running" | "completed" | "cancelled" | "discarded";
            kind: string;
            /** @description What the worker set as the result; null unless the job completed with one. */
            result: unknown;
            /** @description The result was left out (result is null) to keep the answer within the server's byte budget (8 MiB by default); read it with GET /v1/jobs/{id}/result. Absent when the result is in the answer. */
            result_omitted?: boolean;
        };
        Batch: {
            /** Format: int64 */
            id: number;
            /** Format: int64 */
            total: number;
            /** @description Every member is counted in exactly one state. pending: waiting to run (available, scheduled, pending on parents or blocked behind its key); failed: failed an attempt and waits for its retry. */
            counts: {
                /** Format: int64 */
                pending: number;
                /** Format: int64 */
                running: number;
                /** Format: int64 */
                failed: number;
                /** Format: int64 */
                completed: number;
                /** Format: int64 */
                cancelled: number;
                /** Format: int64 */
                discarded: number;
            };
            /**
             * Format: int64
             * @description The callback job, absent without one.
             */
            callback_job_id?: number;
            /** Format: date-time */
            created_at: string;
            /**
             * Format: date-time
             * @description When the last member ended; null until then.
             */
            finished_at: string | null;
        };
        /** @description A claimed job: the job as GET /v1/jobs/{id} shows it, with its lease_token, and for a job inserted to wait for other jobs (depends_on, or a workflow step after other steps) the IDs of those jobs and their results, as a Go handler reads them with Job.ParentResults. Both are absent for a job that depends on none. */
        ClaimedJob: {
            /** Format: int64 */
            id: number;
            /** @enum {string} */
            state: "pending" | "blocked" | "scheduled" | "available" | "retryable" | "running" | "completed" | "cancelled" | "discarded";
            queue: string;
            kind: string;
            priority: number;
            /** @description The job's arguments as enqueued (any JSON). */
            args: unknown;
            metadata?: Record<string, never>;
            tags: string[];
            /** @description Attempts started so far. A claimed job's attempt must be named in its heartbeats and result. */
            attempt: number;
            max_attempts: number;
            /** @description The last 20 attempt errors, oldest first; older ones are dropped (see error_count). */
            errors: components["schemas"]["AttemptError"][];
            /** @description How many attempt errors the job recorded in all, errors holding only the last 20. */
            error_count: number;
            /** Format: int64 */
            timeout_ms?: number;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            run_at: string;
            /** Format: date-time */
            attempted_at?: string;
            /** Format: date-time */
            finalized_at?: string;
            /** @description The worker holding the job while it runs. */
            lease_owner?: string;
            /**
             * Format: date-time
             * @description When the job returns to the queue unless a heartbeat extends the lease.
             */
            lease_expires_at?: string;
            cancel_requested: boolean;
            /**
             * Format: int64
             * @description The batch the job belongs to, or calls back for; absent for none.
             */
            batch_id?: number;
            /** @description The ordering key the job was inserted with; absent once the job finished (finished jobs do not keep it). */
            key?: string;
            lease_token?: components["schemas"]["LeaseToken"];
            /** @description The IDs of the jobs this one waited for, in ID order. */
            depends_on?: number[];
            /** @description The state and result of each job in depends_on, in the same order; result is null unless the parent completed with one. */
            parent_results?: components["schemas"]["JobResult"][];
        };
        /** @description A step of a workflow request: a job (as in POST /v1/jobs, but never a unique one), the ref other steps of the request name it by, and the steps it runs after. */
        WorkflowStep: {
            kind: string;
            /** @description The job's arguments: a JSON object (anything else is refused with 400), at most 1 MiB, at most 64 levels deep. */
            args: Record<string, never>;
            /**
             * @description The queue; empty or absent means "default".
             * @default default
             */
            queue: string;
            /**
             * @description Lower runs first.
             * @default 0
             */
            priority: number;
            /**
             * Format: date-time
             * @description Schedule the job; absent or past means now. An RFC 3339 time with a zone (2026-05-01T09:30:00Z); anything else is refused with 400 naming the field. Years 1970 to 9999.
             */
            run_at?: string;
            /** @description 0 or absent: the server's default (25). */
            max_attempts?: number;
            tags?: string[];
            /** @description Free-form JSON object (anything else is refused with 400), at most 64 KiB. */
            metadata?: Record<string, never>;
            /** Format: int64 */
            timeout_ms?: number;
            /** @description Stored jobs this one waits for: it stays pending until all of them completed (see docs/workflows.md). */
            depends_on?: number[];
            /** @description Ordering key, at most 255 bytes (UTF-8) without NUL: at most key_limit jobs of a key of the queue run at once, in insert order; the others wait as blocked (see docs/ordering-and-limits.md). */
            key?: string;
            /** @description How many jobs of key may be active at once; 0 or absent: 1. */
            key_limit?: number;
            /** @description At most key_rate jobs of key start per key_rate_period_ms, cluster-wide (a token bucket; see docs/ordering-and-limits.md); 0 or absent: no rate set by this job. */
            key_rate?: number;
            /**
             * Format: int64
             * @description The period of key_rate, in milliseconds; required with key_rate.
             */
            key_rate_period_ms?: number;
            /** @description Skip the insert, without failing, while a job of the same kind (and queue, with unique_by_queue) holds this key (see unique_states); a skipped job's id is 0. */
            unique_key?: string;
            /** @description With unique_key: hold the key per queue as well as per kind, so that jobs of one kind in two queues do not conflict. */
            unique_by_queue?: boolean;
            /** @description With unique_key: the states in which a job holds its key. Absent: the unfinished states, so the key is free once the job finishes. Must list every unfinished state (pending, blocked, scheduled, available, retryable, running); adding completed, cancelled or discarded keeps the key held by a job that ended so until it is pruned (see docs/unique-and-cron.md). */
            unique_states?: ("pending" | "blocked" | "scheduled" | "available" | "retryable" | "running" | "completed" | "cancelled" | "discarded")[];
            /** @description The step's name for the after lists of other steps of the same request; unique within the request. Echoed with the step's id in refs. An empty ref is the same as none. */
            ref?: string;
            /** @description Refs of steps of the same request this one waits for: it stays pending until all of them completed (and depends_on's stored jobs too). A cycle is refused with 400. */
            after?: string[];
            /**
             * @description Run the step when a job it waits for is cancelled or discarded, instead of cancelling it with it.
             * @default false
             */
            release_on_parent_failure: boolean;
            /** @description Route the job to workers of this type (see docs/routing.md). */
            worker_type?: string;
            /** @description Route the job to one of these workers (their worker_name, or Go clients' Config.Worker.Name). */
            worker_names?: string[];
            /** @description Route the job to workers with every one of these labels. Labels: at most 32, keys of 1-63 letters, digits, '_', '.', '/' or '-' starting with a letter or digit, values of at most 255 bytes. */
            worker_labels?: {
                [key: string]: string;
            };
            /**
             * @description With worker_names: what happens when none of them has been seen for worker_absent_after_ms while the job waited that long: wait (default, reported as unroutable), fallback to any worker of worker_type (required then), or fail (discarded with an error).
             * @enum {string}
             */
            on_worker_absent?: "" | "wait" | "fallback" | "fail";
            /**
             * Format: int64
             * @description With on_worker_absent: how long; 0 or absent: 300000 (5 minutes).
             */
            worker_absent_after_ms?: number;
        } & (({
            /** @enum {unknown} */
            unique_by_queue?: false;
        } | {
            unique_key: unknown;
        }) & ({
            key_limit?: unknown;
        } | {
            key: unknown;
        }) & (unknown | {
            depends_on?: unknown;
        }) & (unknown | unknown) & ({
            key_rate?: unknown;
            key_rate_period_ms?: unknown;
        } | {
            key: unknown;
            key_rate: unknown;
            key_rate_period_ms: unknown;
        }) & unknown);
        /** @description A queue's settings stored in the database, which every claim applies, by Go clients and HTTP workers alike. */
        Queue: {
            name: string;
            /** @description A paused queue starts no job: claims take nothing; running jobs finish and enqueues still succeed. */
            paused: boolean;
            /** @description Kinds paused within the queue, sorted: claims leave their jobs waiting while the queue's other kinds run; running jobs finish and enqueues still succeed. */
            paused_kinds: string[];
            /** @description Cap on the queue's jobs running at once across every worker; 0 for none. */
            global_max_workers: number;
            /** @description Jobs that may start per rate period across every worker; 0 for no limit. */
            rate_limit: number;
            /** Format: int64 */
            rate_period_ms: number;
            /**
             * Format: date-time
             * @description When the settings were last written; null for a queue without stored settings.
             */
            updated_at: string | null;
            /** @description Strict order: at most this many of the queue's jobs run at once, started strictly in priority then insert order across the fleet; 0 when off. */
            strict_order: number;
        };
        /** @description A periodic job to store: at each tick of schedule the leader inserts a job of kind with args and the options given (queue, priority, max_attempts, tags), keyed by its tick so that a leader change never inserts one tick twice. */
        PeriodicDefinition: {
            /** @description Unique among stored and Go-configured periodic jobs. */
            name: string;
            /** @description A standard five-field cron expression ("*\/5 * * * *"), optionally prefixed with CRON_TZ=Zone, or a descriptor ("@hourly", "@daily", "@every 90s"), as github.com/robfig/cron/v3 parses them; one that does not parse or never fires is refused with 400. An @every interval must be a whole number of seconds, at least 1 s (400 otherwise). */
            schedule: string;
            kind: string;
            /** @description The args of each job: a JSON object, at most 1 MiB; absent: {}. */
            args?: Record<string, never>;
            /**
             * @description The queue of each job; empty or absent: default.
             * @default default
             */
            queue: string;
            /**
             * @description Lower runs first.
             * @default 0
             */
            priority: number;
            /** @description 0 or absent: the server's default (25). */
            max_attempts?: number;
            tags?: string[];
        };
        /** @description The new definition of a stored periodic job; name, if given, must be the path's. */
        PeriodicUpdate: {
            name?: string;
            /** @description A standard five-field cron expression ("*\/5 * * * *"), optionally prefixed with CRON_TZ=Zone, or a descriptor ("@hourly", "@daily", "@every 90s"), as github.com/robfig/cron/v3 parses them; one that does not parse or never fires is refused with 400. An @every interval must be a whole number of seconds, at least 1 s (400 otherwise). */
            schedule: string;
            kind: string;
            /** @description The args of each job: a JSON object, at most 1 MiB; absent: {}. */
            args?: Record<string, never>;
            /**
             * @description The queue of each job; empty or absent: default.
             * @default default
             */
            queue: string;
            /**
             * @description Lower runs first.
             * @default 0
             */
            priority: number;
            /** @description 0 or absent: the server's default (25). */
            max_attempts?: number;
            tags?: string[];
        };
        /** @description A periodic job as listed: a stored definition (source api) or a Go entry of Config.PeriodicJobs that its leader registered (source config; its kind, args and options are those its Construct returned then). */
        PeriodicJob: {
            name: string;
            schedule: string;
            kind: string;
            args: Record<string, never>;
            queue: string;
            /**
             * @description Lower runs first.
             * @default 0
             */
            priority: number;
            /** @description 0 or absent: the server's default (25). */
            max_attempts: number;
            tags: string[];
            /** @enum {string} */
            source: "api" | "config";
            /** @description A paused periodic job inserts nothing until resumed. */
            paused: boolean;
            /**
             * Format: date-time
             * @description The schedule's next tick; null while paused.
             */
            next_run_at: string | null;
            /**
             * Format: date-time
             * @description The tick of the last job inserted for it (by the schedule or a trigger); null before the first.
             */
            last_run_at: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
        };
        BulkTask: {
            /** Format: int64 */
            id: number;
            /** @enum {string} */
            action: "retry" | "cancel" | "discard" | "delete";
            queue?: string;
            kind?: string;
            state?: string;
            /** @description How many job IDs a task started by /v1/bulk-selection was given; absent for a task over a filter. */
            selected?: number;
            /**
             * @description interrupted: the action stopped before it ended (the server running it stopped, or died and stopped writing its progress), having changed what changed counts. Tasks are stored, so any server on the store answers, after a restart too.
             * @enum {string}
             */
            status: "running" | "done" | "failed" | "interrupted";
            /**
             * Format: int64
             * @description Jobs of the filter (or IDs of the list) read so far.
             */
            matched: number;
            /**
             * Format: int64
             * @description Jobs the action changed so far: retried, cancelled (or asked to stop, if running), discarded or deleted; jobs it left as they were are not counted.
             */
            changed: number;
            error?: string;
            /** Format: date-time */
            started_at: string;
        };
        Topic: {
            name: string;
            lanes: number;
            /**
             * Format: int64
             * @description 0: messages are kept until every subscription passed them.
             */
            retention_ms: number;
            /** Format: date-time */
            created_at: string;
            subscriptions: string[];
        };
        /** @description A delivered message. Its payload comes once: as JSON in payload when it is valid JSON, else in base64 in payload_base64 (an empty payload is payload_base64 ""). */
        Delivery: {
            /** Format: int64 */
            id: number;
            key?: string;
            /** @description The payload, when it is valid JSON (absent otherwise). */
            payload?: unknown;
            /**
             * Format: byte
             * @description The payload's bytes, when they are not valid JSON (absent otherwise).
             */
            payload_base64?: string;
            metadata?: Record<string, never>;
            /** Format: date-time */
            published_at: string;
            /** @description How many times this message has been delivered to this subscription, this delivery and expired leases included. Past the subscription's max_attempts the message is dead: a discarded job of the topic's retry queue. */
            attempt: number;
        };
        ReceivedBatch: {
            /** @description Acknowledges (ack, nack), extends or releases the batch. It holds the lane's lease token and is authenticated by the server: a receipt that was altered, or is sent for another subscription, is refused with a 400. */
            receipt: string;
            /**
             * Format: int64
             * @description Messages of the lane retention removed before the subscription read them.
             */
            dropped: number;
            messages: components["schemas"]["Delivery"][];
        };
        AckResult: {
            /** @description Per receipt, in order: false when the batch's lease had ended (it is delivered again). */
            accepted: boolean[];
        };
        SubscriptionLane: {
            lane: number;
            /**
             * Format: int64
             * @description ID of the last message the lane acknowledged, 0 when none.
             */
            cursor: number;
            /**
             * Format: int64
             * @description Messages past the cursor.
             */
            lag: number;
            /** @description The worker holding the lane's live lease; absent when the lane is free. */
            holder?: string;
            /**
             * Format: date-time
             * @description When the holder's lease ends; absent when the lane is free.
             */
            lease_expires_at?: string;
            /** @description Deliveries of the lane's next message so far: above 1 while the lane delivers, one message at a time, a batch whose lease expired. */
            attempt: number;
        };
        WorkflowGraph: {
            /** @description The workflow's jobs, the one asked about first. Every job and edge is answered; results go in while the answer stays within the server's byte budget (8 MiB by default), and the others are marked result_omitted. */
            jobs: components["schemas"]["WorkflowJob"][];
            edges: {
                /** Format: int64 */
                parent: number;
                /**
                 * Format: int64
                 * @description Waits for parent.
                 */
                child: number;
            }[];
            /** @description The workflow has more than 500 jobs; jobs and edges are those nearest the job asked about. */
            truncated: boolean;
        };
        /** @description Where a routed job may run (see docs/routing.md): a worker that matches every field set. Absent on plain jobs, which any worker may run. */
        Routing: {
            /** @description The type of worker that may run the job. */
            worker_type?: string;
            /** @description The workers that may run the job; any one of them. */
            worker_names?: string[];
            /** @description Labels the worker must have, with these values. */
            worker_labels?: {
                [key: string]: string;
            };
            /**
             * @description What happens when none of worker_names has been seen for worker_absent_after_ms: wait, fall back to any worker of worker_type, or fail the job.
             * @enum {string}
             */
            on_worker_absent?: "wait" | "fallback" | "fail";
            /** Format: int64 */
            worker_absent_after_ms?: number;
            /** @description The names the job was aimed at before it fell back to its worker type. */
            fell_back_from?: string[];
        };
        /** @description A worker of the registry: a Go client (registered at each heartbeat) or an HTTP worker (registered when it claims). */
        Worker: {
            name: string;
            /** @description It said nothing of itself: it takes plain jobs only. */
            plain: boolean;
            type: string;
            labels: {
                [key: string]: string;
            };
            queues: string[];
            /** @description The kinds it runs, sorted: a Go client's registered kinds, those an HTTP worker names in its claims (kinds); null for an HTTP worker that named none, which claims every kind. */
            kinds: string[] | null;
            /** @description The lease owner of the jobs it holds. */
            owner: string;
            /** @enum {string} */
            source: "go" | "http";
            /** Format: date-time */
            started_at: string;
            /**
             * Format: date-time
             * @description Its last heartbeat (Go) or registered claim (HTTP).
             */
            last_seen: string;
            /** Format: int64 */
            jobs_held: number;
            /** @description Seen within the last minute, or holding a lease that has not expired. */
            live: boolean;
        };
        /** @description Waiting jobs of a queue and kind, with the same routing, that no live worker can take: none that works the queue matches their routing and runs their kind. A group without routing is of plain jobs, left waiting because every live worker of the queue named the kinds it runs and none named theirs; such a group is found, and counted, among the first 1,000 waiting jobs of its queue in claim order. */
        UnroutableJobs: {
            queue: string;
            kind: string;
            /** @description null for plain jobs. */
            routing: components["schemas"]["Routing"] | null;
            /** Format: int64 */
            jobs: number;
            /** Format: date-time */
            oldest_run_at: string;
            /** Format: int64 */
            first_id: number;
        };
        /** @description A message read by a peek, which consumes nothing. Its payload comes once, as a delivery's: as JSON in payload when it is valid JSON, else in base64 in payload_base64. */
        PeekedMessage: {
            /** Format: int64 */
            id: number;
            lane: number;
            key?: string;
            /** @description The payload, when it is valid JSON (absent otherwise). */
            payload?: unknown;
            /**
             * Format: byte
             * @description The payload's bytes, when they are not valid JSON (absent otherwise).
             */
            payload_base64?: string;
            metadata?: Record<string, never>;
            /** Format: date-time */
            published_at: string;
        };
        /** @description What a rewind did. */
        SubscriptionRewind: {
            /** @description Lanes moved back; a lane already at or before the point stays where it is (a rewind never skips a message). */
            lanes: number;
            /** @description Batches that were out on the subscription: their acks are refused from now on and their messages are delivered again. */
            released: number;
            /** @description Messages the subscription has to deliver after the rewind. */
            pending: number;
            /**
             * Format: date-time
             * @description When the oldest of them was published: later than since when retention removed the messages published between them, or none was published then; null when none is pending.
             */
            oldest_pending: string | null;
        };
        /** @description One shard of a fleet as the server last saw it. Figures of jobs are the whole store's (whichever process ran them); claims are this server's, for its HTTP workers. */
        Shard: {
            /** @description Its place: shard i's job IDs start at i × 2^48. */
            index: number;
            /** @description Its database URL without the password. */
            address?: string;
            /** @description The fleet's name, from the shard's record. */
            fleet?: string;
            /** @description Its record says it belongs to the fleet (drover migrate attaches it). */
            attached: boolean;
            /** @description It takes no new placements but those its keys and pinned queues need. */
            draining: boolean;
            /** @description Keys, unique keys, pinned queues and topics hash over the key shards, so it cannot be emptied. */
            key_shard: boolean;
            /** @description It answered the last call; false from a call that found it unreachable to the next it answered. */
            up: boolean;
            /** @description Why it is down now. */
            error?: string;
            /** @description The last error that made it unreachable, kept once it answers again. */
            last_error?: string;
            /** Format: date-time */
            last_error_at?: string;
            /** @description How long the last read of its record took. */
            round_trip_ms?: number;
            /** @description Its jobs waiting and running per state; absent when it did not answer the last sample. */
            jobs?: {
                /** Format: int64 */
                available: number;
                /** Format: int64 */
                scheduled: number;
                /** Format: int64 */
                retryable: number;
                /** Format: int64 */
                running: number;
            };
            /** @description Its jobs completed per second in the last sample's window; absent when it did not answer. */
            completed_per_sec?: number;
            /** @description Its jobs this server claimed per second since the previous sample. */
            claimed_per_sec: number;
            /**
             * Format: int64
             * @description Its jobs this server claimed since it started.
             */
            claimed_jobs: number;
            /**
             * Format: int64
             * @description Claim statements of this server on it that failed.
             */
            claim_errors: number;
        };
        /** @description A claimed job in a compact claim answer: its id, its arrays and objects (args, tags, errors, and metadata, depends_on and parent_results when it has them), and the scalar fields of ClaimedJob whose values are not the same in every job of the answer (those are in shared). A field absent from both is absent from the job, as in the full form. */
        ClaimedJobEntry: {
            /** Format: int64 */
            id: number;
            /** @enum {string} */
            state?: "pending" | "blocked" | "scheduled" | "available" | "retryable" | "running" | "completed" | "cancelled" | "discarded";
            queue?: string;
            kind?: string;
            priority?: number;
            /** @description The job's arguments as enqueued (any JSON). */
            args: unknown;
            metadata?: Record<string, never>;
            tags: string[];
            /** @description Attempts started so far. A claimed job's attempt must be named in its heartbeats and result. */
            attempt?: number;
            max_attempts?: number;
            /** @description The last 20 attempt errors, oldest first; older ones are dropped (see error_count). */
            errors: components["schemas"]["AttemptError"][];
            /** @description How many attempt errors the job recorded in all, errors holding only the last 20. */
            error_count?: number;
            /** Format: int64 */
            timeout_ms?: number;
            /** Format: date-time */
            created_at?: string;
            /** Format: date-time */
            run_at?: string;
            /** Format: date-time */
            attempted_at?: string;
            /** Format: date-time */
            finalized_at?: string;
            /** @description The worker holding the job while it runs. */
            lease_owner?: string;
            /**
             * Format: date-time
             * @description When the job returns to the queue unless a heartbeat extends the lease.
             */
            lease_expires_at?: string;
            cancel_requested?: boolean;
            /**
             * Format: int64
             * @description The batch the job belongs to, or calls back for; absent for none.
             */
            batch_id?: number;
            /** @description The ordering key the job was inserted with; absent once the job finished (finished jobs do not keep it). */
            key?: string;
            lease_token?: components["schemas"]["LeaseToken"];
            /** @description The IDs of the jobs this one waited for, in ID order. */
            depends_on?: number[];
            /** @description The state and result of each job in depends_on, in the same order; result is null unless the parent completed with one. */
            parent_results?: components["schemas"]["JobResult"][];
        };
        /** @description The scalar fields of ClaimedJob (strings, numbers, booleans, times) that every job of a compact claim answer has, with the same value (typically state, queue, attempt, lease_owner, lease_token, lease_expires_at, attempted_at, and kind and max_attempts when the jobs share them): sent once instead of in every job. A field some job lacks, or whose value differs between jobs, is not here but in each job that has it; id never is, nor are arrays and objects (args, metadata, tags, errors, depends_on, parent_results), which each job carries, so that no two jobs share one value a handler might change. Empty when no job was claimed. */
        ClaimShared: {
            /** @enum {string} */
            state?: "pending" | "blocked" | "scheduled" | "available" | "retryable" | "running" | "completed" | "cancelled" | "discarded";
            queue?: string;
            kind?: string;
            priority?: number;
            /** @description Attempts started so far. A claimed job's attempt must be named in its heartbeats and result. */
            attempt?: number;
            max_attempts?: number;
            /** @description How many attempt errors the job recorded in all, errors holding only the last 20. */
            error_count?: number;
            /** Format: int64 */
            timeout_ms?: number;
            /** Format: date-time */
            created_at?: string;
            /** Format: date-time */
            run_at?: string;
            /** Format: date-time */
            attempted_at?: string;
            /** Format: date-time */
            finalized_at?: string;
            /** @description The worker holding the job while it runs. */
            lease_owner?: string;
            /**
             * Format: date-time
             * @description When the job returns to the queue unless a heartbeat extends the lease.
             */
            lease_expires_at?: string;
            cancel_requested?: boolean;
            /**
             * Format: int64
             * @description The batch the job belongs to, or calls back for; absent for none.
             */
            batch_id?: number;
            /** @description The ordering key the job was inserted with; absent once the job finished (finished jobs do not keep it). */
            key?: string;
            lease_token?: components["schemas"]["LeaseToken"];
        };
        /** @description A result in a compact finish request: AttemptResult, where attempt, lease_token and outcome may be left out and taken from the request's shared (a value given here wins over shared's). */
        AttemptResultEntry: {
            /** Format: int64 */
            id: number;
            /** @description The attempt the job was claimed with. */
            attempt?: number;
            lease_token?: components["schemas"]["LeaseToken"];
            /**
             * @description snoozed puts the job back to wait until retry_at (or snooze_ms from now; one of them is required) without using an attempt: the next claim gets the same attempt number, and no error is recorded.
             * @enum {string}
             */
            outcome?: "completed" | "failed" | "cancelled" | "snoozed";
            /**
             * @deprecated
             * @description Ignored; accepted for compatibility. A failed attempt retries with backoff, or discards the job when it was the last its stored max_attempts allows: the server decides, not the worker.
             */
            max_attempts?: number;
            error?: string;
            trace?: string;
            /**
             * Format: date-time
             * @description When a failed job runs again (default: the server's backoff), or when a snoozed one does: an RFC 3339 time with a zone.
             */
            retry_at?: string;
            /**
             * Format: int64
             * @description Only with outcome snoozed and without retry_at: the job waits this long from now.
             */
            snooze_ms?: number;
            /** @description Any JSON, at most 65536 bytes, stored as the job's result; only with outcome completed. */
            result?: unknown;
        } & ({
            /** @enum {unknown} */
            outcome?: "completed";
        } | unknown);
        /** @description What the results of a compact finish request have in common, sent once: each result that lacks attempt, lease_token or outcome takes the value here. A result that has neither its own attempt and outcome nor shared's is refused like a full-form result without them. */
        FinishShared: {
            /** @description The attempt the job was claimed with. */
            attempt?: number;
            lease_token?: components["schemas"]["LeaseToken"];
            /**
             * @description snoozed puts the job back to wait until retry_at (or snooze_ms from now; one of them is required) without using an attempt: the next claim gets the same attempt number, and no error is recorded.
             * @enum {string}
             */
            outcome?: "completed" | "failed" | "cancelled" | "snoozed";
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Up. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok";
                    };
                };
            };
        };
    };
    readyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Readiness"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Not ready; checks say why. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Readiness"];
                };
            };
        };
    };
    openapi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI document. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listJobs: {
        parameters: {
            query?: {
                /** @description Comma-separated states: pending, blocked, scheduled, available, retryable, running, completed, cancelled, discarded */
                state?: string;
                queue?: string;
                kind?: string;
                /** @description Comma-separated tags: jobs carrying every one of them. */
                tags?: string;
                /** @description A JSON object that the job's args must contain, as PostgreSQL's jsonb @> defines it on both stores: {"to":"a@example.com"} matches args with that key and value among others; nested objects match likewise; an array matches an array holding at least its elements; numbers compare by value. */
                args?: string;
                /** @description A JSON object that the job's metadata must contain, as for args. */
                metadata?: string;
                /** @description Only jobs where the job was created at or after this time (RFC 3339). */
                created_since?: string;
                /** @description Only jobs where the job was created before this time (RFC 3339). */
                created_until?: string;
                /** @description Only jobs where the job was (or is) due to run (run_at) at or after this time (RFC 3339). */
                scheduled_since?: string;
                /** @description Only jobs where the job was (or is) due to run (run_at) before this time (RFC 3339). */
                scheduled_until?: string;
                /** @description Only jobs where its last attempt started at or after this time (RFC 3339). */
                attempted_since?: string;
                /** @description Only jobs where its last attempt started before this time (RFC 3339). */
                attempted_until?: string;
                /** @description Only jobs where it finished (completed, cancelled or discarded) at or after this time (RFC 3339). */
                finished_since?: string;
                /** @description Only jobs where it finished (completed, cancelled or discarded) before this time (RFC 3339). */
                finished_until?: string;
                /** @description asc: oldest (lowest id) first; desc: newest first. */
                order?: "asc" | "desc";
                /** @description Also answer how many jobs match the filter (count). */
                count?: boolean;
                /** @description The cursor: the next_after of the previous page (ids after it in the page's order). */
                after?: number;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        jobs: components["schemas"]["Job"][];
                        /**
                         * Format: int64
                         * @description Pass as after for the next page; null once no job lies beyond this page. A page shorter than limit (even empty) may still have one: its scan ended first.
                         */
                        next_after: number | null;
                        /** @description With count=true: how many jobs match the filter (after, limit and order aside). */
                        count?: {
                            /** Format: int64 */
                            value: number;
                            /** @description False when value is an estimate (a table of more than 50,000 jobs). */
                            exact: boolean;
                        };
                    };
                };
            };
            /** @description A parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and queue does not name one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    enqueue: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    jobs: components["schemas"]["EnqueueJob"][];
                };
            };
        };
        responses: {
            /** @description Stored; ids in request order. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        ids: components["schemas"]["IDList"];
                    };
                };
            };
            /** @description A job is invalid; the message names it (jobs[i] or job i of n) and nothing was stored. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and a job (or the callback) is in another or sets unique_key without unique_by_queue; nothing is stored. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body or the batch is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description The id is not a positive integer. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such job, or the token is restricted to queues and the job is in another. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    cancelJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job after the call. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description The id is not a positive integer. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such job. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    retryJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job after the call. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description The id is not a positive integer. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such job. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The job cannot run again: a finished batch member or job with dependants (its end was already counted on its batch and settled its dependants), or a finished unique job that gave up its key while another job holds that key now. The job is left as it was. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    claim: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    queue: string;
                    /** @description The worker's ID, recorded as the lease owner. */
                    worker: string;
                    /** @default 1 */
                    max?: number;
                    /**
                     * Format: int64
                     * @default 30000
                     */
                    lease_ms?: number;
                    /**
                     * Format: int64
                     * @description Long-poll this long for jobs; at most the server's limit (60000 by default).
                     * @default 0
                     */
                    wait_ms?: number;
                    /** @description The name jobs aim at with worker_names; default the worker's ID once any of worker_name, worker_type or worker_labels is given. A claim with none of them takes plain jobs only. */
                    worker_name?: string;
                    /** @description The worker's type: the claim also takes jobs routed to it. */
                    worker_type?: string;
                    /** @description The worker's labels, which may change from one claim to the next: the claim also takes jobs whose required labels they hold. Labels: at most 32, keys of 1-63 letters, digits, '_', '.', '/' or '-' starting with a letter or digit, values of at most 255 bytes. */
                    worker_labels?: {
                        [key: string]: string;
                    };
                    /** @description The kinds the worker runs: the claim takes jobs of those kinds only, and the worker registry records them, so that a job of a kind no live worker of its queue runs waits and is reported (GET /v1/unroutable) rather than claimed by a worker with no handler for it. Omit it to claim every kind. */
                    kinds?: string[];
                    /**
                     * @description Ask for the answer's compact form: what every claimed job has with the same value is sent once, in shared, and each job of jobs carries only the rest (always its id). A job is its entry with every field the entry lacks taken from shared. Without it (or false) the answer is the full form, jobs of ClaimedJob.
                     * @default false
                     */
                    compact?: boolean;
                };
            };
        };
        responses: {
            /** @description The claimed jobs (possibly none), each running under the worker's lease with its attempt: in the full form, or in the compact form when the claim asked for it. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        jobs: components["schemas"]["ClaimedJob"][];
                    } | {
                        shared: components["schemas"]["ClaimShared"];
                        jobs: components["schemas"]["ClaimedJobEntry"][];
                    };
                };
            };
            /** @description A field is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and queue is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    finish: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    results: components["schemas"]["AttemptResult"][];
                } | {
                    shared: components["schemas"]["FinishShared"];
                    results: components["schemas"]["AttemptResultEntry"][];
                };
            };
        };
        responses: {
            /** @description Which results were written. Rejected ones name attempts the store no longer holds (lease expired and rescued, or already finished). Refused ones are results the store could not hold (a value it refuses): each is recorded as a failed attempt naming the refusal, as a Go worker's would be, and the other results of the request are written all the same. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        accepted: components["schemas"]["IDList"];
                        rejected: components["schemas"]["IDList"];
                        /** @description The results the store refused, each recorded as a failed attempt in its place (a completed one as discarded: its handler ran to the end). */
                        refused: {
                            /**
                             * Format: int64
                             * @description The job.
                             */
                            id: number;
                            /** @description Why the store refused the result, as the job's failed attempt records it. */
                            error: string;
                            /** @description True when the failed attempt was written (the attempt is over); false when the store refused that too, or no longer held the attempt: the job runs again once its lease expires, so stop extending it. */
                            recorded: boolean;
                        }[];
                    };
                };
            };
            /** @description A result is invalid; nothing was written. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body or the batch is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    release: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    attempts: components["schemas"]["AttemptRef"][];
                };
            };
        };
        responses: {
            /** @description Which attempts were given back. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Jobs now available again (or cancelled, if their cancel was requested). */
                        released: components["schemas"]["IDList"];
                        /** @description Attempts the store no longer holds under that lease token: nothing changed. */
                        rejected: components["schemas"]["IDList"];
                    };
                };
            };
            /** @description An attempt is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body or the batch is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    heartbeat: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * Format: int64
                     * @default 30000
                     */
                    lease_ms?: number;
                    attempts: components["schemas"]["AttemptRef"][];
                };
            };
        };
        responses: {
            /** @description Attempts to stop. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Attempts no longer held: stop them, their results will be rejected. */
                        lost: components["schemas"]["IDList"];
                        /** @description Jobs asked to cancel: stop them and report them cancelled. */
                        cancel_requested: components["schemas"]["IDList"];
                    };
                };
            };
            /** @description An attempt or the lease is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body or the batch is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    stats: {
        parameters: {
            query?: {
                queue?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Counts. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        queue: string;
                        counts: {
                            /** Format: int64 */
                            pending: number;
                            /** Format: int64 */
                            blocked: number;
                            /** Format: int64 */
                            scheduled: number;
                            /** Format: int64 */
                            available: number;
                            /** Format: int64 */
                            retryable: number;
                            /** Format: int64 */
                            running: number;
                            /** Format: int64 */
                            completed: number;
                            /** Format: int64 */
                            cancelled: number;
                            /** Format: int64 */
                            discarded: number;
                        };
                    };
                };
            };
            /** @description The queue name is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metrics. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    discardJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job after the call. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description The id is not a positive integer. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such job. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getJobResult: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Job id. */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job's result. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobResult"];
                };
            };
            /** @description The id is not a positive integer. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such job, or the token is restricted to queues and the job is in another. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getJobWorkflow: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Job id. */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The graph. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkflowGraph"];
                };
            };
            /** @description The id is not a positive integer. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such job, or the token is restricted to queues (a workflow may span queues). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listBatches: {
        parameters: {
            query?: {
                /** @description The cursor: the next_before of the previous page; batches with lower ids. */
                before?: number;
                /** @description At most this many batches. */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of batches. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        batches: components["schemas"]["Batch"][];
                        /**
                         * Format: int64
                         * @description Pass as before for the next page; null on the last page.
                         */
                        next_before: number | null;
                    };
                };
            };
            /** @description A parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues (a batch may span queues). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    insertBatch: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    jobs: (components["schemas"]["EnqueueJob"] & unknown)[];
                    /** @description Inserted pending; made available once when the last member is completed, cancelled or discarded. It cannot depend on jobs or be unique. */
                    callback?: components["schemas"]["EnqueueJob"] & unknown & {
                        depends_on?: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description Stored; ids in request order. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * Format: int64
                         * @description The batch id.
                         */
                        id: number;
                        ids: components["schemas"]["IDList"];
                        /**
                         * Format: int64
                         * @description The callback job's id, 0 without one.
                         */
                        callback_job_id: number;
                    };
                };
            };
            /** @description A job or the callback is invalid; the message names it and nothing was stored. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and a job (or the callback) is in another or sets unique_key without unique_by_queue; nothing is stored. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body or the batch is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    insertWorkflow: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    steps: components["schemas"]["WorkflowStep"][];
                };
            };
        };
        responses: {
            /** @description Stored; ids in request order. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        ids: components["schemas"]["IDList"];
                        /** @description The id of every step that has a ref, by ref. */
                        refs: {
                            [key: string]: number;
                        };
                    };
                };
            };
            /** @description A field is invalid, a ref is used twice, an after names no step of the request, the steps wait for each other in a cycle, or a depends_on job does not exist or ended without completing. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and a job (or the callback) is in another or sets unique_key without unique_by_queue; nothing is stored. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body or the batch is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getBatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Batch id. */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The batch. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Batch"];
                };
            };
            /** @description The id is not a positive integer. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such batch, or the token is restricted to queues (a batch may span queues). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getBatchResults: {
        parameters: {
            query?: {
                /** @description Return members with ids above this one. */
                after?: number;
                limit?: number;
            };
            header?: never;
            path: {
                /** @description Batch id. */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page; next_after is the after of the next page, null on the last. A page ends at its limit or at the server's byte budget (8 MiB of JSON by default), whichever comes first: follow next_after. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        results: components["schemas"]["JobResult"][];
                        /** Format: int64 */
                        next_after: number | null;
                    };
                };
            };
            /** @description The id, after or limit is invalid, or a parameter is unknown. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such batch, or the token is restricted to queues (a batch may span queues). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listQueues: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The queues. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        queues: components["schemas"]["Queue"][];
                    };
                };
            };
            /** @description A query parameter was sent (none are taken). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getQueue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The queue's settings after the call. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Queue"];
                };
            };
            /** @description The queue name is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store does not know the queue: it has no jobs, no stored settings and no worker works it. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    pauseQueue: {
        parameters: {
            query?: {
                /** @description Pause only this kind within the queue (the queue's other kinds run on), instead of the whole queue. */
                kind?: string;
                /** @description Store the setting even for a queue the store does not know yet (no jobs, no stored settings, no worker works it), say before its workers are deployed. Without it such a queue is a 404. */
                create?: boolean;
            };
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The queue's settings after the call. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Queue"];
                };
            };
            /** @description The queue or kind name is invalid, or a query parameter other than kind was sent. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store does not know the queue (no jobs, no stored settings, no worker works it), and create was not given: nothing was stored. A typo does not pause a queue nobody uses. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    resumeQueue: {
        parameters: {
            query?: {
                /** @description Resume only this kind within the queue, instead of the whole queue. */
                kind?: string;
                /** @description Store the setting even for a queue the store does not know yet (no jobs, no stored settings, no worker works it), say before its workers are deployed. Without it such a queue is a 404. */
                create?: boolean;
            };
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The queue's settings after the call. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Queue"];
                };
            };
            /** @description The queue or kind name is invalid, or a query parameter other than kind was sent. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store does not know the queue (no jobs, no stored settings, no worker works it), and create was not given: nothing was stored. A typo does not pause a queue nobody uses. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listPeriodic: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every periodic job. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        periodic_jobs: components["schemas"]["PeriodicJob"][];
                    };
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createPeriodic: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PeriodicDefinition"];
            };
        };
        responses: {
            /** @description The stored periodic job. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PeriodicJob"];
                };
            };
            /** @description The definition is invalid (the message names the field), or the body is not JSON. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A periodic job of that name exists, stored or Go-configured. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPeriodic: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The periodic job's name. Stored ones keep to the pattern of PeriodicDefinition.name; Go-configured ones may use any text. */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The periodic job. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PeriodicJob"];
                };
            };
            /** @description The name is not text the store can hold (invalid UTF-8, or NUL). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No periodic job has that name (or, with a token restricted to queues, none of its queues). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    updatePeriodic: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The periodic job's name. Stored ones keep to the pattern of PeriodicDefinition.name; Go-configured ones may use any text. */
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PeriodicUpdate"];
            };
        };
        responses: {
            /** @description The periodic job after the change. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PeriodicJob"];
                };
            };
            /** @description The definition is invalid (the message names the field), or the body is not JSON. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No periodic job has that name (or, with a token restricted to queues, none of its queues). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The periodic job is Go-configured. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deletePeriodic: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The periodic job's name. Stored ones keep to the pattern of PeriodicDefinition.name; Go-configured ones may use any text. */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The name is not text the store can hold (invalid UTF-8, or NUL). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No periodic job has that name (or, with a token restricted to queues, none of its queues). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The periodic job is Go-configured in the server's own client. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    pausePeriodic: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The periodic job's name. Stored ones keep to the pattern of PeriodicDefinition.name; Go-configured ones may use any text. */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The periodic job, paused. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PeriodicJob"];
                };
            };
            /** @description The name is not text the store can hold (invalid UTF-8, or NUL). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No periodic job has that name (or, with a token restricted to queues, none of its queues). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    resumePeriodic: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The periodic job's name. Stored ones keep to the pattern of PeriodicDefinition.name; Go-configured ones may use any text. */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The periodic job, resumed. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PeriodicJob"];
                };
            };
            /** @description The name is not text the store can hold (invalid UTF-8, or NUL). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No periodic job has that name (or, with a token restricted to queues, none of its queues). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    triggerPeriodic: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The periodic job's name. Stored ones keep to the pattern of PeriodicDefinition.name; Go-configured ones may use any text. */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job inserted. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Job"];
                };
            };
            /** @description The name is invalid, or the job it would insert is (a stored kind no longer valid). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No periodic job has that name (or, with a token restricted to queues, none of its queues). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    startBulk: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description delete removes jobs that are not running (waiting ones are cancelled first, so that their dependants, batch, key and unique key are settled); running jobs are left and not counted.
                     * @enum {string}
                     */
                    action: "retry" | "cancel" | "discard" | "delete";
                    /**
                     * @description Only jobs in this state; empty for any.
                     * @enum {string}
                     */
                    state?: "" | "pending" | "blocked" | "scheduled" | "available" | "retryable" | "running" | "completed" | "cancelled" | "discarded";
                    /** @description Only jobs of this queue; empty for any. */
                    queue?: string;
                    /** @description Only jobs of this kind. */
                    kind?: string;
                };
            };
        };
        responses: {
            /** @description The task, started. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BulkTask"];
                };
            };
            /** @description An unknown action or state, or a bad queue name. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The server runs as many bulk tasks as it runs at once (4); nothing was started. Retry once one has ended. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    startBulkSelection: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description delete removes jobs that are not running (waiting ones are cancelled first, so that their dependants, batch, key and unique key are settled); running jobs are left and not counted.
                     * @enum {string}
                     */
                    action: "retry" | "cancel" | "discard" | "delete";
                    /** @description The jobs to act on, at most 10,000; unknown IDs are read and not changed. */
                    ids: number[];
                };
            };
        };
        responses: {
            /** @description The task, started. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BulkTask"];
                };
            };
            /** @description An unknown action, or ids that are empty, too many or not job ids. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The server runs as many bulk tasks as it runs at once (4); nothing was started. Retry once one has ended. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getBulk: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The task. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BulkTask"];
                };
            };
            /** @description The id is not a positive integer. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such task: the store keeps the last 1,000. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listTopics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The topics the token may use. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        topics: components["schemas"]["Topic"][];
                    };
                };
            };
            /** @description A field or parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createTopic: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    /**
                     * @description Lanes of every subscription: the most consumers one works at once, and keys in parallel. 16 for a new topic when left out; left out, it matches any stored topic's.
                     * @default 16
                     */
                    lanes?: number;
                    /**
                     * Format: int64
                     * @description How long a message is kept for subscriptions that have not read it: 0 the default (7 days), -1 until every subscription passed it. It holds whatever other topics do: a message leaves at most about this long (plus one generation, 5 minutes) after it was published, or with its generation once every subscription passed it. 0 matches any stored topic's.
                     * @default 0
                     */
                    retention_ms?: number;
                };
            };
        };
        responses: {
            /** @description The topic existed with the options the request gives (an option left out matches any): the stored topic, with its subscriptions. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Topic"];
                };
            };
            /** @description The topic, stored by this request. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Topic"];
                };
            };
            /** @description A field or parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The topic exists with other lanes or retention than the request gives; nothing changed. The message names both. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getTopic: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The topic. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Topic"];
                };
            };
            /** @description A field or parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such topic. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteTopic: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        deleted: boolean;
                    };
                };
            };
            /** @description A field or parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such topic. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    publish: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    messages: {
                        /** @description Messages of one key are delivered in publish order, one batch at a time per subscription. */
                        key?: string;
                        /** @description Any JSON value, stored as its text: at most 1 MiB (1,048,576 bytes) of UTF-8 without \u0000 or unpaired surrogate escapes, like a job's args. Past the limit, or with such text, the request is a 400 naming the message and the field, and nothing is published. Bytes that are not such text go as payload_base64. */
                        payload?: unknown;
                        /** @description A payload that is not JSON text, as base64: at most 1 MiB once decoded. */
                        payload_base64?: string;
                        /** @description Free-form JSON object, at most 64 KiB (65,536 bytes) of UTF-8 without \u0000 or unpaired surrogate escapes, like a job's metadata; otherwise a 400 naming the message and the field. */
                        metadata?: Record<string, never>;
                    }[];
                };
            };
        };
        responses: {
            /** @description The messages' IDs, in order. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        ids: number[];
                    };
                };
            };
            /** @description A field or parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such topic (or subscription). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    publishMany: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    messages: {
                        /** @description The topic the message is published to. */
                        topic: string;
                        /** @description Messages of one key are delivered in publish order, one batch at a time per subscription. */
                        key?: string;
                        /** @description Any JSON value, stored as its text: at most 1 MiB (1,048,576 bytes) of UTF-8 without \u0000 or unpaired surrogate escapes, like a job's args. Past the limit, or with such text, the request is a 400 naming the message and the field, and nothing is published. Bytes that are not such text go as payload_base64. */
                        payload?: unknown;
                        /** @description A payload that is not JSON text, as base64: at most 1 MiB once decoded. */
                        payload_base64?: string;
                        /** @description Free-form JSON object, at most 64 KiB (65,536 bytes) of UTF-8 without \u0000 or unpaired surrogate escapes, like a job's metadata; otherwise a 400 naming the message and the field. */
                        metadata?: Record<string, never>;
                    }[];
                };
            };
        };
        responses: {
            /** @description The messages' IDs, in order. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        ids: number[];
                    };
                };
            };
            /** @description A field or parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the retry queue (topic:<topic>) of a message's topic is not one of them; nothing is published. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A message names a topic that does not exist; nothing is published. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    topicLag: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One line per subscription. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        subscriptions: {
                            subscription: string;
                            /** Format: int64 */
                            pending: number;
                            /** Format: date-time */
                            oldest_pending?: string;
                            /**
                             * Format: int64
                             * @description Messages retention removed before the subscription read them.
                             */
                            dropped: number;
                        }[];
                    };
                };
            };
            /** @description A field or parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The topic is not stored. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    peekTopic: {
        parameters: {
            query?: {
                /** @description The messages of a page: the newest or an older page holds at most limit, a page after a cursor at most limit of each lane. */
                limit?: number;
                /** @description Empty: the newest messages. The cursor of an earlier answer: the messages published since. Its older: the page before it. At most 40,960 characters (a position of each of up to 1,024 lanes). */
                cursor?: string;
            };
            header?: never;
            path: {
                topic: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of messages, in ID (publish) order. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        messages: components["schemas"]["PeekedMessage"][];
                        /** @description Pass as cursor to read the messages published after those this page read, up to limit of each lane; empty on a page of older messages. */
                        cursor: string;
                        /** @description Pass as cursor to read the limit messages published before those this page showed (each message on one page only); empty when none is left. */
                        older: string;
                    };
                };
            };
            /** @description limit is out of range or cursor is not a cursor of this topic's peeks. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The topic is not stored. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    /**
                     * @description Deliver every message the topic keeps, not only those published from now.
                     * @default false
                     */
                    from_earliest?: boolean;
                    /**
                     * @description Deliveries of a failed message, its first included, before it is dead (a discarded job of the topic's retry queue).
                     * @default 10
                     */
                    max_attempts?: number;
                };
            };
        };
        responses: {
            /** @description Whether it was new. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        created: boolean;
                    };
                };
            };
            /** @description A field or parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such topic (or subscription). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        deleted: boolean;
                    };
                };
            };
            /** @description A field or parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No such topic (or subscription). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    receive: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description The consumer's ID, recorded as the lanes' lease owner; fair shares are counted per worker ID. */
                    worker: string;
                    /** @default 1 */
                    max_batches?: number;
                    /** @default 100 */
                    batch_size?: number;
                    /**
                     * Format: int64
                     * @description How long the batches are the worker's; extend longer work (extend).
                     * @default 30000
                     */
                    lease_ms?: number;
                    /**
                     * Format: int64
                     * @description Long-poll this long for messages; at most the server's limit (60000 by default).
                     * @default 0
                     */
                    wait_ms?: number;
                };
            };
        };
        responses: {
            /** @description The batches (possibly none), each leased to the worker until acked, released or its lease ends. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        batches: components["schemas"]["ReceivedBatch"][];
                    };
                };
            };
            /** @description A field or parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The topic or the subscription is not stored. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    ack: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    acks: {
                        receipt: string;
                        /** @description Message ID (as a string key) to its error. */
                        failed?: {
                            [key: string]: string;
                        };
                    }[];
                };
            };
        };
        responses: {
            /** @description Which acks the store accepted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AckResult"];
                };
            };
            /** @description A field is invalid, or a receipt was not handed out by receive for this subscription (forged, altered, or of another topic or subscription): nothing was read or written. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The topic or the subscription is not stored. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    nack: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    receipts: string[];
                    error?: string;
                };
            };
        };
        responses: {
            /** @description Which nacks the store accepted. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AckResult"];
                };
            };
            /** @description A field is invalid, or a receipt was not handed out by receive for this subscription (forged, altered, or of another topic or subscription): nothing was read or written. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The topic or the subscription is not stored. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    extendBatches: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    receipts: string[];
                    /**
                     * Format: int64
                     * @description The batches' new lease, from now.
                     * @default 30000
                     */
                    lease_ms?: number;
                };
            };
        };
        responses: {
            /** @description Per receipt, whether its lease was extended (false: lost, stop handling it). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Per receipt, in order. */
                        extended: boolean[];
                    };
                };
            };
            /** @description A field is invalid, or a receipt was not handed out by receive for this subscription (forged, altered, or of another topic or subscription): nothing was read or written. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The topic or the subscription is not stored. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    releaseBatches: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    receipts: string[];
                };
            };
        };
        responses: {
            /** @description Per receipt, whether the batch was still the worker's and is now released. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Per receipt, in order. */
                        released: boolean[];
                    };
                };
            };
            /** @description A field is invalid, or a receipt was not handed out by receive for this subscription (forged, altered, or of another topic or subscription): nothing was read or written. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The topic or the subscription is not stored. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rewindSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description true: every message the topic keeps is delivered again. */
                    earliest?: boolean;
                    /**
                     * Format: date-time
                     * @description Each lane delivers again from its first message published at or after this time (not in the future).
                     */
                    since?: string;
                };
            };
        };
        responses: {
            /** @description What the rewind did. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SubscriptionRewind"];
                };
            };
            /** @description The body gives neither or both of earliest and since, since is not a time or is in the future, or a field is invalid; nothing moved. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the admin scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The topic or the subscription is not stored. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is over the limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not JSON. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    subscriptionLanes: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One line per lane. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        lanes: components["schemas"]["SubscriptionLane"][];
                    };
                };
            };
            /** @description A field or parameter is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope, or is restricted to queues and the topic's retry queue (topic:<topic>) is not one of them. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The topic or the subscription is not stored. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    releaseLane: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                topic: string;
                name: string;
                lane: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Whether the lane was held. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description false when the lane was free already. */
                        released: boolean;
                    };
                };
            };
            /** @description The lane is not a lane of the topic. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the admin scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The topic or the subscription is not stored. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description A body was sent that is not application/json (this operation takes none). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWorkers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The workers. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        workers: components["schemas"]["Worker"][];
                    };
                };
            };
            /** @description A query parameter was sent (none are taken). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listUnroutable: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The groups. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        unroutable: components["schemas"]["UnroutableJobs"][];
                    };
                };
            };
            /** @description A query parameter was sent (none are taken). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listShards: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The shards, in shard order. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Whether the store is a fleet; false for a lone database, whose shards list is empty. */
                        fleet: boolean;
                        /**
                         * Format: date-time
                         * @description When the server last probed the shards; absent before its first sample.
                         */
                        sampled_at?: string;
                        shards: components["schemas"]["Shard"][];
                    };
                };
            };
            /** @description A query parameter was sent (none are taken). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    setStrictOrder: {
        parameters: {
            query?: {
                /** @description Store the setting even for a queue the store does not know yet (no jobs, no stored settings, no worker works it), say before its workers are deployed. Without it such a queue is a 404. */
                create?: boolean;
            };
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description How many of the queue's jobs may run at once; 0 turns strict order off.
                     * @default 1
                     */
                    max_running?: number;
                };
            };
        };
        responses: {
            /** @description The queue's settings after the call. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Queue"];
                };
            };
            /** @description The queue name or max_running is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description No token, or an unknown one. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The token lacks the scope. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store does not know the queue (no jobs, no stored settings, no worker works it), and create was not given: nothing was stored. A typo does not pause a queue nobody uses. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The body is not application/json. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store failed. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description The store is unavailable (down, restarting or unreachable); retry after the Retry-After delay. */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
