-- A queued mail that carries a confirmation link holds no usable link (oauth.md: a stolen
-- database dump holds no usable credential), though it may wait a week for the mail
-- server. Its body has `{token}` where the link's token goes, and `confirmation_hash`
-- names the confirmation by the hash its link has now: at each sending the sender mints a
-- new token, stores its hash on the confirmation and here in one transaction, and puts
-- the token only in the mail it sends. A mail queued before this has NULL and goes as it
-- is.
ALTER TABLE mail_queue ADD COLUMN confirmation_hash TEXT;
