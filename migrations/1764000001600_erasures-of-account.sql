-- Up Migration

-- The pending erasures of an account: each write of refused items looks them up for its accounts
-- (src/activity/sql.ts, insertRejectedItems), and leaves out the items naming their people. An
-- account with none costs one probe, however many erasures it has had or others have pending.
CREATE INDEX erasures_pending_of_account ON erasures (account_id) WHERE state = 'pending';

-- Down Migration

DROP INDEX erasures_pending_of_account;
