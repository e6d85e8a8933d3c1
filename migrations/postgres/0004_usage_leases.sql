-- Leases: when several gateway instances share one database, each admits requests against a
-- slice of a budget's remaining allowance that it holds here, taken and returned in batches
-- off the request path (ledger.Leases, ledger/postgres). The invariant, kept under the row
-- lock of usage_ledger: used + leased <= the limit the slices were taken under.

-- leased: the sum of usage_leases.held for this (budget, period), over every instance.
ALTER TABLE usage_ledger ADD COLUMN leased double precision NOT NULL DEFAULT 0;

CREATE TABLE usage_leases (
    budget     text             NOT NULL,
    period     text             NOT NULL,
    instance   text             NOT NULL,  -- the holder's instance id
    held       double precision NOT NULL DEFAULT 0,
    updated_at timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (budget, period, instance)
);
CREATE INDEX usage_leases_instance ON usage_leases (instance);
