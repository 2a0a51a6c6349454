-- The two-level category tree: L1 rows have no parent, L2 (leaf) rows carry the fees and
-- the attribute definitions. Labels, subscriptions and attributes are JSON texts: they are
-- always read and written whole.
CREATE TABLE categories (
    category_id   INTEGER PRIMARY KEY,
    parent_id     INTEGER REFERENCES categories (category_id),
    position      INTEGER NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    labels        TEXT NOT NULL,
    insertion_fee INTEGER,
    running_days  INTEGER,
    subscriptions TEXT,
    attributes    TEXT,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX categories_parent ON categories (parent_id, position);
