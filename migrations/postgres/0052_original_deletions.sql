-- Originals of uploaded images whose job ended (renditions made, the image removed, or the
-- original unusable): written in the transaction that ends the job, and deleted from the
-- blob store after it commits, first by whoever ended the job and else by the next blob
-- sweep. A row goes once its original's bytes are gone; so a process that stops between
-- the commit and the deletion leaves no original behind (it may hold the place a photo
-- was taken). Deleting an original twice is harmless, so sweeps need no lease here.
CREATE TABLE original_deletions (
    original_key TEXT PRIMARY KEY,
    created_at   BIGINT NOT NULL
);
