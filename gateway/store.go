package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// SessionRecord is what a session store keeps of one HTTP session: enough
// for any replica to rebuild it (restore.go). Nothing in it is a secret:
// the principal is its id (a token's name, a JWT's issuer and subject).
type SessionRecord struct {
	ID      string `json:"id"`
	Toolset string `json:"toolset,omitempty"`
	// Principal is who opened the session (its principal ID): only the same
	// principal may use it on another replica.
	Principal string `json:"principal,omitempty"`
	// Init is the client's initialize params as it sent them (protocol
	// version, client info, capabilities).
	Init json.RawMessage `json:"init"`
	// Loaded are the exposed names of the deferred tools it has loaded.
	// Saving adds to the stored set, never removes: replicas that load
	// different tools for the same session, or write back after an
	// outage, add up.
	Loaded []string `json:"-"`
}

// SessionStore keeps session records where every replica can read them.
// Every method fails fast when the store cannot be reached: the caller
// bounds it with ctx.
//
// Only a session's owner changes its record: Save and Delete check the
// stored principal in the same transaction as the change; Touch is called
// only for a session held here, after the request's principal was found
// to be the one that holds it (prepareSession).
type SessionStore interface {
	// Save writes rec, whole, with a time to live; ErrNotOwner when a
	// record of another principal has that id.
	Save(ctx context.Context, rec *SessionRecord, ttl time.Duration) error
	// Load returns the record, or nil and no error when there is none.
	Load(ctx context.Context, id string) (*SessionRecord, error)
	// Touch restarts a record's time to live and returns its loaded
	// tools; found is false when there is no record.
	Touch(ctx context.Context, id string, ttl time.Duration) (loaded []string, found bool, err error)
	// Delete removes the record of principal's session id; false when
	// there is none, or it is another principal's (left as it is).
	Delete(ctx context.Context, id, principal string) (bool, error)
	// DropLegacyKey removes the hash key earlier versions kept in the
	// store when hash_key was not set; true when there was one.
	DropLegacyKey(ctx context.Context) (bool, error)
	Ping(ctx context.Context) error
	Close() error
}

// ErrNotOwner is what a SessionStore returns for a change refused because
// the stored session belongs to another principal.
var ErrNotOwner = errors.New("the stored session belongs to another principal")
