package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func usrJoined(role Role) UserJoined {
	return UserJoined{UserID: "user-1", OrganisationID: "org", Email: "ann@example.com", FirstName: "Ann", Role: role, At: t0}
}

func TestUserJoin(t *testing.T) {
	cases := []struct {
		name  string
		given []Event
		when  UserJoined
		err   invWant
	}{
		{"joins", nil, usrJoined(RoleMember), invWant{}},
		{"first name at 255", nil, func() UserJoined { e := usrJoined(RoleMember); e.FirstName = strings.Repeat("f", 255); return e }(), invWant{}},
		{"first name at 256", nil, func() UserJoined { e := usrJoined(RoleMember); e.FirstName = strings.Repeat("f", 256); return e }(),
			invWant{Code: CodeInvalid, Param: "first_name"}},
		{"last name at 256", nil, func() UserJoined { e := usrJoined(RoleMember); e.LastName = strings.Repeat("l", 256); return e }(),
			invWant{Code: CodeInvalid, Param: "last_name"}},
		{"bad e-mail", nil, func() UserJoined { e := usrJoined(RoleMember); e.Email = "ann"; return e }(), invWant{Code: CodeInvalid, Param: "email"}},
		{"bad role", nil, usrJoined("manager"), invWant{Code: CodeInvalid, Param: "role"}},
		{"twice", []Event{usrJoined(RoleMember)}, usrJoined(RoleMember), invWant{Code: CodeConflict}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := invFold(&User{}, tc.given...).Join(tc.when)
			invThen(t, got, err, []Event{tc.when}, tc.err)
		})
	}
}

func TestUserUpdate(t *testing.T) {
	s := func(v string) *string { return &v }
	r := func(v Role) *Role { return &v }
	at := t0.Add(time.Hour)
	cases := []struct {
		name  string
		given []Event
		when  UpdateUser
		then  []Event
		err   invWant
	}{
		{"an admin promotes a member to admin (any case)", []Event{usrJoined(RoleMember)},
			UpdateUser{Role: s("ADMIN"), ActorRole: RoleAdmin}, []Event{UserUpdated{UserID: "user-1", Role: r(RoleAdmin), At: at}}, invWant{}},
		{"names change", []Event{usrJoined(RoleMember)},
			UpdateUser{FirstName: s("Anne"), LastName: s(strings.Repeat("l", 255)), ActorRole: RoleAdmin},
			[]Event{UserUpdated{UserID: "user-1", FirstName: s("Anne"), LastName: s(strings.Repeat("l", 255)), At: at}}, invWant{}},
		{"last name at 256", []Event{usrJoined(RoleMember)},
			UpdateUser{LastName: s(strings.Repeat("l", 256)), ActorRole: RoleAdmin}, nil, invWant{Code: CodeInvalid, Param: "last_name"}},
		{"first name at 256", []Event{usrJoined(RoleMember)},
			UpdateUser{FirstName: s(strings.Repeat("f", 256)), ActorRole: RoleAdmin}, nil, invWant{Code: CodeInvalid, Param: "first_name"}},
		{"unknown role", []Event{usrJoined(RoleMember)},
			UpdateUser{Role: s("manager"), ActorRole: RoleAdmin}, nil, invWant{Code: CodeInvalid, Param: "role"}},
		{"nothing to update", []Event{usrJoined(RoleMember)}, UpdateUser{ActorRole: RoleAdmin}, nil, invWant{Code: CodeInvalid}},
		{"an admin cannot make an owner", []Event{usrJoined(RoleMember)},
			UpdateUser{Role: s("owner"), ActorRole: RoleAdmin}, nil, invWant{Code: CodeForbidden, Param: "role"}},
		{"an owner can make an owner", []Event{usrJoined(RoleMember)},
			UpdateUser{Role: s("Owner"), ActorRole: RoleOwner}, []Event{UserUpdated{UserID: "user-1", Role: r(RoleOwner), At: at}}, invWant{}},
		{"an admin cannot demote an owner", []Event{usrJoined(RoleOwner)},
			UpdateUser{Role: s("member"), ActorRole: RoleAdmin}, nil, invWant{Code: CodeForbidden, Param: "role"}},
		{"an owner demotes another owner", []Event{usrJoined(RoleOwner)},
			UpdateUser{Role: s("admin"), ActorRole: RoleOwner}, []Event{UserUpdated{UserID: "user-1", Role: r(RoleAdmin), At: at}}, invWant{}},
		{"the organisation's (last) owner cannot be demoted", []Event{usrJoined(RoleOwner)},
			UpdateUser{Role: s("admin"), ActorRole: RoleOwner, OrganisationOwner: true}, nil,
			invWant{Code: CodeConflict, Param: "role", Detail: "last_owner"}},
		{"nobody demotes the organisation's owner, an admin neither", []Event{usrJoined(RoleOwner)},
			UpdateUser{Role: s("member"), ActorRole: RoleAdmin, OrganisationOwner: true}, nil,
			invWant{Code: CodeConflict, Param: "role", Detail: "last_owner"}},
		{"the organisation's owner may change their names", []Event{usrJoined(RoleOwner)},
			UpdateUser{Role: s("owner"), FirstName: s("Boss"), ActorRole: RoleOwner, OrganisationOwner: true},
			[]Event{UserUpdated{UserID: "user-1", Role: r(RoleOwner), FirstName: s("Boss"), At: at}}, invWant{}},
		{"a removed user", []Event{usrJoined(RoleMember), UserRemoved{UserID: "user-1", At: t0}},
			UpdateUser{Role: s("admin"), ActorRole: RoleAdmin}, nil, invWant{Code: CodeNotFound}},
		{"nobody", nil, UpdateUser{Role: s("admin"), ActorRole: RoleAdmin}, nil, invWant{Code: CodeNotFound}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := invFold(&User{}, tc.given...).Update(tc.when, at)
			invThen(t, got, err, tc.then, tc.err)
		})
	}
}

func TestUserRemove(t *testing.T) {
	at := t0.Add(time.Hour)
	removed := UserRemoved{UserID: "user-1", Email: "ann@example.com", At: at}
	cases := []struct {
		name  string
		given []Event
		when  RemoveUser
		then  []Event
		err   invWant
	}{
		{"an admin removes a member", []Event{usrJoined(RoleMember)}, RemoveUser{ActorRole: RoleAdmin}, []Event{removed}, invWant{}},
		{"the organisation's owner cannot be removed", []Event{usrJoined(RoleOwner)},
			RemoveUser{ActorRole: RoleOwner, OrganisationOwner: true}, nil, invWant{Code: CodeConflict, Detail: "last_owner"}},
		{"an admin cannot remove an owner", []Event{usrJoined(RoleOwner)}, RemoveUser{ActorRole: RoleAdmin}, nil, invWant{Code: CodeForbidden}},
		{"an owner removes another owner", []Event{usrJoined(RoleOwner)}, RemoveUser{ActorRole: RoleOwner}, []Event{removed}, invWant{}},
		{"removed twice", []Event{usrJoined(RoleMember), removed}, RemoveUser{ActorRole: RoleAdmin}, nil, invWant{Code: CodeNotFound}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := invFold(&User{}, tc.given...).Remove(tc.when, at)
			invThen(t, got, err, tc.then, tc.err)
		})
	}
	u := invFold(&User{}, usrJoined(RoleMember), removed)
	assert.False(t, u.Exists())
	assert.Equal(t, UserStatusRemoved, u.Status)
}

func TestUserWorkspaceMembership(t *testing.T) {
	ws := invFold(&Workspace{}, WorkspaceCreated{WorkspaceID: invWsA, OrganisationID: "org", Name: "a", Slug: "a", At: t0})
	u := invFold(&User{}, usrJoined(RoleMember))
	assert.Equal(t, []Event{WorkspaceMemberAdded{WorkspaceID: invWsA, UserID: "user-1", Role: RoleManager, At: t0}},
		u.JoinWorkspace(ws, RoleManager, t0))
	ws.Apply(WorkspaceMemberAdded{WorkspaceID: invWsA, UserID: "user-1", Role: RoleManager, At: t0})
	assert.Empty(t, u.JoinWorkspace(ws, RoleManager, t0), "already a manager there")
	assert.Equal(t, []Event{WorkspaceMemberRemoved{WorkspaceID: invWsA, UserID: "user-1", At: t0}}, u.LeaveWorkspace(ws, t0))
	ws.Apply(WorkspaceMemberRemoved{WorkspaceID: invWsA, UserID: "user-1", At: t0})
	assert.Empty(t, u.LeaveWorkspace(ws, t0), "not a member any more")
	ws.Apply(WorkspaceArchived{WorkspaceID: invWsA, At: t0})
	assert.Empty(t, u.JoinWorkspace(ws, RoleMember, t0), "an archived workspace takes no new members")
}
