-- Mails waiting to be sent (`usecase::mail_queue`): each written in the transaction of the
-- change it tells of, so that no acknowledged change loses its mail, and sent by a
-- background worker, off the request path. A row is deleted once its mail is sent; a send
-- that fails is tried again at `due_at`. A worker that takes a mail moves `due_at` past
-- its lease, so that one replica sends it (another only after a crash); `attempts` names
-- the taking, so that a sender that lost its lease changes nothing. AUTOINCREMENT: an id
-- is never given again, so a late sender cannot touch a newer mail.
CREATE TABLE mail_queue (
    mail_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    recipient  TEXT NOT NULL,
    subject    TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    due_at     INTEGER NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX mail_queue_due ON mail_queue (due_at, mail_id);
