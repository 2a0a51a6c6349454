-- Where a rejected ad was before the rejection (draft, online or paused), so that an
-- operator's restore takes it back there: a paused ad comes back paused, not online.
-- NULL for ads rejected before this column existed, and for ads not rejected.
ALTER TABLE advertisements ADD COLUMN status_before_rejection TEXT;
