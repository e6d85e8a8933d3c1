package domain

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The invite and user tests share these; t0 is gwt_test.go's.
const (
	invID  = "0b7ae0c4-7d4f-4a40-a1cc-3c8f1fd0c8b1"
	invWsA = "7f1c3a55-93a2-4f54-9f3e-3c1f3a8e0a01"
	invWsB = "7f1c3a55-93a2-4f54-9f3e-3c1f3a8e0a02"
)

// invFold folds events into a fresh aggregate: the "given" of a decision test.
func invFold[A Aggregate](agg A, events ...Event) A {
	for _, e := range events {
		agg.Apply(e)
	}
	return agg
}

// invWant is the error a decision must refuse with; zero Code means it must succeed.
type invWant struct {
	Code   Code
	Param  string
	Detail string
}

// invThen checks a decision's outcome: the events it decided, or the error it refused with.
func invThen(t *testing.T, got []Event, err error, want []Event, werr invWant) {
	t.Helper()
	if werr.Code != "" {
		require.Error(t, err)
		var e *Error
		require.True(t, errors.As(err, &e), "an application error: %v", err)
		assert.Equal(t, werr.Code, e.Code, e.Message)
		assert.Equal(t, werr.Param, e.Param, e.Message)
		assert.Equal(t, werr.Detail, e.Detail, e.Message)
		assert.NotEmpty(t, e.Message)
		assert.Empty(t, got)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

const invToken1 = "0b7ae0c4-7d4f-4a40-a1cc-3c8f1fd0c8b1.first-token-0123456789abcdefghijklmnop"
const invToken2 = "0b7ae0c4-7d4f-4a40-a1cc-3c8f1fd0c8b1.second-token-0123456789abcdefghijklmno"

func invCreated() InviteCreated {
	return InviteCreated{InviteID: invID, OrganisationID: "org", Email: "ann@example.com", Role: RoleMember,
		Workspaces: []InviteWorkspace{{WorkspaceID: invWsA, Role: RoleManager}}, TokenHash: HashKey(invToken1),
		InvitedBy: "admin-key", ExpiresAt: t0.Add(InviteTTL), At: t0}
}

func TestInviteCreate(t *testing.T) {
	valid := func() CreateInvite {
		return CreateInvite{InviteID: invID, OrganisationID: "org", Email: " Ann@Example.COM ", Role: "MEMBER",
			Workspaces: []InviteWorkspace{{WorkspaceID: invWsA, Role: "Manager"}}, Token: invToken1, InvitedBy: "admin-key"}
	}
	with := func(f func(*CreateInvite)) CreateInvite { c := valid(); f(&c); return c }
	withKey := invCreated()
	withKey.WorkspaceAPIKeyDetails = &InviteKeyDetails{Scopes: []string{"logs.view", "completions.write"}}
	cases := []struct {
		name  string
		given []Event
		when  CreateInvite
		then  []Event
		err   invWant
	}{
		{"roles and e-mail are normalised to lower case", nil, valid(), []Event{invCreated()}, invWant{}},
		{"key details with workspace scopes", nil, with(func(c *CreateInvite) {
			c.KeyDetails = &InviteKeyDetails{Scopes: []string{"logs.view", "completions.write"}}
		}), []Event{withKey}, invWant{}},
		{"e-mail missing", nil, with(func(c *CreateInvite) { c.Email = " " }), nil, invWant{Code: CodeInvalid, Param: "email"}},
		{"e-mail malformed", nil, with(func(c *CreateInvite) { c.Email = "ann.example.com" }), nil, invWant{Code: CodeInvalid, Param: "email"}},
		{"e-mail at 254", nil, with(func(c *CreateInvite) { c.Email = strings.Repeat("a", 242) + "@example.com" }), nil, invWant{}},
		{"e-mail at 255", nil, with(func(c *CreateInvite) { c.Email = strings.Repeat("a", 243) + "@example.com" }), nil, invWant{Code: CodeInvalid, Param: "email"}},
		{"owner cannot be invited", nil, with(func(c *CreateInvite) { c.Role = "owner" }), nil, invWant{Code: CodeInvalid, Param: "role"}},
		{"unknown role", nil, with(func(c *CreateInvite) { c.Role = "manager" }), nil, invWant{Code: CodeInvalid, Param: "role"}},
		{"unknown workspace role", nil, with(func(c *CreateInvite) { c.Workspaces[0].Role = "owner" }), nil, invWant{Code: CodeInvalid, Param: "workspaces[0].role"}},
		{"workspace id missing", nil, with(func(c *CreateInvite) { c.Workspaces[0].WorkspaceID = "" }), nil, invWant{Code: CodeInvalid, Param: "workspaces[0].id"}},
		{"workspace named twice", nil, with(func(c *CreateInvite) {
			c.Workspaces = append(c.Workspaces, InviteWorkspace{WorkspaceID: invWsA, Role: RoleMember})
		}), nil, invWant{Code: CodeInvalid, Param: "workspaces[1].id"}},
		{"unknown key scope", nil, with(func(c *CreateInvite) { c.KeyDetails = &InviteKeyDetails{Scopes: []string{"logs.view", "fly"}} }),
			nil, invWant{Code: CodeInvalid, Param: "workspace_api_key_details.scopes[1]"}},
		{"organisation scope on a workspace key", nil, with(func(c *CreateInvite) {
			c.KeyDetails = &InviteKeyDetails{Scopes: []string{"organisation_users.create"}}
		}), nil, invWant{Code: CodeInvalid, Param: "workspace_api_key_details.scopes[0]"}},
		{"no key scopes", nil, with(func(c *CreateInvite) { c.KeyDetails = &InviteKeyDetails{} }),
			nil, invWant{Code: CodeInvalid, Param: "workspace_api_key_details.scopes"}},
		{"key details without a workspace", nil, with(func(c *CreateInvite) {
			c.Workspaces, c.KeyDetails = nil, &InviteKeyDetails{Scopes: []string{"logs.view"}}
		}), nil, invWant{Code: CodeInvalid, Param: "workspace_api_key_details"}},
		{"an existing member", nil, with(func(c *CreateInvite) { c.Member = true }), nil,
			invWant{Code: CodeConflict, Param: "email", Detail: "already_member"}},
		{"another pending invite", nil, with(func(c *CreateInvite) { c.PendingInviteID = invWsB }), nil,
			invWant{Code: CodeConflict, Param: "email", Detail: "invite_pending"}},
		{"exists already", []Event{invCreated()}, valid(), nil, invWant{Code: CodeConflict}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := invFold(&Invite{}, tc.given...).Create(tc.when, t0)
			if tc.then == nil && tc.err.Code == "" {
				require.NoError(t, err)
				return
			}
			invThen(t, got, err, tc.then, tc.err)
		})
	}
}

func TestInviteResendCancelAcceptExpire(t *testing.T) {
	accepted := InviteAccepted{InviteID: invID, UserID: "user-1", At: t0.Add(time.Hour)}
	cancelled := InviteCancelled{InviteID: invID, CancelledBy: "admin-key", At: t0.Add(time.Hour)}
	expired := InviteExpired{InviteID: invID, At: t0.Add(InviteTTL)}
	resent := InviteResent{InviteID: invID, TokenHash: HashKey(invToken2), ResentBy: "admin-key",
		ExpiresAt: t0.Add(8 * 24 * time.Hour).Add(InviteTTL), At: t0.Add(8 * 24 * time.Hour)}
	later := t0.Add(8 * 24 * time.Hour)
	cases := []struct {
		name  string
		given []Event
		when  func(*Invite) ([]Event, error)
		then  []Event
		err   invWant
	}{
		{"resend replaces the token and extends the expiry, even once expired", []Event{invCreated(), expired},
			func(i *Invite) ([]Event, error) { return i.Resend(invToken2, "admin-key", later) }, []Event{resent}, invWant{}},
		{"resend of an accepted invite", []Event{invCreated(), accepted},
			func(i *Invite) ([]Event, error) { return i.Resend(invToken2, "k", later) }, nil, invWant{Code: CodeConflict, Detail: "invite_accepted"}},
		{"resend of a cancelled invite", []Event{invCreated(), cancelled},
			func(i *Invite) ([]Event, error) { return i.Resend(invToken2, "k", later) }, nil, invWant{Code: CodeConflict, Detail: "invite_cancelled"}},
		{"resend of nothing", nil,
			func(i *Invite) ([]Event, error) { return i.Resend(invToken2, "k", later) }, nil, invWant{Code: CodeNotFound}},
		{"cancel a pending invite", []Event{invCreated()},
			func(i *Invite) ([]Event, error) { return i.Cancel("admin-key", t0.Add(time.Hour)) }, []Event{cancelled}, invWant{}},
		{"cancel twice", []Event{invCreated(), cancelled},
			func(i *Invite) ([]Event, error) { return i.Cancel("k", later) }, nil, invWant{Code: CodeConflict, Detail: "invite_cancelled"}},
		{"cancel an accepted invite", []Event{invCreated(), accepted},
			func(i *Invite) ([]Event, error) { return i.Cancel("k", later) }, nil, invWant{Code: CodeConflict, Detail: "invite_accepted"}},
		{"cancel nothing", nil,
			func(i *Invite) ([]Event, error) { return i.Cancel("k", later) }, nil, invWant{Code: CodeNotFound}},
		{"first use accepts", []Event{invCreated()},
			func(i *Invite) ([]Event, error) {
				return i.Accept(AcceptInvite{Token: invToken1, UserID: "user-1"}, t0.Add(time.Hour))
			}, []Event{accepted}, invWant{}},
		{"a second use is refused", []Event{invCreated(), accepted},
			func(i *Invite) ([]Event, error) {
				return i.Accept(AcceptInvite{Token: invToken1, UserID: "user-2"}, t0.Add(2*time.Hour))
			},
			nil, invWant{Code: CodeConflict, Detail: "invite_accepted"}},
		{"a wrong token is not found", []Event{invCreated()},
			func(i *Invite) ([]Event, error) { return i.Accept(AcceptInvite{Token: invToken2, UserID: "u"}, t0) },
			nil, invWant{Code: CodeNotFound, Param: "token"}},
		{"the old token stops working after a resend", []Event{invCreated(), resent},
			func(i *Invite) ([]Event, error) { return i.Accept(AcceptInvite{Token: invToken1, UserID: "u"}, later) },
			nil, invWant{Code: CodeNotFound, Param: "token"}},
		{"the new token works after a resend", []Event{invCreated(), resent},
			func(i *Invite) ([]Event, error) {
				return i.Accept(AcceptInvite{Token: invToken2, UserID: "user-1"}, later)
			},
			[]Event{InviteAccepted{InviteID: invID, UserID: "user-1", At: later}}, invWant{}},
		{"one instant before expiry is accepted", []Event{invCreated()},
			func(i *Invite) ([]Event, error) {
				return i.Accept(AcceptInvite{Token: invToken1, UserID: "u"}, t0.Add(InviteTTL-time.Nanosecond))
			}, []Event{InviteAccepted{InviteID: invID, UserID: "u", At: t0.Add(InviteTTL - time.Nanosecond)}}, invWant{}},
		{"at expiry it is refused", []Event{invCreated()},
			func(i *Invite) ([]Event, error) {
				return i.Accept(AcceptInvite{Token: invToken1, UserID: "u"}, t0.Add(InviteTTL))
			},
			nil, invWant{Code: CodeConflict, Param: "token", Detail: "invite_expired"}},
		{"a cancelled invite is refused", []Event{invCreated(), cancelled},
			func(i *Invite) ([]Event, error) {
				return i.Accept(AcceptInvite{Token: invToken1, UserID: "u"}, t0.Add(2*time.Hour))
			},
			nil, invWant{Code: CodeConflict, Detail: "invite_cancelled"}},
		{"first name at 255", []Event{invCreated()},
			func(i *Invite) ([]Event, error) {
				return i.Accept(AcceptInvite{Token: invToken1, UserID: "u", FirstName: strings.Repeat("f", 255)}, t0)
			}, []Event{InviteAccepted{InviteID: invID, UserID: "u", At: t0}}, invWant{}},
		{"first name at 256", []Event{invCreated()},
			func(i *Invite) ([]Event, error) {
				return i.Accept(AcceptInvite{Token: invToken1, UserID: "u", FirstName: strings.Repeat("f", 256)}, t0)
			}, nil, invWant{Code: CodeInvalid, Param: "first_name"}},
		{"last name at 256", []Event{invCreated()},
			func(i *Invite) ([]Event, error) {
				return i.Accept(AcceptInvite{Token: invToken1, UserID: "u", LastName: strings.Repeat("l", 256)}, t0)
			}, nil, invWant{Code: CodeInvalid, Param: "last_name"}},
		{"joining as an existing member", []Event{invCreated()},
			func(i *Invite) ([]Event, error) {
				return i.Accept(AcceptInvite{Token: invToken1, UserID: "u", Member: true}, t0.Add(time.Hour))
			}, nil, invWant{Code: CodeConflict, Param: "email", Detail: "already_member"}},
		{"expiry is recorded once past expires_at", []Event{invCreated()},
			func(i *Invite) ([]Event, error) { return i.Expire(t0.Add(InviteTTL)), nil }, []Event{expired}, invWant{}},
		{"expiry is not recorded before expires_at", []Event{invCreated()},
			func(i *Invite) ([]Event, error) { return i.Expire(t0.Add(InviteTTL - time.Second)), nil }, nil, invWant{}},
		{"expiry is not recorded twice", []Event{invCreated(), expired},
			func(i *Invite) ([]Event, error) { return i.Expire(later), nil }, nil, invWant{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.when(invFold(&Invite{}, tc.given...))
			invThen(t, got, err, tc.then, tc.err)
		})
	}
}

func TestReservationStreamFitsTheEventStore(t *testing.T) {
	short := "ann@example.com"
	assert.Equal(t, "reservation-email-"+short, ReservationStream("email", short), "a name that fits is kept")
	long := strings.Repeat("a", 242) + "@example.com"
	got := ReservationStream("invite_email", long)
	assert.Equal(t, "reservation-invite_email-sha256-"+HashKey(long), got)
	assert.LessOrEqual(t, len(got), 255)
	edge := strings.Repeat("a", 255-len(ReservationStream("email", "")))
	assert.Len(t, ReservationStream("email", edge), 255, "a stream of exactly 255 characters fits")
	assert.LessOrEqual(t, len(ReservationStream("email", edge+"a")), 255)
}

func TestInviteStatusAndTokens(t *testing.T) {
	i := invFold(&Invite{}, invCreated())
	assert.Equal(t, InviteStatusPending, i.StatusAt(t0.Add(InviteTTL-time.Second)))
	assert.Equal(t, InviteStatusExpired, i.StatusAt(t0.Add(InviteTTL)), "expired is computed from the clock")
	assert.Equal(t, 1, i.SentCount)

	tok := NewInviteToken(invID)
	id, ok := InviteIDOfToken(tok)
	require.True(t, ok)
	assert.Equal(t, invID, id)
	assert.NotEqual(t, tok, NewInviteToken(invID), "tokens are random")
	secret := []byte(strings.Repeat("s", 32))
	assert.Equal(t, DeriveInviteToken(secret, invID, "k"), DeriveInviteToken(secret, invID, "k"), "a retry derives the same token")
	assert.NotEqual(t, DeriveInviteToken(secret, invID, "k"), DeriveInviteToken(secret, invID, "other"))
	for _, bad := range []string{"", "no-dot", invID + ".short", "x." + strings.Repeat("a", 40)} {
		_, ok := InviteIDOfToken(bad)
		assert.False(t, ok, bad)
	}
}
