-- Features (docs/API.md "Features"): paid promotions of an ad. Each bought feature is an
-- order product of kind 'feature' naming it; its effect is a date on the ad until which it
-- lasts, set in the transaction that marks the order paid. Search reads two of them from
-- its index rows: a top-of-the-day ad comes first, and a bumped ad sorts by its bump.
CREATE TABLE feature_prices (
    -- 0: every category (the price list's default); else an L1 or a leaf category.
    category_id BIGINT NOT NULL,
    feature     TEXT NOT NULL,
    -- NULL: not sold in this category.
    price       BIGINT CHECK (price >= 0),
    days        BIGINT NOT NULL CHECK (days >= 1),
    PRIMARY KEY (category_id, feature)
);

ALTER TABLE advertisements ADD COLUMN top_until BIGINT;
ALTER TABLE advertisements ADD COLUMN bumped_until BIGINT;
-- The largest item number when the ad was bumped: it sorts among the ads by date as if
-- placed then (after every ad placed before the bump, before every ad placed after).
ALTER TABLE advertisements ADD COLUMN bump_rank BIGINT;
ALTER TABLE advertisements ADD COLUMN sticker_until BIGINT;
ALTER TABLE advertisements ADD COLUMN url_until BIGINT;
ALTER TABLE advertisements ADD COLUMN homepage_until BIGINT;

ALTER TABLE search_docs ADD COLUMN top_until BIGINT;
ALTER TABLE search_docs ADD COLUMN bumped_until BIGINT;
ALTER TABLE search_docs ADD COLUMN bump_rank BIGINT;
CREATE INDEX search_docs_top ON search_docs (top_until) WHERE top_until IS NOT NULL;
CREATE INDEX search_docs_bumped ON search_docs (bumped_until) WHERE bumped_until IS NOT NULL;

CREATE OR REPLACE FUNCTION ads_to_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM search_docs WHERE item_number = OLD.item_number;
    END IF;
    IF NEW.status = 'online' AND NEW.search_version > 0 THEN
        INSERT INTO search_docs (item_number, category_id, price_cents, close_date,
                                 title_words, body_words, tags, postcode, attributes,
                                 top_until, bumped_until, bump_rank)
        VALUES (NEW.item_number, NEW.category_id, NEW.price_cents, NEW.close_date,
                NEW.search_title, NEW.search_body, NEW.search_tags, NEW.postcode,
                NEW.attributes, NEW.top_until, NEW.bumped_until, NEW.bump_rank);
    END IF;
    RETURN NULL;
END;
$$;

-- Not on version, updated_at or transaction_count: a sale or a view flush leaves the index.
DROP TRIGGER ads_to_search ON advertisements;
CREATE TRIGGER ads_to_search AFTER INSERT OR UPDATE OF status, category_id, price_cents,
    close_date, search_title, search_body, search_tags, search_version, postcode, attributes,
    top_until, bumped_until, bump_rank
    ON advertisements FOR EACH ROW EXECUTE FUNCTION ads_to_search();

ALTER TABLE order_products DROP CONSTRAINT order_products_kind_check;
ALTER TABLE order_products ADD CONSTRAINT order_products_kind_check
    CHECK (kind IN ('renewal', 'feature', 'insertion'));
-- The feature bought, for kind 'feature' only.
ALTER TABLE order_products ADD COLUMN feature TEXT
    CHECK ((kind = 'feature') = (feature IS NOT NULL));
-- How many days the feature lasts, as priced when it was bought.
ALTER TABLE order_products ADD COLUMN days BIGINT
    CHECK ((kind = 'feature') = (days IS NOT NULL) AND days >= 1);
CREATE INDEX order_products_by_item ON order_products (item_number);
