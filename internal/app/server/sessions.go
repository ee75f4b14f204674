package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

// Defaults for the dashboard's sessions.
const (
	// SessionTTLDefault is how long a dashboard login lasts: a working
	// day, so that a forgotten browser tab does not keep admin rights for
	// good.
	SessionTTLDefault = 12 * time.Hour
	// maxSessions bounds the sessions kept in memory. Only holders of an
	// admin token can create sessions, so this guards against a runaway
	// script rather than an attacker; past it, the session closest to
	// expiry gives way.
	maxSessions = 10_000
)

// session is one dashboard login: which token it stands for (by hash, so
// that the secret is not kept) and when it ends.
type session struct {
	tokenHash [sha256.Size]byte
	expires   time.Time
}

// sessions maps the random IDs of dashboard cookies to tokens. It is kept
// in memory only: a restart logs every browser out, which is the safe
// failure, and several servers behind one balancer each need their own
// login (documented in docs/security.md).
type sessions struct {
	ttl  time.Duration
	mu   sync.Mutex
	byID map[[sha256.Size]byte]session // keyed by the hash of the ID, as tokens are
}

func newSessions(ttl time.Duration) *sessions {
	return &sessions{ttl: ttl, byID: map[[sha256.Size]byte]session{}}
}

// create starts a session for a token and returns its ID, 256 random bits
// that name nothing and reveal nothing of the token.
func (s *sessions) create(tokenHash [sha256.Size]byte, now time.Time) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	id := base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byID) >= maxSessions {
		s.sweepLocked(now)
	}
	if len(s.byID) >= maxSessions {
		var oldest [sha256.Size]byte
		first := true
		for k, v := range s.byID {
			if first || v.expires.Before(s.byID[oldest].expires) {
				oldest, first = k, false
			}
		}
		delete(s.byID, oldest)
	}
	s.byID[sha256.Sum256([]byte(id))] = session{tokenHash: tokenHash, expires: now.Add(s.ttl)}
	return id, nil
}

// lookup returns the token hash of a live session. An expired session is
// deleted on sight.
func (s *sessions) lookup(id string, now time.Time) ([sha256.Size]byte, bool) {
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.byID[k]
	if ok && !now.Before(v.expires) {
		delete(s.byID, k)
		ok = false
	}
	return v.tokenHash, ok
}

// end deletes a session, as logging out does.
func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, sha256.Sum256([]byte(id)))
}

// retain keeps only the sessions whose token is still configured, so that
// a token removed from the tokens file ends its sessions at the reload
// rather than when they expire.
func (s *sessions) retain(keep func([sha256.Size]byte) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.byID {
		if !keep(v.tokenHash) {
			delete(s.byID, k)
		}
	}
}

func (s *sessions) sweepLocked(now time.Time) {
	for k, v := range s.byID {
		if !now.Before(v.expires) {
			delete(s.byID, k)
		}
	}
}
