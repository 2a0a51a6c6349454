-- The images of advertisements, in the ad's order. `media_id` is the image's public,
-- unguessable name (`/v1/images/{mediaId}/...`); `position` is the deprecated `imageId`.
-- A row describes the original; the renditions (small, medium, large, xlarge) and the
-- blobs are derived from it.
CREATE TABLE images (
    media_id     TEXT NOT NULL UNIQUE,
    item_number  BIGINT NOT NULL REFERENCES advertisements (item_number),
    position     INTEGER NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('processing', 'available')),
    content_type TEXT NOT NULL,
    width        INTEGER NOT NULL,
    height       INTEGER NOT NULL,
    bytes        BIGINT NOT NULL,
    sha256       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (item_number, position)
);
