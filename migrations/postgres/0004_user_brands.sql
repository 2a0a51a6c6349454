-- The brands a user (typically a dealer) sells, in the user's order.
CREATE TABLE user_brands (
    user_id  BIGINT NOT NULL REFERENCES users (user_id),
    position BIGINT NOT NULL,
    brand    TEXT NOT NULL,
    PRIMARY KEY (user_id, position)
);
