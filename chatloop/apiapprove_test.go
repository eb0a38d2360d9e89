package chatloop

import (
	"testing"
	"time"
)

// TestApprovalStoreBounds: an id answers only its own call, once, before
// PendingApprovalTTL; one principal holds at most MaxPendingPerPrincipal
// ids (its oldest goes first) and cannot push out another's.
func TestApprovalStoreBounds(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	s := newApprovalStore()
	s.now = func() time.Time { return now }
	key := func(principal, callID string) approvalKey {
		return approvalKey{principal: principal, callID: callID, tool: "notes__delete", arguments: `{"id":"n1"}`}
	}

	bob := s.issue(key("bob", "b"))
	ids := make([]string, MaxPendingPerPrincipal+1)
	for i := range ids {
		now = now.Add(time.Millisecond)
		ids[i] = s.issue(key("alice", string(rune('a'+i%26))+string(rune('a'+i/26))))
		if i > 0 && ids[i] == ids[i-1] {
			t.Fatal("two issued ids are equal")
		}
	}
	if s.take(ids[0], key("alice", "aa")) {
		t.Error("alice's oldest id outlived MaxPendingPerPrincipal")
	}
	if got := s.perPrincipal["alice"]; got != MaxPendingPerPrincipal {
		t.Errorf("alice holds %d ids, want %d", got, MaxPendingPerPrincipal)
	}

	// Another call's key, another principal's: refused, and the id stays.
	if s.take(ids[1], key("alice", "zz")) || s.take(ids[1], key("mallory", "ba")) {
		t.Error("an id answered a call it was not issued for")
	}
	if !s.take(ids[1], key("alice", "ba")) {
		t.Error("the id did not answer its own call")
	}
	if s.take(ids[1], key("alice", "ba")) {
		t.Error("an id answered twice")
	}

	now = now.Add(PendingApprovalTTL)
	if s.take(bob, key("bob", "b")) {
		t.Error("an expired id answered")
	}
	// The counts follow every removal: only alice's ids remain.
	if len(s.perPrincipal) != 1 || s.perPrincipal["alice"] != MaxPendingPerPrincipal-1 {
		t.Errorf("counts after removals: %v", s.perPrincipal)
	}
}
