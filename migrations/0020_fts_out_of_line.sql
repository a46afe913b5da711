-- 0020: the full-text vector moves out of the row. Search never reads it: the keyword arm selects
-- chunks through the tenant-lexeme GIN index (exact for plain lexeme queries, no recheck) and
-- scores them from term_counts (0011), which stays in the row; only a small filtered scope matches
-- it directly. In the row it made a chunk about 5.5 KB, one per 8 KB page; without it a chunk with a
-- 512-dimension embedding takes about 3.4 KB, two per page, so an exact scan of a tenant's vectors
-- and the keyword arm's chunk reads visit half the pages, and the table that search keeps in memory
-- halves (docs/decisions/0150-full-text-vector-out-of-line.md). Applies to rows written from now
-- on; a model switch rewrites every row.
ALTER TABLE chunks ALTER COLUMN fts SET STORAGE EXTERNAL;
