-- What an uploaded image becomes (issue 11): its renditions, the blobs that hold them, and
-- the durable jobs that make them.
--
-- A blob is stored once per content: its key in the object store is its SHA-256, and
-- `refs` counts the renditions pointing at it. Deleting the last reference leaves refs 0;
-- the blob is then claimed for deletion (refs -1: nothing may reference it any more),
-- deleted from the object store, and its row removed. A rendition whose blob is claimed
-- waits for the deletion to finish (its job retries), so no rendition ever points at a
-- deleted blob.
CREATE TABLE image_blobs (
    sha256       TEXT PRIMARY KEY,
    content_type TEXT NOT NULL,
    bytes        BIGINT NOT NULL,
    refs         BIGINT NOT NULL
);
CREATE INDEX image_blobs_unreferenced ON image_blobs (refs) WHERE refs <= 0;

-- One row per (image, size, format): `jpeg` for every size first (the image is `available`
-- once those four exist), then `webp`.
CREATE TABLE image_renditions (
    media_id TEXT NOT NULL,
    size     TEXT NOT NULL CHECK (size IN ('small', 'medium', 'large', 'xlarge')),
    format   TEXT NOT NULL CHECK (format IN ('jpeg', 'webp')),
    width    BIGINT NOT NULL,
    height   BIGINT NOT NULL,
    sha256   TEXT NOT NULL REFERENCES image_blobs (sha256),
    PRIMARY KEY (media_id, size, format)
);

-- The work left for an image: `phase` `jpeg` (the image is processing) or `webp` (it is
-- available; the WebP renditions follow). A worker claims a job by moving `claimed_until`
-- into the future (a lease): a worker that crashed loses its lease and another takes the
-- job over; several replicas never take the same job at once. The original's bytes live
-- in the object store under `original_key` until the job is done.
CREATE TABLE image_jobs (
    media_id      TEXT PRIMARY KEY,
    phase         TEXT NOT NULL CHECK (phase IN ('jpeg', 'webp')),
    original_key  TEXT NOT NULL,
    attempts      BIGINT NOT NULL DEFAULT 0,
    claimed_until BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL
);
CREATE INDEX image_jobs_due ON image_jobs (claimed_until, created_at);
