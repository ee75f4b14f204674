package server

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/droverhq/drover/internal/validate"
)

// Scope is a permission a token carries.
type Scope string

// Scopes. Admin includes the other two, so one operator token does all.
const (
	// ScopeEnqueue inserts jobs and reads them back.
	ScopeEnqueue Scope = "enqueue"
	// ScopeWork claims jobs, extends their leases and reports results.
	ScopeWork Scope = "work"
	// ScopeAdmin inspects, cancels and retries jobs, reads stats and
	// metrics, and opens the dashboard.
	ScopeAdmin Scope = "admin"
)

var allScopes = []Scope{ScopeEnqueue, ScopeWork, ScopeAdmin}

// Token is one configured bearer token: its name (for logs), its scopes and
// the SHA-256 of its secret. Only the hash is stored, so a leaked token
// file grants nothing. A fast hash is enough because tokens are 256 random
// bits, not passwords: there is nothing to guess.
type Token struct {
	Name   string
	Scopes []Scope
	Hash   [sha256.Size]byte
	// Queues restricts the token to these queues; nil allows every queue.
	// It lets applications of different trust share a store without one
	// reading or working the other's jobs. Set it with Restrict, which
	// checks the names.
	Queues []string
}

// Restrict limits the token to queues (nil or empty: every queue). Admin
// tokens cannot be restricted: cancel, retry, discard, stats, metrics and
// the dashboard span queues, and a restriction that some of them ignored
// would promise more than it keeps.
func (t *Token) Restrict(queues []string) error {
	if len(queues) == 0 {
		t.Queues = nil
		return nil
	}
	if slices.Contains(t.Scopes, ScopeAdmin) {
		return fmt.Errorf("token %q: an admin token cannot be restricted to queues (admin actions and the dashboard span every queue)", t.Name)
	}
	seen := make(map[string]bool, len(queues))
	for _, q := range queues {
		if q == "*" {
			return fmt.Errorf("token %q: queue \"*\" (every queue) cannot be listed with others", t.Name)
		}
		if err := validate.Queue(q); err != nil {
			return fmt.Errorf("token %q: %w", t.Name, err)
		}
		if seen[q] {
			return fmt.Errorf("token %q: queue %q is listed twice", t.Name, q)
		}
		seen[q] = true
	}
	t.Queues = slices.Clone(queues)
	return nil
}

// AllowsQueue reports whether the token may use queue q.
func (t *Token) AllowsQueue(q string) bool {
	return t.Queues == nil || slices.Contains(t.Queues, q)
}

// Allows reports whether the token carries scope s.
func (t *Token) Allows(s Scope) bool {
	return slices.Contains(t.Scopes, s) || slices.Contains(t.Scopes, ScopeAdmin)
}

// tokenPrefix marks Drover tokens so that secret scanners can find leaked
// ones.
const tokenPrefix = "drv_"

// NewToken returns a fresh random secret and its Token.
func NewToken(name string, scopes []Scope) (secret string, tok Token, err error) {
	if err := validateTokenName(name); err != nil {
		return "", Token{}, err
	}
	if len(scopes) == 0 {
		return "", Token{}, fmt.Errorf("token %q: give at least one scope (%s)", name, scopeList())
	}
	for _, s := range scopes {
		if !slices.Contains(allScopes, s) {
			return "", Token{}, fmt.Errorf("token %q: unknown scope %q (use %s)", name, s, scopeList())
		}
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", Token{}, err
	}
	secret = tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return secret, Token{Name: name, Scopes: scopes, Hash: sha256.Sum256([]byte(secret))}, nil
}

// Line is the token as a line of a tokens file.
func (t Token) Line() string {
	names := make([]string, len(t.Scopes))
	for i, s := range t.Scopes {
		names[i] = string(s)
	}
	line := fmt.Sprintf("%s %s sha256:%s", t.Name, strings.Join(names, ","), hex.EncodeToString(t.Hash[:]))
	if t.Queues != nil {
		line += " queues=" + strings.Join(t.Queues, ",")
	}
	return line
}

var tokenNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func validateTokenName(name string) error {
	if !tokenNamePattern.MatchString(name) {
		return fmt.Errorf("token name %q: use 1-64 letters, digits, '_', '.' or '-'", name)
	}
	return nil
}

func scopeList() string {
	names := make([]string, len(allScopes))
	for i, s := range allScopes {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// ParseTokens reads a tokens file: one token per line as
//
//	NAME SCOPE[,SCOPE…] sha256:HEX [queues=QUEUE[,QUEUE…]]
//
// with blank lines and lines starting with # ignored. The optional
// queues= field restricts the token to those queues (see Token.Restrict);
// "queues=*", like its absence, allows every queue, so that a file can say
// so explicitly. `drover serve token` prints such lines. Errors name the
// line.
func ParseTokens(r io.Reader) ([]Token, error) {
	var toks []Token
	names := map[string]bool{}
	hashes := map[[sha256.Size]byte]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 && len(fields) != 4 {
			return nil, fmt.Errorf("line %d: want NAME SCOPES sha256:HEX [queues=Q,…], got %d fields", n, len(fields))
		}
		tok := Token{Name: fields[0]}
		if err := validateTokenName(tok.Name); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if names[tok.Name] {
			return nil, fmt.Errorf("line %d: token name %q is used twice", n, tok.Name)
		}
		for _, s := range strings.Split(fields[1], ",") {
			if !slices.Contains(allScopes, Scope(s)) {
				return nil, fmt.Errorf("line %d: unknown scope %q (use %s)", n, s, scopeList())
			}
			tok.Scopes = append(tok.Scopes, Scope(s))
		}
		hexHash, ok := strings.CutPrefix(fields[2], "sha256:")
		raw, err := hex.DecodeString(hexHash)
		if !ok || err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("line %d: hash must be sha256: and 64 hex digits (never the token itself)", n)
		}
		copy(tok.Hash[:], raw)
		if hashes[tok.Hash] {
			return nil, fmt.Errorf("line %d: the same token hash appears twice", n)
		}
		if len(fields) == 4 {
			list, ok := strings.CutPrefix(fields[3], "queues=")
			if !ok || list == "" {
				return nil, fmt.Errorf("line %d: the fourth field must be queues=Q[,Q…] or queues=*", n)
			}
			if list != "*" {
				if err := tok.Restrict(strings.Split(list, ",")); err != nil {
					return nil, fmt.Errorf("line %d: %w", n, err)
				}
			}
		}
		names[tok.Name], hashes[tok.Hash] = true, true
		toks = append(toks, tok)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return toks, nil
}

// authenticator finds the token of a request. It is immutable: a reload
// of the tokens file builds a new one and swaps it in whole (Server.SetTokens),
// so that a request sees either the old set or the new one, never half of
// each.
type authenticator struct {
	byHash map[[sha256.Size]byte]*Token
}

func newAuthenticator(tokens []Token) *authenticator {
	a := &authenticator{byHash: make(map[[sha256.Size]byte]*Token, len(tokens))}
	for i := range tokens {
		a.byHash[tokens[i].Hash] = &tokens[i]
	}
	return a
}

// sessionCookie carries the ID of a dashboard session, so that a browser,
// which cannot set an Authorization header on a link, can authenticate
// too. It never holds the token itself: the session maps to the token on
// the server, so that logging out or revoking the token ends it.
const sessionCookie = "drover_session"

// bearer returns the secret of the request's Authorization header, ok
// false when there is none, or an error when it is malformed.
func bearer(r *http.Request) (secret string, ok bool, err error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false, nil
	}
	scheme, rest, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(rest) == "" {
		return "", true, fmt.Errorf("authorization header: use \"Bearer <token>\"")
	}
	return strings.TrimSpace(rest), true, nil
}

// lookup returns the token whose secret this is. Looking the hash up in a
// map leaks nothing useful through timing: an attacker learns about
// hashes, not secrets.
func (a *authenticator) lookup(secret string) (*Token, error) {
	tok, ok := a.byHash[sha256.Sum256([]byte(secret))]
	if !ok {
		return nil, fmt.Errorf("unknown or revoked token")
	}
	return tok, nil
}
