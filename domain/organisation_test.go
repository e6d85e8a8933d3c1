package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOrganisationSecuritySettings(t *testing.T) {
	org := &Organisation{}
	org.Apply(OrganisationCreated{OrganisationID: testOrgID, Name: "Org", OwnerUserID: "owner", At: wsT0})
	want := DefaultSecuritySettings()
	want.MembersWritePrompts, want.ManagersViewAllData = true, false

	cases := []struct {
		name  string
		patch SecurityPatch
		ttl   *int
		then  []Event
		param string
	}{
		{name: "some settings; the rest stay", patch: SecurityPatch{"membersWritePrompts": wsPtr(true), "managersViewAllData": wsPtr(false)},
			then: []Event{OrganisationSettingsUpdated{OrganisationID: testOrgID, Security: &want, At: wsLater}}},
		{name: "max_session_ttl at 900", ttl: wsPtr(900),
			then: []Event{OrganisationSettingsUpdated{OrganisationID: testOrgID, MaxSessionTTL: wsPtr(900), At: wsLater}}},
		{name: "max_session_ttl at 899", ttl: wsPtr(899), param: "session_settings.max_session_ttl"},
		{name: "null has no parent to inherit", patch: SecurityPatch{"membersViewPrompts": nil}, param: "security_settings.membersViewPrompts"},
		{name: "unknown setting", patch: SecurityPatch{"nobody": wsPtr(true)}, param: "security_settings.nobody"},
		{name: "nothing", param: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			events, err := org.UpdateSecurity(tc.patch, tc.ttl, wsLater)
			if tc.then == nil {
				require.Error(t, err)
				assert.Equal(t, CodeInvalid, ErrorCode(err))
				assert.Equal(t, tc.param, err.(*Error).Param)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.then, events)
		})
	}

	_, err := (&Organisation{}).UpdateSecurity(SecurityPatch{"membersViewPrompts": wsPtr(true)}, nil, wsLater)
	assert.Equal(t, CodeNotFound, ErrorCode(err))

	org.Apply(OrganisationSettingsUpdated{OrganisationID: testOrgID, Security: &want, MaxSessionTTL: wsPtr(900), At: wsLater})
	assert.Equal(t, want, org.Security)
	assert.Equal(t, wsPtr(900), org.MaxSessionTTL)
}
