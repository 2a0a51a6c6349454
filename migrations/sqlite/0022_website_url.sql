-- The seller's website (docs/API.md "Features"): an ad may carry the address of its
-- seller's own site, shown to readers while the ad's `url` feature runs.
ALTER TABLE advertisements ADD COLUMN website_url TEXT;
