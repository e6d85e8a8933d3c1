package projections

import (
	"context"
	"time"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// Reader is every read of a read model: the state of every resource (Queries) and the audit
// log. Each takes a context and returns an error: a read that fails is never "not found".
// Both backends implement it (projections/memory, projections/postgres) and pass the same
// contract suite (projections/projectionstest).
type Reader interface {
	Organisation(ctx context.Context, id string) (domain.Organisation, bool, error)
	Workspace(ctx context.Context, orgID, id string) (domain.Workspace, bool, error)
	WorkspaceBySlug(ctx context.Context, orgID, slug string) (domain.Workspace, bool, error)
	Workspaces(ctx context.Context, f WorkspaceFilter) ([]domain.Workspace, error)
	WorkspaceMembers(ctx context.Context, orgID, workspaceID string) ([]WorkspaceMember, error)
	EffectiveSecurity(ctx context.Context, orgID, workspaceID string) (domain.SecuritySettings, error)

	User(ctx context.Context, orgID, id string) (domain.User, bool, error)
	Users(ctx context.Context, f UserFilter) ([]domain.User, error)
	MemberWorkspaceIDs(ctx context.Context, orgID, userID string) ([]string, error)
	Invite(ctx context.Context, orgID, id string) (domain.Invite, bool, error)
	Invites(ctx context.Context, f InviteFilter) ([]domain.Invite, error)
	Notification(ctx context.Context, f NotificationFilter, id string) (domain.Notification, bool, error)
	Notifications(ctx context.Context, f NotificationFilter) ([]domain.Notification, error)
	PendingDeliveries(ctx context.Context, notBefore time.Time) ([]domain.Notification, error)
	NotificationAddresses(ctx context.Context, orgID string, recipients []string) ([]string, error)
	Webhook(ctx context.Context, orgID, id string) (domain.Webhook, bool, error)
	Webhooks(ctx context.Context, f WebhookFilter) ([]domain.Webhook, error)
	WebhooksFor(ctx context.Context, n domain.Notification) ([]domain.Webhook, error)

	APIKey(ctx context.Context, orgID, id string) (domain.APIKey, bool, error)
	APIKeys(ctx context.Context, f KeyFilter) ([]domain.APIKey, error)
	KeysDue(ctx context.Context, now time.Time) (expire, rotate, warn []domain.APIKey, err error)

	RateLimitPolicy(ctx context.Context, orgID, id string) (domain.RateLimitPolicy, bool, error)
	RateLimitPolicies(ctx context.Context, f PolicyFilter) ([]domain.RateLimitPolicy, error)
	UsageLimitPolicy(ctx context.Context, orgID, id string) (domain.UsageLimitPolicy, bool, error)
	UsageLimitPolicies(ctx context.Context, f PolicyFilter, typ string) ([]domain.UsageLimitPolicy, error)
	UsageLimitPolicyEntities(ctx context.Context, orgID, id string, f UsageEntityFilter) ([]domain.UsageLimitEntity, bool, error)
	UsageResetsDue(ctx context.Context, now time.Time) ([]domain.UsageLimitPolicy, []domain.Workspace, error)
	BudgetResetsDue(ctx context.Context, now time.Time) ([]domain.APIKey, []domain.Provider, []domain.Integration, error)

	Integration(ctx context.Context, orgID, id string) (domain.Integration, bool, error)
	IntegrationBySlug(ctx context.Context, orgID, slug string) (domain.Integration, bool, error)
	Integrations(ctx context.Context, f IntegrationFilter) ([]domain.Integration, error)
	ManagedProvider(ctx context.Context, orgID, id string) (domain.Provider, bool, error)
	ManagedProviderBySlug(ctx context.Context, orgID, workspaceID, slug string) (domain.Provider, bool, error)
	ManagedProvidersBySlug(ctx context.Context, orgID, slug string) ([]domain.Provider, error)
	ManagedProviders(ctx context.Context, f ManagedProviderFilter) ([]domain.Provider, error)
	SavedConfig(ctx context.Context, orgID, ref string) (domain.SavedConfig, bool, error)
	SavedConfigs(ctx context.Context, f SavedConfigFilter) ([]domain.SavedConfig, error)
	DefaultConfigID(ctx context.Context, workspaceID string) (string, error)
	Guardrail(ctx context.Context, orgID, ref string) (domain.Guardrail, bool, error)
	Guardrails(ctx context.Context, f GuardrailFilter) ([]domain.Guardrail, error)
	Prompt(ctx context.Context, orgID, ref string) (domain.Prompt, bool, error)
	Prompts(ctx context.Context, f PromptFilter) ([]domain.Prompt, error)
	PromptPartial(ctx context.Context, orgID, ref string) (domain.PromptPartial, bool, error)
	PromptPartials(ctx context.Context, f PromptFilter) ([]domain.PromptPartial, error)
	PromptLabel(ctx context.Context, orgID, ref string) (domain.PromptLabel, bool, error)
	PromptLabels(ctx context.Context, f PromptLabelFilter) ([]domain.PromptLabel, error)
	PromptCollection(ctx context.Context, orgID, id string) (domain.PromptCollection, bool, error)
	PromptCollections(ctx context.Context, f PromptCollectionFilter) ([]domain.PromptCollection, error)
	PromptCollectionContents(ctx context.Context, orgID, collectionID string) (domain.CollectionContents, error)
	ModelPricingOverride(ctx context.Context, orgID, workspaceID, provider, model string) (domain.ModelPricingOverride, bool, error)
	ModelPricingOverrides(ctx context.Context, orgID string) ([]domain.ModelPricingOverride, error)

	LogExport(ctx context.Context, orgID, id string) (domain.LogExport, bool, error)
	LogExports(ctx context.Context, f LogExportFilter) ([]domain.LogExport, error)
	LogExportsInProgress(ctx context.Context) ([]domain.LogExport, error)

	// AuditRecords answers a page of the records f selects (limit 0: all) and their number.
	AuditRecords(ctx context.Context, f AuditFilter, offset, limit int) ([]AuditRecord, int, error)
	AuditRecord(ctx context.Context, orgID, id string) (AuditRecord, bool, error)
}

// ReadModel is a read model as a process runs it: a Reader that the runner feeds
// (Projection), and that a write waits on for read-your-writes.
type ReadModel interface {
	Reader
	Projection
	// WaitFor returns once the model has folded in the event at pos, or ctx ends.
	WaitFor(ctx context.Context, pos eventstore.Position) error
}
