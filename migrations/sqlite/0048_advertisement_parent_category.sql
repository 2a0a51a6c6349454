-- Each ad keeps the L1 parent of its category (the `svc:category` link's first id), so that
-- reading an ad needs no join with `categories`: joined at each read, PostgreSQL spent
-- 33.6 µs of CPU per R1 request, against 31.3 µs with the column (docs/ARCHITECTURE.md,
-- "Where R1's time goes"). The database keeps it, whoever writes: the ad's row takes its
-- category's parent when it is inserted and when its category changes, and a category
-- moved to another parent moves its ads' column with it (an import; no index by category:
-- such a move reads every ad).
-- SQLite's triggers cannot set a new row's values, so they write the row once more; no
-- other trigger watches the column.
ALTER TABLE advertisements ADD COLUMN parent_category_id INTEGER;
UPDATE advertisements SET parent_category_id = (SELECT c.parent_id FROM categories c
    WHERE c.category_id = advertisements.category_id);

CREATE TRIGGER ads_parent_category_insert AFTER INSERT ON advertisements BEGIN
    UPDATE advertisements SET parent_category_id =
        (SELECT parent_id FROM categories WHERE category_id = NEW.category_id)
    WHERE item_number = NEW.item_number;
END;
CREATE TRIGGER ads_parent_category_update AFTER UPDATE OF category_id ON advertisements
    WHEN NEW.category_id IS NOT OLD.category_id BEGIN
    UPDATE advertisements SET parent_category_id =
        (SELECT parent_id FROM categories WHERE category_id = NEW.category_id)
    WHERE item_number = NEW.item_number;
END;
CREATE TRIGGER categories_parent_to_ads AFTER UPDATE OF parent_id ON categories
    WHEN NEW.parent_id IS NOT OLD.parent_id BEGIN
    UPDATE advertisements SET parent_category_id = NEW.parent_id
    WHERE category_id = NEW.category_id;
END;
