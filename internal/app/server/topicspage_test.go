package server_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
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

		// On PostgreSQL a sequencing pass gives the messages their
		// positions after the publish commits: the lag counts them then.
		var lag []drovertype.SubscriptionLag
		want := map[string]drovertype.SubscriptionLag{}
		if !waitfor.Within(waitfor.Timeout, func() bool {
			var err error
			if lag, err = b.client.SubscriptionLag(context.Background(), "chat"); err != nil {
				t.Fatal(err)
			}
			clear(want)
			for _, l := range lag {
				want[l.Subscription] = l
			}
			return len(want) == 2 && want["bot"].Pending == 5 && want["audit"].Pending == 5
		}) {
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

// holdChatLane makes topic chat of two lanes with subscription bot, two
// messages of one key, and worker w1 holding their lane with the first.
func holdChatLane(t *testing.T, b *bundle) {
	t.Helper()
	b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 2})
	b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": "bot", "from_earliest": true})
	b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": []map[string]any{
		{"key": "a", "payload": 1}, {"key": "a", "payload": 2}}})
	b.receiveHTTP(t, server.ScopeWork, "chat", "bot", map[string]any{"batch_size": 1})
}

// TestTopicLanesPage: a subscription's name on the topics page leads to
// its lanes, with the consumer holding each, its lag and its attempt.
func TestTopicLanesPage(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		holdChatLane(t, b)
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

// peekRows reads the rows of a topic page's peek: each message's key,
// payload and metadata cells, as text, in the page's order.
func peekRows(body string) [][3]string {
	var out [][3]string
	for _, r := range regexp.MustCompile(`(?s)<tr data-message="\d+">(.*?)</tr>`).FindAllStringSubmatch(body, -1) {
		var row [3]string
		for i, field := range []string{"key", "payload", "metadata"} {
			cell := regexp.MustCompile(`data-field="` + field + `">(?:<code>)?([^<]*)<`).FindStringSubmatch(r[1])
			if cell != nil {
				row[i] = html.UnescapeString(cell[1])
			}
		}
		out = append(out, row)
	}
	return out
}

// TestTopicPagePeek: a topic's page shows its newest messages with their
// keys, payloads (long ones clipped) and metadata, and reading them
// consumes nothing: the subscription's lag and lanes are as before. Its
// "newer" link shows only the messages published since, and a cursor that
// is not one is refused, naming the field.
func TestTopicPagePeek(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 2})
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": "bot", "from_earliest": true})
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": []map[string]any{
			{"key": "alpha", "payload": map[string]any{"n": 1}},
			{"key": "beta", "payload": map[string]any{"n": 2}, "metadata": map[string]any{"trace": "t-2"}},
			{"key": "gamma", "payload": map[string]any{"n": 3}}}})
		// On PostgreSQL a message counts in the lag once a sequencing pass
		// has given it its position, which a peek also runs: wait for it,
		// so that the peek is seen to change nothing.
		var lagBefore []drovertype.SubscriptionLag
		waitfor.Cond(t, "the three messages in the lag", func() bool {
			var err error
			if lagBefore, err = b.client.SubscriptionLag(ctx, "chat"); err != nil {
				t.Fatal(err)
			}
			return len(lagBefore) == 1 && lagBefore[0].Pending == 3
		})
		lanesBefore := b.lanesHTTP(t, "chat", "bot")

		var body string
		for range 2 {
			body = b.page(t, "/ui/topics/chat")
		}
		want := [][3]string{{"alpha", `{"n":1}`, "-"}, {"beta", `{"n":2}`, `{"trace":"t-2"}`}, {"gamma", `{"n":3}`, "-"}}
		if got := peekRows(body); !reflect.DeepEqual(got, want) {
			t.Fatalf("peek rows %q, want %q:\n%s", got, want, body)
		}
		lagAfter, err := b.client.SubscriptionLag(ctx, "chat")
		if err != nil {
			t.Fatal(err)
		}
		if len(lagAfter) != 1 || lagAfter[0].Pending != 3 || lagAfter[0].Pending != lagBefore[0].Pending {
			t.Fatalf("lag after the peeks %+v, before %+v: want 3 pending, unchanged", lagAfter, lagBefore)
		}
		if lanesAfter := b.lanesHTTP(t, "chat", "bot"); !reflect.DeepEqual(lanesAfter, lanesBefore) {
			t.Fatalf("lanes after the peeks %v, before %v", lanesAfter, lanesBefore)
		}

		newer := regexp.MustCompile(`<a href="([^"]*)" id="peek-newer">`)
		m := newer.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no newer link:\n%s", body)
		}
		long := strings.Repeat("x", 300)
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": []map[string]any{
			{"key": "delta", "payload": long}}})
		body = b.page(t, html.UnescapeString(m[1]))
		clip := `"` + strings.Repeat("x", 199) + "…"
		if got := peekRows(body); len(got) != 1 || got[0] != [3]string{"delta", clip, "-"} {
			t.Fatalf("newer rows %q, want delta alone with its payload clipped:\n%s", got, body)
		}
		m = newer.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no newer link after the newer page:\n%s", body)
		}
		if body = b.page(t, html.UnescapeString(m[1])); len(peekRows(body)) != 0 || !strings.Contains(body, "No message published since.") {
			t.Fatalf("newer than the newest shows messages:\n%s", body)
		}
		if status, body := b.pageStatus(t, "/ui/topics/chat?after=bogus"); status != http.StatusBadRequest || !strings.Contains(body, "after: cursor") {
			t.Fatalf("bad cursor = %d:\n%s", status, body)
		}
	})
}

// TestTopicLaneRelease: the lanes page has a release button on each held
// lane and on no other; its form, posted across sites with the session
// cookie, is refused and leaves the holder; posted by the dashboard it
// frees the lane (no holder on the page or in the API after), and the
// banner says which lane was released, or that it was not held.
func TestTopicLaneRelease(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		holdChatLane(t, b)
		holders := func() map[int]string {
			out := map[int]string{}
			for _, l := range b.lanesHTTP(t, "chat", "bot") {
				if h, _ := l["holder"].(string); h != "" {
					out[int(l["lane"].(float64))] = h
				}
			}
			return out
		}
		held := holders()
		if len(held) != 1 {
			t.Fatalf("held lanes %v, want one", held)
		}
		var lane int
		for l := range held {
			lane = l
		}
		body := b.page(t, "/ui/topics/chat/bot")
		action := "/ui/topics/chat/subscriptions/bot/lanes/" + strconv.Itoa(lane) + "/release"
		if strings.Count(body, `id="release-`) != 1 || !strings.Contains(body, `action="`+action+`"`) ||
			!strings.Contains(body, `data-confirm="Release lane `+strconv.Itoa(lane)+` of subscription bot, held by w1?`) {
			t.Fatalf("lanes page without one release form, asking first, for lane %d:\n%s", lane, body)
		}

		session := b.login(t)
		status, body, _ := b.post(t, action, nil, map[string]string{"Cookie": session, "Origin": "https://evil.example"})
		if status != http.StatusForbidden || !strings.Contains(body, "cross-site request refused") {
			t.Fatalf("cross-site release = %d: %s", status, body)
		}
		if got := holders(); !reflect.DeepEqual(got, held) {
			t.Fatalf("holders after a cross-site release %v, want %v", got, held)
		}

		admin := map[string]string{"Authorization": "Bearer " + b.tokens[server.ScopeAdmin]}
		for _, tc := range []struct{ flash string }{
			{"Lane " + strconv.Itoa(lane) + " of subscription bot released"},
			{"Lane " + strconv.Itoa(lane) + " of subscription bot was not held"},
		} {
			status, body, header := b.post(t, action, nil, admin)
			if status != http.StatusSeeOther {
				t.Fatalf("release = %d: %s", status, body)
			}
			body = b.page(t, header.Get("Location"))
			if !strings.Contains(body, tc.flash) {
				t.Fatalf("page after the release does not say %q:\n%s", tc.flash, body)
			}
			if strings.Contains(body, `id="release-`) || strings.Contains(body, `data-field="holder">w1<`) {
				t.Fatalf("lanes page still shows a holder after the release:\n%s", body)
			}
			if got := holders(); len(got) != 0 {
				t.Fatalf("holders after the release %v, want none", got)
			}
		}
		for _, bad := range []string{"2", "x"} {
			if status, body, _ := b.post(t, "/ui/topics/chat/subscriptions/bot/lanes/"+bad+"/release", nil, admin); status != http.StatusBadRequest || !strings.Contains(body, "lane") {
				t.Errorf("release of lane %s = %d: %s", bad, status, body)
			}
		}
	})
}

// TestTopicSubscriptionRewind (issue 38, item 6): each subscription on a
// topic's page has a rewind form that asks first, saying what it does;
// posted across sites it is refused and moves nothing; posted by the
// dashboard to the earliest it delivers every message again and releases
// the batch out, and the banner says so; a bad time is a 400 naming it.
func TestTopicSubscriptionRewind(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 1})
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": "bot", "from_earliest": true})
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": []map[string]any{
			{"payload": 1}, {"payload": 2}}})
		// The first message acknowledged, the second out.
		first := b.receiveHTTP(t, server.ScopeWork, "chat", "bot", map[string]any{"batch_size": 1}).Batches[0]
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/bot/ack", map[string]any{"acks": []map[string]any{{"receipt": first.Receipt}}})
		b.receiveHTTP(t, server.ScopeWork, "chat", "bot", map[string]any{"batch_size": 1})
		body := b.page(t, "/ui/topics/chat")
		action := "/ui/topics/chat/subscriptions/bot/rewind"
		if !strings.Contains(body, `action="`+action+`"`) ||
			!strings.Contains(body, `data-confirm="Rewind subscription bot of topic chat to the earliest message kept? Every message the topic keeps is delivered to it again`) ||
			!strings.Contains(body, `data-confirm="Rewind subscription bot of topic chat to the time given?`) {
			t.Fatalf("topic page without a rewind form that asks first:\n%s", body)
		}
		lag := func() float64 {
			var total float64
			for _, l := range b.lanesHTTP(t, "chat", "bot") {
				total += l["lag"].(float64)
			}
			return total
		}
		session := b.login(t)
		earliest := url.Values{"to": {"earliest"}}
		status, body, _ := b.post(t, action, earliest, map[string]string{"Cookie": session, "Origin": "https://evil.example"})
		if status != http.StatusForbidden {
			t.Fatalf("cross-site rewind = %d: %s", status, body)
		}
		admin := map[string]string{"Authorization": "Bearer " + b.tokens[server.ScopeAdmin]}
		for _, bad := range []struct {
			form  url.Values
			names string
		}{
			{url.Values{"to": {"since"}, "since": {"yesterday"}}, "since &#34;yesterday&#34;"},
			{url.Values{"to": {"sideways"}}, "to &#34;sideways&#34;"},
			{url.Values{"to": {"since"}, "since": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}, "in the future"},
		} {
			if status, body, _ := b.post(t, action, bad.form, admin); status != http.StatusBadRequest || !strings.Contains(body, bad.names) {
				t.Errorf("rewind %v = %d, want 400 naming %s: %s", bad.form, status, bad.names, body)
			}
		}
		before := lag()
		status, body, header := b.post(t, action, earliest, admin)
		if status != http.StatusSeeOther {
			t.Fatalf("rewind = %d: %s", status, body)
		}
		body = b.page(t, header.Get("Location"))
		if !strings.Contains(body, "Subscription bot rewound: 1 lanes moved back, 1 batches out released") || !strings.Contains(body, "2 messages to deliver") {
			t.Fatalf("page after the rewind does not say what it did:\n%s", body)
		}
		if after := lag(); after != 2 || after <= before {
			t.Fatalf("lag %v after the rewind (before %v), want both messages pending", after, before)
		}
	})
}

// TestTopicPeekOlderPages (issue 38): GET /v1/topics/{topic}/messages and
// the topic page's Older link page back through more messages than a page
// holds, each message on exactly one page, until no older one is left; a
// bad limit or cursor is a 400 naming it.
func TestTopicPeekOlderPages(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 2})
		var msgs []map[string]any
		for i := range 30 {
			msgs = append(msgs, map[string]any{"key": "k" + strconv.Itoa(i%5), "payload": i})
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": msgs})

		type page struct {
			Messages []struct {
				ID      int64
				Payload json.RawMessage
			}
			Cursor, Older string
		}
		var p page
		waitfor.Cond(t, "every message readable", func() bool {
			b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/topics/chat/messages?limit=7", nil).decode(t, &p)
			return len(p.Messages) == 7 && string(p.Messages[6].Payload) == "29"
		})
		seen := map[string]int{}
		for pages := 1; ; pages++ {
			if len(p.Messages) > 7 {
				t.Fatalf("page %d holds %d messages", pages, len(p.Messages))
			}
			for _, m := range p.Messages {
				seen[string(m.Payload)]++
			}
			if p.Older == "" {
				if pages != 5 {
					t.Fatalf("%d pages of 7 for 30 messages, want 5", pages)
				}
				break
			}
			b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/topics/chat/messages?limit=7&cursor="+url.QueryEscape(p.Older), nil).decode(t, &p)
		}
		for i := range 30 {
			if n := seen[strconv.Itoa(i)]; n != 1 {
				t.Errorf("message %d on %d pages, want 1", i, n)
			}
		}
		for _, bad := range []struct{ query, names string }{{"limit=0", "limit"}, {"limit=x", "limit"}, {"cursor=%3Cx", "cursor"},
			{"cursor=" + strings.Repeat("1", 41_000), "longer than a cursor"}} {
			r := b.call(t, server.ScopeEnqueue, "GET", "/v1/topics/chat/messages?"+bad.query, nil, false)
			if r.status != http.StatusBadRequest || !strings.Contains(r.errorMessage(t), bad.names) {
				t.Errorf("peek ?%s = %d %s, want 400 naming %s", bad.query, r.status, r.body, bad.names)
			}
		}

		// The page: the newest 20, then the 10 before them, then none.
		older := regexp.MustCompile(`<a href="([^"]*)" id="peek-older">`)
		body := b.page(t, "/ui/topics/chat")
		rows := peekRows(body)
		m := older.FindStringSubmatch(body)
		if len(rows) != 20 || m == nil {
			t.Fatalf("topic page with %d messages and older link %v:\n%s", len(rows), m, body)
		}
		body = b.page(t, html.UnescapeString(m[1]))
		more := peekRows(body)
		payloads := map[string]bool{}
		for _, r := range append(rows, more...) {
			payloads[r[1]] = true
		}
		if len(more) != 10 || len(payloads) != 30 || older.MatchString(body) || !strings.Contains(body, `id="peek-newest"`) {
			t.Fatalf("older page with %d messages (%d distinct in all), want the other 10 and no older link:\n%s", len(more), len(payloads), body)
		}
		if status, body := b.pageStatus(t, "/ui/topics/chat?before=x"); status != http.StatusBadRequest || !strings.Contains(body, "before") {
			t.Fatalf("bad older cursor = %d:\n%s", status, body)
		}
	})
}
