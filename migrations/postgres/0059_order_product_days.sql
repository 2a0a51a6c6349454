-- A renewal and an insertion fee keep the days they were bought for, as a feature does:
-- a payment confirmed after the operator changed the category's running days runs for
-- the days the order described. Optional for them (a product bought before this has
-- none: it runs for its category's days when paid), required for a feature.
ALTER TABLE order_products DROP CONSTRAINT order_products_check2;
ALTER TABLE order_products ADD CONSTRAINT order_products_days_check
    CHECK ((kind <> 'feature' OR days IS NOT NULL) AND days >= 1);
