-- The admin reads of a reward count its claims (claimed_count of an unlimited
-- reward, and the first limit set on one); without this index each count
-- scanned reward_claims whole, once per reward of a listing page.
CREATE INDEX reward_claims_reward ON reward_claims (tenant_id, reward_id);
