-- The words of the ads that have had a feature (those of `search_docs_featured`), in a
-- full-text index of their own: the featured part of a search of words (store::search) asks
-- it for the few featured ads holding the words, instead of holding every featured ad's words
-- against them one by one. At a million ads with 6,896 featured, a common word's featured
-- part took 2.7 ms that way and takes 1.2 ms this way; a word in few ads, 1.4 ms and 0.04 ms.
-- Its content is `search_docs`, as for `search_fts`, and it holds the rows that the triggers
-- below put in, which are all it may hold ('rebuild' would index every ad).
CREATE VIRTUAL TABLE search_featured_fts USING fts5(
    title_words, body_words, tags,
    content = 'search_docs', content_rowid = 'item_number',
    detail = 'column',
    columnsize = 0,
    tokenize = "unicode61 remove_diacritics 0 tokenchars '_'");

INSERT INTO search_featured_fts (rowid, title_words, body_words, tags)
SELECT item_number, title_words, body_words, tags FROM search_docs
WHERE top_until IS NOT NULL OR bumped_until IS NOT NULL;

-- A row of `search_docs` changes by a delete and an insert (the triggers of
-- `advertisements`), so these two keep the index whole; a delete hands FTS5 the values
-- the insert gave it.
CREATE TRIGGER search_docs_to_featured_fts_insert AFTER INSERT ON search_docs
WHEN NEW.top_until IS NOT NULL OR NEW.bumped_until IS NOT NULL BEGIN
    INSERT INTO search_featured_fts (rowid, title_words, body_words, tags)
    VALUES (NEW.item_number, NEW.title_words, NEW.body_words, NEW.tags);
END;

CREATE TRIGGER search_docs_to_featured_fts_delete AFTER DELETE ON search_docs
WHEN OLD.top_until IS NOT NULL OR OLD.bumped_until IS NOT NULL BEGIN
    INSERT INTO search_featured_fts (search_featured_fts, rowid, title_words, body_words, tags)
    VALUES ('delete', OLD.item_number, OLD.title_words, OLD.body_words, OLD.tags);
END;
