package postgres

// VectorQuery exposes vectorQuery to the tests: the nearest-neighbour
// query of a knowledge base whose HNSW index has the given type ("" for
// none).
func VectorQuery(kbID int64, dim int, typ string) string {
	ix := vectorIndex{}
	switch typ {
	case halfIndex.typ:
		ix = halfIndex
	case fullIndex.typ:
		ix = fullIndex
	}
	return vectorQuery(kbID, dim, ix, "")
}
