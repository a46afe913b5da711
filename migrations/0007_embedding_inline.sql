-- 0007: embeddings stay in the row. pgvector's type defaults to EXTERNAL storage, so a 512-dimension
-- vector (2 KB) went to the TOAST table: every distance computed from the table (the exact scan of
-- a small tenant's vectors, the cosine reported for each candidate) first looked it up through the
-- TOAST index and read two more tuples. MAIN keeps it in the row unless the row would not fit a
-- page (larger vectors with a long full-text vector still move out). Applies to rows written from
-- now on.
ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN;
