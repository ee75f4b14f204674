package server_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/server"
	"github.com/droverhq/drover/internal/waitfor"
)

// subscriptionCell reads a figure of a subscription's row of the topics
// page.
func subscriptionCell(body, topic, sub, field string) (string, bool) {
	row := regexp.MustCompile(`(?s)<tr data-topic="` + regexp.QuoteMeta(topic) + `" data-subscription="` +
		regexp.QuoteMeta(sub) + `">(.*?)</tr>`).FindStringSubmatch(body)
	if row == nil {
		return "", false
	}
	cell := regexp.MustCompile(`data-field="` + field + `">([^<]*)<`).FindStringSubmatch(row[1])
	if cell == nil {
		return "", false
	}
	return cell[1], true
}

// TestTopicsPage: the topics page, linked from every page's navigation,
// lists each topic with its subscriptions, and shows the lag the store
// reports once the sampler has read it; a topic with no subscription is
// listed too.
func TestTopicsPage(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		if !strings.Contains(b.page(t, "/"), `href="/ui/topics"`) {
			t.Fatal("the navigation has no link to the topics page")
		}
		if body := b.page(t, "/ui/topics"); !strings.Contains(body, "No topic.") {
			t.Fatalf("topics page of an empty store:\n%s", body)
		}
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 2})
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "quiet", "lanes": 1})
		for _, sub := range []string{"bot", "audit"} {
			b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": sub})
		}
		msgs := make([]map[string]any, 5)
		for i := range msgs {
			msgs[i] = map[string]any{"key": "room" + strconv.Itoa(i%2), "payload": map[string]any{"n": i}}
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": msgs})

		lag, err := b.client.SubscriptionLag(context.Background(), "chat")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]drover.SubscriptionLag{}
		for _, l := range lag {
			want[l.Subscription] = l
		}
		if len(want) != 2 || want["bot"].Pending != 5 || want["audit"].Pending != 5 {
			t.Fatalf("store lag %+v, want 5 for bot and audit", lag)
		}
		var body string
		waitfor.Cond(t, "the topics page to show the store's lag", func() bool {
			body = b.page(t, "/ui/topics")
			if !strings.Contains(body, `data-field="published-rate"`) {
				return false // rates need two samples
			}
			for sub, l := range want {
				got, ok := subscriptionCell(body, "chat", sub, "lag")
				if !ok || got != strconv.FormatInt(l.Pending, 10) {
					return false
				}
			}
			return true
		})
		for sub, l := range want {
			if got, _ := subscriptionCell(body, "chat", sub, "dropped"); got != strconv.FormatInt(l.Dropped, 10) {
				t.Errorf("%s dropped %q, store says %d", sub, got, l.Dropped)
			}
			if got, _ := subscriptionCell(body, "chat", sub, "oldest"); got == "-" || got == "" {
				t.Errorf("%s oldest pending %q with messages pending", sub, got)
			}
		}
		if !strings.Contains(body, `<tr data-topic="quiet"><td><a href="/ui/topics/quiet">quiet</a></td><td>1</td><td>168h0m0s</td><td colspan="5" class="empty">No subscription.`) {
			t.Errorf("the topic without subscriptions is not listed:\n%s", body)
		}
	})
}

// TestTopicsPageNeedsAdmin: like every dashboard page, the topics page is
// for admins.
func TestTopicsPageNeedsAdmin(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		for _, sc := range []server.Scope{server.ScopeEnqueue, server.ScopeWork} {
			req, _ := http.NewRequest("GET", b.url+"/ui/topics", nil)
			req.Header.Set("Authorization", "Bearer "+b.tokens[sc])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s token: GET /ui/topics = %d, want 403", sc, resp.StatusCode)
			}
		}
	})
}

// TestTopicsPageNamesOpenPublisher: a transaction that published and stays
// open shows on the topics page with its session, and its age in
// drover_topic_open_publisher_age_seconds; once it commits, neither. On
// SQLite, where an open transaction holds the only write lock and other
// sessions cannot see it, the store reports none.
func TestTopicsPageNamesOpenPublisher(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "orders", "lanes": 1})
		pg, ok := b.driver.(*droverpg.Driver)
		if !ok {
			waitfor.Cond(t, "a sample", func() bool { return strings.Contains(b.page(t, "/ui/topics"), "every ") })
			if body := b.page(t, "/ui/topics"); strings.Contains(body, `id="open-publisher"`) {
				t.Fatalf("SQLite reported an open publisher:\n%s", body)
			}
			if age := value(b.scrape(t), "drover_topic_open_publisher_age_seconds", nil); age != 0 {
				t.Fatalf("open publisher age %v on SQLite, want 0", age)
			}
			return
		}
		tx, err := pg.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "SET application_name = 'outbox-relay'"); err != nil {
			t.Fatal(err)
		}
		var pid int
		if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if _, err := b.client.(*drover.Client[pgx.Tx]).PublishTx(ctx, tx, "orders", drover.Message{Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		// A sample taken while the publish ran says "active": the page
		// shows the session as of the last sample.
		line := regexp.MustCompile(`<p class="flash error" id="open-publisher">([^<]*)</p>`)
		var got string
		waitfor.Cond(t, "the page and the metric to show the open publisher, idle", func() bool {
			m := line.FindStringSubmatch(b.page(t, "/ui/topics"))
			if m == nil {
				return false
			}
			got = m[1]
			return strings.Contains(got, "idle in transaction") && value(b.scrape(t), "drover_topic_open_publisher_age_seconds", nil) > 0
		})
		for _, want := range []string{"pid " + strconv.Itoa(pid), "application outbox-relay"} {
			if !strings.Contains(got, want) {
				t.Fatalf("open publisher line %q does not say %q", got, want)
			}
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		waitfor.Cond(t, "the line and the age gone after the commit", func() bool {
			return !strings.Contains(b.page(t, "/ui/topics"), `id="open-publisher"`) &&
				value(b.scrape(t), "drover_topic_open_publisher_age_seconds", nil) == 0
		})
	}, func(cfg *server.Config) { cfg.PublisherStallAfter = time.Millisecond })
}

// TestTopicLanesPage: a subscription's name on the topics page leads to
// its lanes, with the consumer holding each, its lag and its attempt.
func TestTopicLanesPage(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 2})
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": "bot", "from_earliest": true})
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": []map[string]any{
			{"key": "a", "payload": 1}, {"key": "a", "payload": 2}}})
		b.receiveHTTP(t, server.ScopeWork, "chat", "bot", map[string]any{"batch_size": 1})
		if body := b.page(t, "/ui/topics"); !strings.Contains(body, `href="/ui/topics/chat/bot"`) {
			t.Fatalf("the topics page does not link to bot's lanes:\n%s", body)
		}
		body := b.page(t, "/ui/topics/chat/bot")
		rows := regexp.MustCompile(`(?s)<tr data-lane="(\d)">(.*?)</tr>`).FindAllStringSubmatch(body, -1)
		if len(rows) != 2 {
			t.Fatalf("lanes page with %d lanes, want 2:\n%s", len(rows), body)
		}
		held := 0
		for _, r := range rows {
			if strings.Contains(r[2], `data-field="holder">w1<`) {
				held++
				if !strings.Contains(r[2], `data-field="lag">2<`) || !strings.Contains(r[2], `data-field="attempt">1<`) || !strings.Contains(r[2], "in ") {
					t.Fatalf("held lane %s, want its lag of 2, attempt 1 and its lease's end", r[2])
				}
			}
		}
		if held != 1 {
			t.Fatalf("%d lanes held by w1, want 1:\n%s", held, body)
		}
	})
}
