-- The usage ledger (ledger/postgres): the settled usage of every budget, per usage period,
-- added to in batches by each gateway process. A batch's id is recorded in the transaction
-- that applies it, so a batch retried after an ambiguous failure is applied once; ids older
-- than a day are pruned.
CREATE TABLE usage_ledger (
    budget     text             NOT NULL,  -- kind:id or kind:id:sub (ledger.Budget.Name)
    period     text             NOT NULL,
    used       double precision NOT NULL DEFAULT 0,
    updated_at timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (budget, period)
);

CREATE TABLE usage_ledger_batches (
    id         text        PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_ledger_batches_applied_at ON usage_ledger_batches (applied_at);
