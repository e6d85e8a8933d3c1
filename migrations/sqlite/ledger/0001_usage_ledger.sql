-- The embedded usage ledger (ledger/sqlite): the settled usage of every budget, per usage
-- period, added to in batches. A batch's id is recorded in the transaction that applies it, so
-- a batch retried after an ambiguous failure is applied once; ids older than a day are pruned.
CREATE TABLE usage_ledger (
    budget     TEXT    NOT NULL, -- kind:id or kind:id:sub (ledger.Budget.Name)
    period     TEXT    NOT NULL,
    used       REAL    NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL, -- Unix nanoseconds
    PRIMARY KEY (budget, period)
);

CREATE TABLE usage_ledger_batches (
    id         TEXT    PRIMARY KEY,
    applied_at INTEGER NOT NULL -- Unix nanoseconds
);
CREATE INDEX usage_ledger_batches_applied_at ON usage_ledger_batches (applied_at);
