-- Each ad keeps the L1 parent of its category (the `svc:category` link's first id), so that
-- reading an ad needs no join with `categories`: joined at each read, PostgreSQL spent
-- 33.6 µs of CPU per R1 request, against 31.3 µs with the column (docs/ARCHITECTURE.md,
-- "Where R1's time goes"). The database keeps it, whoever writes: the ad's row takes its
-- category's parent when it is inserted and when its category changes, and a category
-- moved to another parent moves its ads' column with it (an import; no index by category:
-- such a move reads every ad).
ALTER TABLE advertisements ADD COLUMN parent_category_id BIGINT;
UPDATE advertisements SET parent_category_id = (SELECT c.parent_id FROM categories c
    WHERE c.category_id = advertisements.category_id);

CREATE FUNCTION ads_parent_category() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.parent_category_id := (SELECT parent_id FROM categories WHERE category_id = NEW.category_id);
    RETURN NEW;
END;
$$;
CREATE TRIGGER ads_parent_category_insert BEFORE INSERT ON advertisements
    FOR EACH ROW EXECUTE FUNCTION ads_parent_category();
CREATE TRIGGER ads_parent_category_update BEFORE UPDATE OF category_id ON advertisements
    FOR EACH ROW WHEN (NEW.category_id IS DISTINCT FROM OLD.category_id)
    EXECUTE FUNCTION ads_parent_category();

CREATE FUNCTION categories_parent_to_ads() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE advertisements SET parent_category_id = NEW.parent_id
    WHERE category_id = NEW.category_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER categories_parent_to_ads AFTER UPDATE OF parent_id ON categories
    FOR EACH ROW WHEN (NEW.parent_id IS DISTINCT FROM OLD.parent_id)
    EXECUTE FUNCTION categories_parent_to_ads();
