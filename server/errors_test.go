package server_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/server"
	"github.com/quarryhq/quarry/store"
)

// TestIndexNotBuiltSaysWhy: a vector search refused while a knowledge
// base's vector index is not built yet is a 503 that says so and what to
// do, not the message of a dependency that does not answer; any other
// unavailable store keeps that message, with no detail of its own.
func TestIndexNotBuiltSaysWhy(t *testing.T) {
	status, code, msg := server.ErrorBody(fmt.Errorf("chunk vector search of kb 7: %w", store.ErrVectorIndexBuilding))
	if status != 503 || code != "unavailable" || msg != store.ErrVectorIndexBuilding.Error() || !strings.Contains(msg, "mode bm25") {
		t.Errorf("index not built: %d %s %q", status, code, msg)
	}
	status, _, msg = server.ErrorBody(errcode.Wrap(errcode.Unavailable, errors.New("dial tcp 10.0.0.5:5432: refused")))
	if status != 503 || strings.Contains(msg, "10.0.0.5") {
		t.Errorf("another failure's detail reached the response: %d %q", status, msg)
	}
}
