-- What decided each request (analytics.Provenance as JSON; '' when nothing did): the policy or
-- budget that refused it, the budgets charged, the config version that routed it.
-- Release 18.16 refuses IF NOT EXISTS on ADD COLUMN: see 0003.
ALTER TABLE request_logs ADD COLUMN provenance String DEFAULT ''
