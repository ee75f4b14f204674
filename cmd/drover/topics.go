package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/storeurl"
	"github.com/droverhq/drover/internal/validate"
)

// openTopics opens the store, checked to be current, and a client for
// topics on it.
func (c *cli) openTopics(ctx context.Context) (storeClient, func(), error) {
	st, err := c.openStore(ctx, true)
	if err != nil {
		return nil, nil, err
	}
	client, err := storeurl.NewClient[storeClient](st, &drover.Config{Logger: c.logger})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return client, st.Close, nil
}

// topicsCommand is `drover topics`: list, create, delete, subscribe,
// unsubscribe, publish, peek, lag, lanes, release-lane, rewind.
func (c *cli) topicsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topics",
		Short: "Create topics and subscriptions, publish, and read subscriptions' lag",
		Long: `topics manages topics (docs/topics.md): a message published to a topic is
delivered once to every subscription of it.`,
	}
	cmd.AddCommand(c.topicsListCommand(), c.topicsCreateCommand(), c.topicsDeleteCommand(), c.topicsSubscribeCommand(),
		c.topicsUnsubscribeCommand(), c.topicsPublishCommand(), c.topicsPeekCommand(), c.topicsLagCommand(), c.topicsLanesCommand(),
		c.topicsReleaseLaneCommand(), c.topicsRewindCommand())
	markNeedsStore(cmd)
	return cmd
}

// withTopics runs fn with a topics client on the store. A topic that is
// not stored is reported by its name, the first argument of every
// command that names one.
func (c *cli) withTopics(cmd *cobra.Command, fn func(ctx context.Context, client storeClient) error) error {
	ctx := cmd.Context()
	client, closeStore, err := c.openTopics(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	err = fn(ctx, client)
	if errors.Is(err, drover.ErrTopicNotFound) && len(cmd.Flags().Args()) > 0 {
		return topicNotFound(cmd.Flags().Arg(0))
	}
	return err
}

// topicNotFound is the error of a command that names a topic not stored.
func topicNotFound(topic string) error {
	return fmt.Errorf("%w: %q", drover.ErrTopicNotFound, topic)
}

// topicExists reports whether topic is stored, for the commands whose
// call answers the same for a missing topic as for one without what they
// look for (no subscriptions, no such subscription).
func topicExists(ctx context.Context, client storeClient, topic string) (bool, error) {
	topics, err := client.Topics(ctx)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(topics, func(t *drover.Topic) bool { return t.Name == topic }), nil
}

func (c *cli) topicsListCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the topics with their subscriptions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.withTopics(cmd, func(ctx context.Context, client storeClient) error {
				topics, err := client.Topics(ctx)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					type topicJSON struct {
						Name          string    `json:"name"`
						Lanes         int       `json:"lanes"`
						RetentionMS   int64     `json:"retention_ms"`
						CreatedAt     time.Time `json:"created_at"`
						Subscriptions []string  `json:"subscriptions"`
					}
					rows := make([]topicJSON, len(topics))
					for i, t := range topics {
						rows[i] = topicJSON{t.Name, t.Lanes, t.Retention.Milliseconds(), t.CreatedAt, append([]string{}, t.Subscriptions...)}
					}
					return writeJSON(out, rows)
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TOPIC\tLANES\tRETENTION\tSUBSCRIPTIONS")
				for _, t := range topics {
					fmt.Fprintf(tw, "%s\t%d\t%s\t%d\n", t.Name, t.Lanes, retentionText(t.Retention), len(t.Subscriptions))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func retentionText(d time.Duration) string {
	if d == 0 {
		return "until read"
	}
	return d.String()
}

func (c *cli) topicsCreateCommand() *cobra.Command {
	var lanes int
	var retention time.Duration
	var keepUntilRead bool
	cmd := &cobra.Command{
		Use:   "create TOPIC",
		Short: "Create a topic (an existing one is left as it is)",
		Long: `create stores a topic. An existing topic of that name is left as it is
when it has the lanes and retention given (a flag left out matches any),
and is an error when it has others: they are fixed at creation.`,
		Args: argsNamed("TOPIC"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Only the options given are asked for, so that a create
			// that makes sure the topic exists matches any stored one.
			opts := &drover.TopicOpts{}
			if cmd.Flags().Changed("lanes") {
				opts.Lanes = lanes
			}
			if cmd.Flags().Changed("retention") {
				opts.Retention = retention
			}
			if keepUntilRead {
				opts.Retention = -1
			}
			return c.withTopics(cmd, func(ctx context.Context, client storeClient) error {
				t, err := client.CreateTopic(ctx, args[0], opts)
				if err != nil {
					return err
				}
				what := "created"
				if !t.Created {
					what = "exists already"
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "topic %s: %d lanes, retention %s (%s)\n", t.Name, t.Lanes, retentionText(t.Retention), what)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&lanes, "lanes", drover.TopicLanesDefault, "lanes: the most consumers of one subscription at once")
	f.DurationVar(&retention, "retention", drover.TopicRetentionDefault, "how long a message is kept for subscriptions that have not read it")
	f.BoolVar(&keepUntilRead, "keep-until-read", false, "keep messages until every subscription has read them, however long")
	return cmd
}

func (c *cli) topicsDeleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete TOPIC",
		Short: "Delete a topic with its subscriptions and messages",
		Long: `delete removes a topic with its subscriptions, their positions and every
message of the topic, at once. Jobs of its retry queue stay. Processes that
publish to it keep its lane count until they restart: create it again with
the same lanes, or restart them.`,
		Args: argsNamed("TOPIC"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withTopics(cmd, func(ctx context.Context, client storeClient) error {
				deleted, err := client.DeleteTopic(ctx, args[0])
				if err != nil {
					return err
				}
				if !deleted {
					return drover.ErrTopicNotFound
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "topic %s deleted\n", args[0])
				return err
			})
		},
	}
}

func (c *cli) topicsSubscribeCommand() *cobra.Command {
	var fromEarliest bool
	var maxAttempts int
	cmd := &cobra.Command{
		Use:   "subscribe TOPIC NAME",
		Short: "Create a subscription of a topic (an existing one keeps its position)",
		Long: `subscribe stores a subscription: from now on, it receives every message
published to the topic (every message the topic keeps with --from-earliest).
Consumers serve it with drover.Subscribe or over HTTP (drover serve).`,
		Args: argsNamed("TOPIC", "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withTopics(cmd, func(ctx context.Context, client storeClient) error {
				created, err := client.CreateSubscription(ctx, args[0], args[1],
					&drover.SubscriptionOpts{FromEarliest: fromEarliest, MaxAttempts: maxAttempts})
				if err != nil {
					return err
				}
				what := "created"
				if !created {
					what = "exists already"
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "subscription %s of %s %s\n", args[1], args[0], what)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&fromEarliest, "from-earliest", false, "deliver every message the topic keeps, not only new ones")
	f.IntVar(&maxAttempts, "max-attempts", drover.SubscriptionMaxAttemptsDefault, "deliveries of a failed message before it is dead")
	return cmd
}

func (c *cli) topicsUnsubscribeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "unsubscribe TOPIC NAME",
		Short: "Delete a subscription of a topic and its position",
		Long: `unsubscribe deletes a subscription: the messages it had not read are no
longer kept for it, and its consumers receive nothing more. Jobs of its
retry queue stay until they finish. Subscribing again under the same name
starts from that moment (or from the earliest kept message with
--from-earliest), not where it was.`,
		Args: argsNamed("TOPIC", "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withTopics(cmd, func(ctx context.Context, client storeClient) error {
				deleted, err := client.DeleteSubscription(ctx, args[0], args[1])
				if err != nil {
					return err
				}
				if !deleted {
					if ok, err := topicExists(ctx, client, args[0]); err != nil || !ok {
						return cmp.Or(err, drover.ErrTopicNotFound)
					}
					return fmt.Errorf("subscription %q of topic %q not found", args[1], args[0])
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "subscription %s of %s deleted\n", args[1], args[0])
				return err
			})
		},
	}
}

func (c *cli) topicsPublishCommand() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "publish TOPIC [PAYLOAD...]",
		Short: "Publish messages: each PAYLOAD argument, or each line of stdin",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var msgs []drover.Message
			for _, p := range args[1:] {
				msgs = append(msgs, drover.Message{Key: key, Payload: []byte(p)})
			}
			if len(args) == 1 {
				lines, err := readLines(cmd.InOrStdin())
				if err != nil {
					return err
				}
				for _, l := range lines {
					msgs = append(msgs, drover.Message{Key: key, Payload: l})
				}
			}
			if len(msgs) == 0 {
				return usagef("nothing to publish: give payloads as arguments or lines on stdin")
			}
			return c.withTopics(cmd, func(ctx context.Context, client storeClient) error {
				ids, err := client.Publish(ctx, args[0], msgs...)
				if err != nil {
					return err
				}
				out := bufio.NewWriter(cmd.OutOrStdout())
				for _, id := range ids {
					fmt.Fprintln(out, id)
				}
				return out.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "the messages' key: messages of one key are delivered in order")
	return cmd
}

// readLines returns the non-empty lines of r.
func readLines(r io.Reader) ([][]byte, error) {
	var out [][]byte
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			out = append(out, append([]byte{}, sc.Bytes()...))
		}
	}
	return out, sc.Err()
}

// peekFollowEvery is how often `topics peek --follow` reads what was
// published since its last read.
const peekFollowEvery = time.Second

func (c *cli) topicsPeekCommand() *cobra.Command {
	var limit int
	var follow, asJSON bool
	cmd := &cobra.Command{
		Use:     "peek TOPIC",
		Aliases: []string{"tail"},
		Short:   "Show the newest messages of a topic, consuming nothing",
		Long: `peek prints the newest messages of a topic, oldest first, one a line: its
id, lane, key, publish time and payload (text, or base64: for bytes that are
not). No subscription moves and no lane is held: consumers see the same
messages as before. With --follow it goes on printing messages as they are
published, reading every second, until interrupted.`,
		Example: "  drover topics peek chat\n  drover topics tail chat --follow --json",
		Args:    argsNamed("TOPIC"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 || limit > drover.MaxTopicPeek {
				return usagef("--limit %d: must be between 1 and %d", limit, drover.MaxTopicPeek)
			}
			return c.withTopics(cmd, func(ctx context.Context, client storeClient) error {
				out := bufio.NewWriter(cmd.OutOrStdout())
				cursor := ""
				for {
					peek, err := client.PeekTopic(ctx, args[0], limit, cursor)
					if err != nil {
						if follow && ctx.Err() != nil {
							return out.Flush()
						}
						return err
					}
					for _, m := range peek.Messages {
						if err := writePeeked(out, m, asJSON); err != nil {
							return err
						}
					}
					if err := out.Flush(); err != nil || !follow {
						return err
					}
					cursor = peek.Cursor
					select {
					case <-ctx.Done():
						return nil
					case <-time.After(peekFollowEvery):
					}
				}
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&limit, "limit", 10, fmt.Sprintf("how many of the newest messages to show (1 to %d); with --follow, the most read from each lane at a time", drover.MaxTopicPeek))
	f.BoolVar(&follow, "follow", false, "go on printing messages as they are published, until interrupted")
	f.BoolVar(&asJSON, "json", false, "print each message as a JSON object on a line of its own")
	return cmd
}

// writePeeked prints one message of `topics peek`.
func writePeeked(w io.Writer, m *drover.PeekedMessage, asJSON bool) error {
	text := utf8.Valid(m.Payload) && !slices.ContainsFunc([]rune(string(m.Payload)), unicode.IsControl)
	if asJSON {
		type peekedJSON struct {
			ID            int64           `json:"id"`
			Lane          int             `json:"lane"`
			Key           string          `json:"key,omitempty"`
			Payload       *string         `json:"payload,omitempty"`
			PayloadBase64 []byte          `json:"payload_base64,omitempty"`
			Metadata      json.RawMessage `json:"metadata,omitempty"`
			PublishedAt   time.Time       `json:"published_at"`
		}
		j := peekedJSON{ID: m.ID, Lane: m.Lane, Key: m.Key, PublishedAt: m.PublishedAt}
		if text {
			p := string(m.Payload)
			j.Payload = &p
		} else {
			j.PayloadBase64 = m.Payload
		}
		if len(m.Metadata) > 0 && json.Valid(m.Metadata) && string(m.Metadata) != "{}" {
			j.Metadata = m.Metadata
		}
		b, err := json.Marshal(j)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	payload := string(m.Payload)
	if !text {
		payload = "base64:" + base64.StdEncoding.EncodeToString(m.Payload)
	}
	_, err := fmt.Fprintf(w, "%d\tlane %d\t%s\t%s\t%s\n", m.ID, m.Lane, orDash(m.Key), m.PublishedAt.Format(time.RFC3339Nano), payload)
	return err
}

func (c *cli) topicsLagCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "lag TOPIC",
		Short: "Show how far each subscription of a topic is behind",
		Args:  argsNamed("TOPIC"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withTopics(cmd, func(ctx context.Context, client storeClient) error {
				lag, err := client.SubscriptionLag(ctx, args[0])
				if err != nil {
					return err
				}
				if len(lag) == 0 {
					if ok, err := topicExists(ctx, client, args[0]); err != nil || !ok {
						return cmp.Or(err, drover.ErrTopicNotFound)
					}
				}
				out := cmd.OutOrStdout()
				if asJSON {
					type lagJSON struct {
						Topic         string     `json:"topic"`
						Subscription  string     `json:"subscription"`
						Pending       int64      `json:"pending"`
						OldestPending *time.Time `json:"oldest_pending,omitempty"`
						Dropped       int64      `json:"dropped"`
					}
					rows := make([]lagJSON, len(lag))
					for i, l := range lag {
						rows[i] = lagJSON(l)
					}
					return writeJSON(out, rows)
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "SUBSCRIPTION\tPENDING\tOLDEST\tDROPPED")
				for _, l := range lag {
					oldest := "-"
					if l.OldestPending != nil {
						oldest = time.Since(*l.OldestPending).Round(time.Millisecond).String()
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", l.Subscription, strconv.FormatInt(l.Pending, 10), oldest, l.Dropped)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (c *cli) topicsLanesCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "lanes TOPIC SUBSCRIPTION",
		Short: "Show a subscription's lanes: cursor, pending messages, holder, attempt",
		Long: `lanes shows each lane of a subscription: the last message it acknowledged,
the messages past it, the consumer holding it and until when, and how many
times its next message was delivered (above 1 while the lane delivers, one
message at a time, a batch whose lease expired).`,
		Args: argsNamed("TOPIC", "SUBSCRIPTION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.withTopics(cmd, func(ctx context.Context, client storeClient) error {
				lanes, err := client.SubscriptionLanes(ctx, args[0], args[1])
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if asJSON {
					type laneJSON struct {
						Lane           int        `json:"lane"`
						Cursor         int64      `json:"cursor"`
						Pending        int64      `json:"pending"`
						Holder         string     `json:"holder,omitempty"`
						LeaseExpiresAt *time.Time `json:"lease_expires_at,omitempty"`
						Attempt        int        `json:"attempt"`
					}
					rows := make([]laneJSON, len(lanes))
					for i, l := range lanes {
						rows[i] = laneJSON(l)
					}
					return writeJSON(out, rows)
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "LANE\tCURSOR\tPENDING\tHOLDER\tLEASE LEFT\tATTEMPT")
				for _, l := range lanes {
					holder, left := "-", "-"
					if l.Holder != "" {
						holder = l.Holder
						left = time.Until(*l.LeaseExpiresAt).Round(time.Millisecond).String()
					}
					fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%d\n", l.Lane, l.Cursor, l.Pending, holder, left, l.Attempt)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (c *cli) topicsReleaseLaneCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "release-lane TOPIC SUBSCRIPTION LANE",
		Short: "Free a lane whose holder hangs: its lease ends now",
		Long: `release-lane ends the lease of a lane now, as if it had expired: another
consumer takes the lane and delivers its batch again. The delivery counts as
an attempt, so that a message that hangs every consumer goes dead after the
subscription's max attempts; the old holder's extend finds the lane lost and
its ack is refused.`,
		Args: argsNamed("TOPIC", "SUBSCRIPTION", "LANE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			lane, err := strconv.Atoi(args[2])
			if err != nil || lane < 0 {
				return usagef("LANE %q: not a lane number", args[2])
			}
			return c.withTopics(cmd, func(ctx context.Context, client storeClient) error {
				held, err := client.ReleaseLane(ctx, args[0], args[1], lane)
				if err != nil {
					return err
				}
				what := "released"
				if !held {
					what = "was not held"
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "lane %d of %s/%s %s\n", lane, args[0], args[1], what)
				return err
			})
		},
	}
}

func (c *cli) topicsRewindCommand() *cobra.Command {
	var earliest, asJSON bool
	var since string
	cmd := &cobra.Command{
		Use:   "rewind TOPIC SUBSCRIPTION (--earliest | --since TIME)",
		Short: "Deliver messages again: move a subscription back to the earliest message or a time",
		Long: `rewind moves a subscription back, as a Kafka offset reset or a Pub/Sub seek
does: with --earliest it delivers again every message the topic keeps, with
--since each lane delivers again from its first message published at or after
the time (an RFC 3339 time, or a duration ago: 90m). Lanes already at or
before the point stay where they are. Batches out at the rewind are delivered
again and their acks refused. Messages retention removed cannot be delivered
again: the output says when the oldest message to deliver was published.`,
		Args: argsNamed("TOPIC", "SUBSCRIPTION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if earliest == (since != "") {
				return usagef("give one of --earliest and --since")
			}
			var opts drover.RewindOpts
			if since != "" {
				var ok bool
				if opts.Since, ok = validate.TimeOrAgo(since, time.Now()); !ok {
					return usagef("--since %q: want an RFC 3339 time (2026-01-02T15:04:05Z) or a duration ago (90m)", since)
				}
			}
			return c.withTopics(cmd, func(ctx context.Context, client storeClient) error {
				res, err := client.RewindSubscription(ctx, args[0], args[1], opts)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), res)
				}
				oldest := "none pending"
				if res.OldestPending != nil {
					oldest = "the oldest published " + res.OldestPending.UTC().Format(time.RFC3339Nano)
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "rewound %s/%s: %d lanes moved back, %d batches out released; %d messages to deliver, %s\n",
					args[0], args[1], res.Lanes, res.Released, res.Pending, oldest)
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&earliest, "earliest", false, "deliver again every message the topic keeps")
	cmd.Flags().StringVar(&since, "since", "", "deliver again from the messages published at or after this time (RFC 3339, or a duration ago)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
