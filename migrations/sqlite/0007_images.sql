-- The images of advertisements, in the ad's order. `media_id` is the image's public,
-- unguessable name (`/v1/images/{mediaId}/...`); `position` is the deprecated `imageId`.
-- A row describes the original; the renditions (small, medium, large, xlarge) and the
-- blobs are derived from it.
--
-- Kept in the order of (item_number, position) (WITHOUT ROWID): an ad's images sit side
-- by side, so reading them is one seek, not one per image.
CREATE TABLE images (
    media_id     TEXT NOT NULL UNIQUE,
    item_number  INTEGER NOT NULL REFERENCES advertisements (item_number),
    position     INTEGER NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('processing', 'available')),
    content_type TEXT NOT NULL,
    width        INTEGER NOT NULL,
    height       INTEGER NOT NULL,
    bytes        INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (item_number, position)
) WITHOUT ROWID;
