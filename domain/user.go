package domain

import "time"

// UserPrefix names user streams.
const UserPrefix = "user"

// UserStatusRemoved marks a user who was removed from the organisation; the stream stays, so
// the audit log can still say who they were.
const UserStatusRemoved = "removed"

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
	InviteID       string    `json:"invite_id,omitempty"`
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

// UserUpdated carries what changed: the organisation role, the names, or both.
type UserUpdated struct {
	UserID    string    `json:"user_id"`
	Role      *Role     `json:"role,omitempty"`
	FirstName *string   `json:"first_name,omitempty"`
	LastName  *string   `json:"last_name,omitempty"`
	At        time.Time `json:"at"`
}

// UserRemoved: the user left the organisation; their keys stop working and their e-mail may
// be invited again.
type UserRemoved struct {
	UserID string    `json:"user_id"`
	Email  string    `json:"email"`
	At     time.Time `json:"at"`
}

func (UserJoined) EventType() string  { return "UserJoined" }
func (UserUpdated) EventType() string { return "UserUpdated" }
func (UserRemoved) EventType() string { return "UserRemoved" }

func userModule() module {
	return module{prefix: UserPrefix, aggregate: func() Aggregate { return &User{} },
		events: []Event{UserJoined{}, UserUpdated{}, UserRemoved{}}}
}

func (u *User) Apply(e Event) {
	switch e := e.(type) {
	case UserJoined:
		*u = User{ID: e.UserID, OrganisationID: e.OrganisationID, Email: e.Email, FirstName: e.FirstName,
			LastName: e.LastName, Role: e.Role, Status: StatusActive, InviteID: e.InviteID, CreatedAt: e.At,
			LastUpdatedAt: e.At}
	case UserUpdated:
		if e.Role != nil {
			u.Role = *e.Role
		}
		if e.FirstName != nil {
			u.FirstName = *e.FirstName
		}
		if e.LastName != nil {
			u.LastName = *e.LastName
		}
		u.LastUpdatedAt = e.At
	case UserRemoved:
		u.Status, u.LastUpdatedAt = UserStatusRemoved, e.At
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
	if err := validatePersonNames(&e.FirstName, &e.LastName); err != nil {
		return nil, err
	}
	return []Event{e}, nil
}

func validatePersonNames(first, last *string) error {
	if first != nil {
		if err := ValidateName("first_name", *first, false); err != nil {
			return err
		}
	}
	if last != nil {
		if err := ValidateName("last_name", *last, false); err != nil {
			return err
		}
	}
	return nil
}

// UpdateUser changes a user's organisation role or names; nil fields stay as they are.
// ActorRole is the organisation role of whoever asks. OrganisationOwner says the user is the
// owner the organisation records: it must always have one, so that owner is never demoted
// (ownership is not transferable through this API).
type UpdateUser struct {
	Role              *string
	FirstName         *string
	LastName          *string
	ActorRole         Role
	OrganisationOwner bool
}

// Update decides a change of role or names.
func (u *User) Update(c UpdateUser, now time.Time) ([]Event, error) {
	if !u.Exists() {
		return nil, Errorf(CodeNotFound, "user not found")
	}
	if c.Role == nil && c.FirstName == nil && c.LastName == nil {
		return nil, Invalid("", "nothing to update: give role, first_name or last_name")
	}
	if err := validatePersonNames(c.FirstName, c.LastName); err != nil {
		return nil, err
	}
	ev := UserUpdated{UserID: u.ID, FirstName: c.FirstName, LastName: c.LastName, At: now}
	if c.Role != nil {
		role, ok := ParseOrgRole(*c.Role)
		if !ok {
			return nil, Invalid("role", "role must be owner, admin or member (got %q)", *c.Role)
		}
		if role == RoleOwner && c.ActorRole != RoleOwner && u.Role != RoleOwner {
			return nil, &Error{Code: CodeForbidden, Param: "role", Message: "only an owner can make someone an owner"}
		}
		if u.Role == RoleOwner && role != RoleOwner {
			if c.OrganisationOwner {
				return nil, &Error{Code: CodeConflict, Param: "role", Detail: "last_owner",
					Message: "the organisation's owner cannot be demoted: the organisation must keep its owner"}
			}
			if c.ActorRole != RoleOwner {
				return nil, &Error{Code: CodeForbidden, Param: "role", Message: "only an owner can change an owner's role"}
			}
		}
		ev.Role = &role
	}
	return []Event{ev}, nil
}

// RemoveUser is the removal's context: who asks, and whether the user is the organisation's
// recorded owner.
type RemoveUser struct {
	ActorRole         Role
	OrganisationOwner bool
}

// Remove decides a user's removal from the organisation.
func (u *User) Remove(c RemoveUser, now time.Time) ([]Event, error) {
	if !u.Exists() {
		return nil, Errorf(CodeNotFound, "user not found")
	}
	if c.OrganisationOwner {
		return nil, &Error{Code: CodeConflict, Detail: "last_owner",
			Message: "the organisation's owner cannot be removed: the organisation must keep its owner"}
	}
	if u.Role == RoleOwner && c.ActorRole != RoleOwner {
		return nil, Errorf(CodeForbidden, "only an owner can remove an owner")
	}
	return []Event{UserRemoved{UserID: u.ID, Email: u.Email, At: now}}, nil
}

// JoinWorkspace decides the user's membership of w with role: nothing when the user holds
// that role there already, or when the workspace is no longer active.
func (u *User) JoinWorkspace(w *Workspace, role Role, now time.Time) []Event {
	if !w.Active() {
		return nil
	}
	if have, ok := w.Members[u.ID]; ok && have == role {
		return nil
	}
	return []Event{WorkspaceMemberAdded{WorkspaceID: w.ID, UserID: u.ID, Role: role, At: now}}
}

// LeaveWorkspace decides the end of the user's membership of w: nothing when not a member.
func (u *User) LeaveWorkspace(w *Workspace, now time.Time) []Event {
	if _, ok := w.Members[u.ID]; !ok {
		return nil
	}
	return []Event{WorkspaceMemberRemoved{WorkspaceID: w.ID, UserID: u.ID, At: now}}
}
