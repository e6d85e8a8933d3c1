package domain

import "time"

// UserPrefix names user streams.
const UserPrefix = "user"

// User is a person in the organisation, with an organisation role. Workspace membership is
// held by the workspace.
type User struct {
	ID             string    `json:"id"`
	OrganisationID string    `json:"organisation_id"`
	Email          string    `json:"email"`
	FirstName      string    `json:"first_name"`
	LastName       string    `json:"last_name"`
	Role           Role      `json:"role"`
	Status         string    `json:"status"` // active, removed
	CreatedAt      time.Time `json:"created_at"`
	LastUpdatedAt  time.Time `json:"last_updated_at"`
}

// UserJoined: a user became a member of the organisation (bootstrap owner, or an accepted
// invite).
type UserJoined struct {
	UserID         string    `json:"user_id"`
	OrganisationID string    `json:"organisation_id"`
	Email          string    `json:"email"`
	FirstName      string    `json:"first_name,omitempty"`
	LastName       string    `json:"last_name,omitempty"`
	Role           Role      `json:"role"`
	InviteID       string    `json:"invite_id,omitempty"`
	At             time.Time `json:"at"`
}

func (UserJoined) EventType() string { return "UserJoined" }

func userModule() module {
	return module{prefix: UserPrefix, aggregate: func() Aggregate { return &User{} }, events: []Event{UserJoined{}}}
}

func (u *User) Apply(e Event) {
	switch e := e.(type) {
	case UserJoined:
		*u = User{ID: e.UserID, OrganisationID: e.OrganisationID, Email: e.Email, FirstName: e.FirstName,
			LastName: e.LastName, Role: e.Role, Status: StatusActive, CreatedAt: e.At, LastUpdatedAt: e.At}
	}
}

func (u *User) Exists() bool { return u.ID != "" && u.Status == StatusActive }

// Join decides a user's joining.
func (u *User) Join(e UserJoined) ([]Event, error) {
	if u.ID != "" {
		return nil, Errorf(CodeConflict, "user exists already")
	}
	if !ValidEmail(e.Email) {
		return nil, Invalid("email", "email is not an e-mail address")
	}
	if _, ok := ParseOrgRole(string(e.Role)); !ok {
		return nil, Invalid("role", "role must be owner, admin or member (got %q)", e.Role)
	}
	return []Event{e}, nil
}
