-- Which image store this database's images are in: the id that the store keeps in its
-- object `souk-store-id`, recorded by the first server to start with an image store
-- (`usecase::images::own_store`). Every server must use that store (S3, or one folder
-- that all of them share): a replica with a folder of its own answered 201 for images
-- that the others then could not find, and their workers dropped.
CREATE TABLE image_store (
    only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
    store_id TEXT NOT NULL
);
