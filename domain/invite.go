package domain

// InvitePrefix names invite streams.
const InvitePrefix = "invite"

// Invite is an invitation to join the organisation.
type Invite struct {
	ID string `json:"id"`
}

func (i *Invite) Apply(e Event) {}

func inviteModule() module {
	return module{prefix: InvitePrefix, aggregate: func() Aggregate { return &Invite{} }}
}
