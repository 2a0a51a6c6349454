-- Blobs are held while their bytes are written and while they are deleted.
--
-- A rendition worker registers each blob before it writes the bytes, and holds it:
-- `holds` counts the holds taken on it, which last until `held_until` at the most
-- (seconds). A worker gives its hold back when it records or gives up; a crashed worker's,
-- and the seed's, run out. The worker refers only to the registration it held
-- (`generation`, a number of each row's own). Before, it registered after the
-- write, so a sweep that had claimed the same content a moment earlier could delete the
-- bytes just written and drop the row, and the worker's rendition then pointed at
-- nothing. A sweep claims only blobs that nothing references nor holds; its claim
-- (refs -1) is held until `held_until` too, so that another replica's sweep takes it
-- over only once it has run out, and that claim's end tells it from a later one.
ALTER TABLE image_blobs ADD COLUMN holds BIGINT NOT NULL DEFAULT 0;
ALTER TABLE image_blobs ADD COLUMN held_until BIGINT NOT NULL DEFAULT 0;
ALTER TABLE image_blobs ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
