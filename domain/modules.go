package domain

// modules lists every aggregate of the control plane; NewRegistry registers their events.
func modules() []module {
	modules := []module{
		organisationModule(),
		userModule(),
		inviteModule(),
		workspaceModule(),
		apiKeyModule(),
		rateLimitPolicyModule(),
		usageLimitPolicyModule(),
		reservationModule(),
		bootstrapModule(),
		notificationModule(),
		webhookModule(),
		modelPricingModule(),
		logExportModule(),
		{prefix: "audit", events: []Event{AccessDenied{}}},
	}
	modules = append(modules, gatewayModules()...)
	modules = append(modules, promptModules()...)
	return modules
}
