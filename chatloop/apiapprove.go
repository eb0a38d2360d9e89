package chatloop

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// Approvals of the HTTP API. The API keeps no conversation: a turn that
// needs approval answers 202 with its pending calls, and the client sends
// the whole conversation back with its answers. An answer must not be
// able to approve anything but the call the client was shown. The
// provider's call ids cannot key them: providers number calls afresh in
// each message (call_0, call_1, ...), so "yes to call_0" would also run a
// later call_0 nobody saw. So the hub issues an id of its own for each
// pending call, and an answer counts only if its id is
//
//   - one the hub issued (crypto/rand.Text, 130 random bits: not
//     guessable) and not yet
//     used (taken on use: single-use) nor expired (PendingApprovalTTL);
//   - presented by the principal it was issued to;
//   - for the same conversation (system prompt, toolset and every message
//     up to the one that made the call, compared as canonical JSON so a
//     client may re-encode it) and the same call: provider call id, tool
//     and arguments exactly as shown.
//
// Anything else leaves the call pending, with a new id.

// Bounds of the pending approvals one Handler keeps in memory.
const (
	// PendingApprovalTTL is how long an issued id may be answered.
	PendingApprovalTTL = time.Hour
	// MaxPendingApprovals bounds the ids kept for all principals; at the
	// bound the oldest is forgotten (its call is asked again).
	MaxPendingApprovals = 10000
	// MaxPendingPerPrincipal bounds one principal's ids (its oldest is
	// forgotten first), so that pushing other principals' ids out takes
	// MaxPendingApprovals/MaxPendingPerPrincipal principals.
	MaxPendingPerPrincipal = 100
)

// approvalKey is everything an issued id is bound to.
type approvalKey struct {
	principal    string
	conversation [sha256.Size]byte
	callID, tool string
	arguments    string // canonical JSON
}

type issuedApproval struct {
	key     approvalKey
	expires time.Time
}

// approvalStore holds the ids issued by one Handler. It is safe for
// concurrent use.
type approvalStore struct {
	now func() time.Time

	mu           sync.Mutex
	byID         map[string]issuedApproval
	perPrincipal map[string]int
}

func newApprovalStore() *approvalStore {
	return &approvalStore{now: time.Now, byID: map[string]issuedApproval{}, perPrincipal: map[string]int{}}
}

// issue returns a new id bound to key.
func (s *approvalStore) issue(key approvalKey) string {
	id := "ap_" + rand.Text()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.byID) >= MaxPendingApprovals || s.perPrincipal[key.principal] >= MaxPendingPerPrincipal {
		s.dropExpired(now)
	}
	if s.perPrincipal[key.principal] >= MaxPendingPerPrincipal {
		s.dropOldest(key.principal)
	}
	if len(s.byID) >= MaxPendingApprovals {
		s.dropOldest("")
	}
	s.byID[id] = issuedApproval{key: key, expires: now.Add(PendingApprovalTTL)}
	s.perPrincipal[key.principal]++
	return id
}

// take consumes id if it was issued for key and has not expired.
func (s *approvalStore) take(id string, key approvalKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.byID[id]
	if !ok || a.key != key {
		return false
	}
	s.remove(id)
	return s.now().Before(a.expires)
}

func (s *approvalStore) remove(id string) {
	p := s.byID[id].key.principal
	delete(s.byID, id)
	if s.perPrincipal[p]--; s.perPrincipal[p] <= 0 {
		delete(s.perPrincipal, p)
	}
}

func (s *approvalStore) dropExpired(now time.Time) {
	for id, a := range s.byID {
		if !now.Before(a.expires) {
			s.remove(id)
		}
	}
}

// dropOldest forgets the id closest to expiry, of principal (or of
// anyone, for "").
func (s *approvalStore) dropOldest(principal string) {
	oldest, first := "", time.Time{}
	for id, a := range s.byID {
		if (principal == "" || a.key.principal == principal) && (oldest == "" || a.expires.Before(first)) {
			oldest, first = id, a.expires
		}
	}
	if oldest != "" {
		s.remove(oldest)
	}
}

// apiApprovals decides the calls of one POST /v1/chat request.
type apiApprovals struct {
	store           *approvalStore
	principal       string
	system, toolset string
	answers         map[string]string // id -> the client's answer
}

// approver is the request's Approver: a call runs (or is refused) only
// on an answer whose id was issued for exactly this call; otherwise it
// stays pending.
func (a *apiApprovals) approver(_ context.Context, req ApprovalRequest) Decision {
	if len(a.answers) == 0 {
		return Pending
	}
	key := a.key(req.Conversation, req.Call.ID, req.Tool, string(req.Call.Arguments))
	for id, answer := range a.answers {
		if !a.store.take(id, key) {
			continue
		}
		delete(a.answers, id)
		switch strings.ToLower(answer) {
		case "yes", "y", "approve", "approved", "allow":
			return Allow
		}
		return Refuse
	}
	return Pending
}

// issue gives each pending call of a turn its id; history is the
// conversation the turn stopped at (ending with the calls' message).
func (a *apiApprovals) issue(history []Message, calls []PendingApproval) {
	for i := range calls {
		c := &calls[i]
		c.ID = a.store.issue(a.key(history, c.CallID, c.Tool, c.Arguments))
	}
}

func (a *apiApprovals) key(history []Message, callID, tool, args string) approvalKey {
	k := approvalKey{principal: a.principal, callID: callID, tool: tool, arguments: args}
	conv, err := canonicalJSON(struct {
		System   string    `json:"system"`
		Toolset  string    `json:"toolset"`
		Messages []Message `json:"messages"`
	}{a.system, a.toolset, history})
	if err != nil {
		// Not JSON (arguments a provider garbled): bind to nothing that
		// can ever be presented again, so the call is never approved.
		rand.Read(k.conversation[:])
		return k
	}
	k.conversation = sha256.Sum256(conv)
	if canon, err := canonicalJSON(json.RawMessage(args)); err == nil && args != "" {
		k.arguments = string(canon)
	}
	return k
}

// canonicalJSON re-encodes v so that two encodings of one value compare
// equal: object keys sorted, no spaces, numbers as written.
func canonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}
