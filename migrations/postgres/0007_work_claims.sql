-- Background work done once across instances (cluster.Claims): an item (a log export run, a
-- delivery) is worked on by the instance that holds its claim; a claim lapses at expires_at
-- unless its holder renews it, so a killed instance's items are taken over by another.
CREATE TABLE work_claims (
    item       text        PRIMARY KEY,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL
);
