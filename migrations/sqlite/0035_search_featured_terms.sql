-- Nothing to do on SQLite: migration 0030 indexes the featured ads' words there; the
-- PostgreSQL side adds partial GIN indexes of the same ads.
SELECT 1;
