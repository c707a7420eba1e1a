-- The mean vector a knowledge base's centred HNSW index subtracts from
-- each of its normalised vectors (postgres.go, vectorIndex): its queries
-- order by the same expression, the mean written into it as a constant.
CREATE TABLE kb_vector_means (
    kb_id BIGINT PRIMARY KEY REFERENCES knowledge_bases(id) ON DELETE CASCADE,
    mean  REAL[] NOT NULL
);
