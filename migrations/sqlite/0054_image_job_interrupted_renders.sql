-- Renders of a job's image that began and never returned: the process died in the decoder
-- or the encoder (an abort in a codec library, the kernel's OOM killer). A worker counts
-- one up before it renders and back to 0 once the render has returned, whatever it
-- returned; an outage of the blob store or of the database meets a worker before or after
-- a render, so it does not count. After three, the image is given up as undecodable
-- instead of taking the process down at every lease. (`attempts`, counted at each claim,
-- is no longer read or written; it stays for replicas of the previous version during a
-- rolling upgrade.)
ALTER TABLE image_jobs ADD COLUMN interrupted_renders INTEGER NOT NULL DEFAULT 0;
