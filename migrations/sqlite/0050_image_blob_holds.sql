-- A blob is held from before its bytes are written until a rendition refers to it, and
-- while a sweep deletes its bytes: `held_until` (seconds) is when that hold ends.
--
-- A rendition worker registers each blob, held, before it writes the bytes, and records
-- a rendition only on a blob that is still registered. Before, it registered after the
-- write, so a sweep that had claimed the same content a moment earlier could delete the
-- bytes just written and drop the row, and the worker's rendition then pointed at
-- nothing. A sweep claims only unheld blobs; a claim (refs -1) is held too, so another
-- replica's sweep takes it over only once it has run out (its sweep stopped).
ALTER TABLE image_blobs ADD COLUMN held_until INTEGER NOT NULL DEFAULT 0;
