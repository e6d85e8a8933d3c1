package domain

import (
	"crypto/subtle"
	"fmt"
	"strings"
	"time"
)

// InvitePrefix names invite streams.
const InvitePrefix = "invite"

// InviteTTL is how long an invite can be accepted after it was sent (or last resent).
const InviteTTL = 7 * 24 * time.Hour

// Invite statuses. Expired is also computed: a pending invite whose expires_at has passed is
// expired whether or not an InviteExpired event has been recorded yet.
const (
	InviteStatusPending   = "pending"
	InviteStatusAccepted  = "accepted"
	InviteStatusCancelled = "cancelled"
	InviteStatusExpired   = "expired"
)

// InviteWorkspace is a workspace the invitee joins on acceptance, with their role there.
type InviteWorkspace struct {
	WorkspaceID string `json:"workspace_id"`
	Role        Role   `json:"role"`
}

// InviteKeyDetails asks for a workspace-user API key with these scopes in each invited
// workspace when the invite is accepted.
type InviteKeyDetails struct {
	Scopes []string `json:"scopes"`
}

// Invite is an invitation to join the organisation. Its token is the credential that accepts
// it: only the token's SHA-256 is kept, and never shown.
type Invite struct {
	ID                     string            `json:"id"`
	OrganisationID         string            `json:"organisation_id"`
	Email                  string            `json:"email"`
	Role                   Role              `json:"role"`
	Workspaces             []InviteWorkspace `json:"workspaces"`
	WorkspaceAPIKeyDetails *InviteKeyDetails `json:"workspace_api_key_details"`
	Status                 string            `json:"status"`
	InvitedBy              string            `json:"invited_by"`
	UserID                 string            `json:"user_id,omitempty"`
	SentCount              int               `json:"sent_count"`
	CreatedAt              time.Time         `json:"created_at"`
	ExpiresAt              time.Time         `json:"expires_at"`
	AcceptedAt             *time.Time        `json:"accepted_at"`
	CancelledAt            *time.Time        `json:"cancelled_at"`
	LastUpdatedAt          time.Time         `json:"last_updated_at"`

	TokenHash string `json:"-"`
}

type InviteCreated struct {
	InviteID               string            `json:"invite_id"`
	OrganisationID         string            `json:"organisation_id"`
	Email                  string            `json:"email"`
	Role                   Role              `json:"role"`
	Workspaces             []InviteWorkspace `json:"workspaces,omitempty"`
	WorkspaceAPIKeyDetails *InviteKeyDetails `json:"workspace_api_key_details,omitempty"`
	TokenHash              string            `json:"token_hash"`
	InvitedBy              string            `json:"invited_by"`
	ExpiresAt              time.Time         `json:"expires_at"`
	At                     time.Time         `json:"at"`
}

// InviteResent replaces the token (the old link stops working) and extends the expiry.
type InviteResent struct {
	InviteID  string    `json:"invite_id"`
	TokenHash string    `json:"token_hash"`
	ResentBy  string    `json:"resent_by"`
	ExpiresAt time.Time `json:"expires_at"`
	At        time.Time `json:"at"`
}

type InviteCancelled struct {
	InviteID    string    `json:"invite_id"`
	CancelledBy string    `json:"cancelled_by"`
	At          time.Time `json:"at"`
}

// InviteAccepted: the first use of the token; UserID is the user it creates.
type InviteAccepted struct {
	InviteID string    `json:"invite_id"`
	UserID   string    `json:"user_id"`
	At       time.Time `json:"at"`
}

// InviteExpired is recorded when an attempt to accept finds the invite past its expiry.
type InviteExpired struct {
	InviteID string    `json:"invite_id"`
	At       time.Time `json:"at"`
}

func (InviteCreated) EventType() string   { return "InviteCreated" }
func (InviteResent) EventType() string    { return "InviteResent" }
func (InviteCancelled) EventType() string { return "InviteCancelled" }
func (InviteAccepted) EventType() string  { return "InviteAccepted" }
func (InviteExpired) EventType() string   { return "InviteExpired" }

func inviteModule() module {
	return module{prefix: InvitePrefix, aggregate: func() Aggregate { return &Invite{} },
		events: []Event{InviteCreated{}, InviteResent{}, InviteCancelled{}, InviteAccepted{}, InviteExpired{}}}
}

func (i *Invite) Apply(e Event) {
	switch e := e.(type) {
	case InviteCreated:
		*i = Invite{ID: e.InviteID, OrganisationID: e.OrganisationID, Email: e.Email, Role: e.Role,
			Workspaces: e.Workspaces, WorkspaceAPIKeyDetails: e.WorkspaceAPIKeyDetails, Status: InviteStatusPending,
			InvitedBy: e.InvitedBy, SentCount: 1, CreatedAt: e.At, ExpiresAt: e.ExpiresAt, LastUpdatedAt: e.At,
			TokenHash: e.TokenHash}
	case InviteResent:
		i.TokenHash, i.ExpiresAt, i.Status = e.TokenHash, e.ExpiresAt, InviteStatusPending
		i.SentCount++
		i.LastUpdatedAt = e.At
	case InviteCancelled:
		at := e.At
		i.Status, i.CancelledAt, i.LastUpdatedAt = InviteStatusCancelled, &at, e.At
	case InviteAccepted:
		at := e.At
		i.Status, i.UserID, i.AcceptedAt, i.LastUpdatedAt = InviteStatusAccepted, e.UserID, &at, e.At
	case InviteExpired:
		i.Status, i.LastUpdatedAt = InviteStatusExpired, e.At
	}
}

// Exists reports whether the invite was created.
func (i *Invite) Exists() bool { return i.ID != "" }

// StatusAt is the invite's status at now: a pending invite past its expiry is expired.
func (i *Invite) StatusAt(now time.Time) string {
	if i.Status == InviteStatusPending && !now.Before(i.ExpiresAt) {
		return InviteStatusExpired
	}
	return i.Status
}

// AlreadyMember is the dedicated error of joining, or being invited, as an existing member.
func AlreadyMember(email string) *Error {
	return &Error{Code: CodeConflict, Detail: "already_member", Param: "email",
		Message: fmt.Sprintf("%s is already a member of the organisation", email)}
}

// InvitePending refuses a second pending invite for one e-mail.
func InvitePending(email, pendingID string) *Error {
	return &Error{Code: CodeConflict, Param: "email", Detail: "invite_pending",
		Message: fmt.Sprintf("an invite for %s is pending already (%s): resend or cancel it", email, pendingID)}
}

// NormaliseEmail is how e-mails are compared and reserved: trimmed, lower case.
func NormaliseEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// NewInviteToken returns a fresh token for invite id: the id, so that acceptance can find
// the invite, and 256 random bits, which are the secret.
func NewInviteToken(inviteID string) string {
	return inviteID + "." + strings.TrimPrefix(NewSecretKey(), "cw-")
}

// DeriveInviteToken returns the token a retried create or resend must answer with again,
// derived from the server secret and the request's identity, as DeriveSecretKey does for keys.
func DeriveInviteToken(secret []byte, inviteID, material string) string {
	return inviteID + "." + strings.TrimPrefix(DeriveSecretKey(secret, "invite\x00"+inviteID+"\x00"+material), "cw-")
}

// InviteIDOfToken returns the invite id a token names; false when it has not the token's form.
func InviteIDOfToken(token string) (string, bool) {
	id, secret, ok := strings.Cut(strings.TrimSpace(token), ".")
	return id, ok && len(id) == 36 && len(secret) >= 32
}

// CreateInvite is the invite command's input, already decoded; workspace ids are resolved.
// Member and PendingInviteID are what the command found: an active member with this e-mail,
// and another invite for it that is still pending.
type CreateInvite struct {
	InviteID        string
	OrganisationID  string
	Email           string
	Role            string
	Workspaces      []InviteWorkspace
	KeyDetails      *InviteKeyDetails
	Token           string
	InvitedBy       string
	Member          bool
	PendingInviteID string
}

// Create decides an invite. The fields are checked before the state, so that a bad request
// is told what is wrong with it first.
func (i *Invite) Create(c CreateInvite, now time.Time) ([]Event, error) {
	ev, err := NewInvite(c, now)
	if err != nil {
		return nil, err
	}
	if i.Exists() {
		return nil, Errorf(CodeConflict, "invite %s exists already", c.InviteID)
	}
	if c.Member {
		return nil, AlreadyMember(ev.Email)
	}
	if c.PendingInviteID != "" && c.PendingInviteID != c.InviteID {
		return nil, InvitePending(ev.Email, c.PendingInviteID)
	}
	return []Event{ev}, nil
}

// NewInvite validates and normalises an invite's fields: the e-mail lower case, the roles
// lower case (they are accepted in any case).
func NewInvite(c CreateInvite, now time.Time) (InviteCreated, error) {
	email := NormaliseEmail(c.Email)
	if email == "" {
		return InviteCreated{}, Invalid("email", "email is required")
	}
	if !ValidEmail(email) {
		return InviteCreated{}, Invalid("email", "email is not an e-mail address (at most 254 characters)")
	}
	role, ok := ParseOrgRole(c.Role)
	if !ok || role == RoleOwner {
		return InviteCreated{}, Invalid("role", "role must be admin or member (got %q)", c.Role)
	}
	seen := map[string]bool{}
	workspaces := make([]InviteWorkspace, 0, len(c.Workspaces))
	for n, w := range c.Workspaces {
		id := strings.TrimSpace(w.WorkspaceID)
		if id == "" {
			return InviteCreated{}, Invalid(fmt.Sprintf("workspaces[%d].id", n), "workspaces[%d].id is required", n)
		}
		if seen[id] {
			return InviteCreated{}, Invalid(fmt.Sprintf("workspaces[%d].id", n), "workspaces[%d].id names workspace %s a second time", n, id)
		}
		seen[id] = true
		wr, ok := ParseWorkspaceRole(string(w.Role))
		if !ok {
			return InviteCreated{}, Invalid(fmt.Sprintf("workspaces[%d].role", n), "workspaces[%d].role must be admin, manager or member (got %q)", n, w.Role)
		}
		workspaces = append(workspaces, InviteWorkspace{WorkspaceID: id, Role: wr})
	}
	if c.KeyDetails != nil {
		if len(workspaces) == 0 {
			return InviteCreated{}, Invalid("workspace_api_key_details", "workspace_api_key_details needs at least one workspace in workspaces")
		}
		if err := validateScopes(c.KeyDetails.Scopes, KeyWorkspaceUser); err != nil {
			return InviteCreated{}, prefixParam("workspace_api_key_details.", err)
		}
	}
	if c.Token == "" {
		return InviteCreated{}, Errorf(CodeInternal, "an invite needs a token")
	}
	return InviteCreated{InviteID: c.InviteID, OrganisationID: c.OrganisationID, Email: email, Role: role,
		Workspaces: workspaces, WorkspaceAPIKeyDetails: c.KeyDetails, TokenHash: HashKey(c.Token),
		InvitedBy: c.InvitedBy, ExpiresAt: now.Add(InviteTTL), At: now}, nil
}

func prefixParam(prefix string, err error) error {
	if e, ok := err.(*Error); ok && e.Param != "" {
		out := *e
		out.Param = prefix + e.Param
		out.Message = prefix + e.Message
		return &out
	}
	return err
}

func (i *Invite) refuseClosed() error {
	switch i.Status {
	case InviteStatusAccepted:
		return &Error{Code: CodeConflict, Detail: "invite_accepted", Message: "the invite has been accepted already"}
	case InviteStatusCancelled:
		return &Error{Code: CodeConflict, Detail: "invite_cancelled", Message: "the invite has been cancelled"}
	}
	return nil
}

// Resend decides sending the invite again with a new token: the old link stops working and
// the invite is valid for another seven days. An expired invite may be resent; an accepted or
// cancelled one may not.
func (i *Invite) Resend(token, by string, now time.Time) ([]Event, error) {
	if !i.Exists() {
		return nil, Errorf(CodeNotFound, "invite not found")
	}
	if err := i.refuseClosed(); err != nil {
		return nil, err
	}
	if token == "" {
		return nil, Errorf(CodeInternal, "an invite needs a token")
	}
	return []Event{InviteResent{InviteID: i.ID, TokenHash: HashKey(token), ResentBy: by, ExpiresAt: now.Add(InviteTTL), At: now}}, nil
}

// Cancel decides the cancellation of a pending (or expired) invite.
func (i *Invite) Cancel(by string, now time.Time) ([]Event, error) {
	if !i.Exists() {
		return nil, Errorf(CodeNotFound, "invite not found")
	}
	if err := i.refuseClosed(); err != nil {
		return nil, err
	}
	return []Event{InviteCancelled{InviteID: i.ID, CancelledBy: by, At: now}}, nil
}

// AcceptInvite is the acceptance's input: the presented token, the user it will create and
// their names, and whether the e-mail already belongs to an active member.
type AcceptInvite struct {
	Token     string
	UserID    string
	FirstName string
	LastName  string
	Member    bool
}

// Accept decides the first use of the token. A wrong token is "not found", whatever the
// invite, so a guess learns nothing; a used, cancelled or expired invite is a conflict.
func (i *Invite) Accept(c AcceptInvite, now time.Time) ([]Event, error) {
	if err := validatePersonNames(&c.FirstName, &c.LastName); err != nil {
		return nil, err
	}
	if !i.Exists() || i.TokenHash == "" ||
		subtle.ConstantTimeCompare([]byte(HashKey(c.Token)), []byte(i.TokenHash)) != 1 {
		return nil, &Error{Code: CodeNotFound, Param: "token", Message: "no invite has this token"}
	}
	if err := i.refuseClosed(); err != nil {
		return nil, err
	}
	if i.StatusAt(now) == InviteStatusExpired {
		return nil, &Error{Code: CodeConflict, Param: "token", Detail: "invite_expired",
			Message: fmt.Sprintf("the invite expired at %s: ask for it to be resent", i.ExpiresAt.UTC().Format(time.RFC3339))}
	}
	if c.Member {
		return nil, AlreadyMember(i.Email)
	}
	return []Event{InviteAccepted{InviteID: i.ID, UserID: c.UserID, At: now}}, nil
}

// Expire records that a pending invite is past its expiry; nothing otherwise.
func (i *Invite) Expire(now time.Time) []Event {
	if !i.Exists() || i.Status != InviteStatusPending || now.Before(i.ExpiresAt) {
		return nil
	}
	return []Event{InviteExpired{InviteID: i.ID, At: now}}
}
