-- What decided each request (analytics.Provenance as JSON; '' when nothing did): the policy or
-- budget that refused it, the budgets charged, the config version that routed it.
ALTER TABLE request_logs ADD COLUMN provenance TEXT NOT NULL DEFAULT '';
