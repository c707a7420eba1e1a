package server

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"gopkg.in/yaml.v3"
)

// openapiYAML is the API's OpenAPI 3.1 document; a test walks every route
// of the running server against it, so the two cannot drift.
//
//go:embed openapi.yaml
var openapiYAML []byte

var openapiJSON = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return json.Marshal(doc)
})

// OpenAPI returns the OpenAPI document as JSON.
func OpenAPI() ([]byte, error) { return openapiJSON() }

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	doc, err := OpenAPI()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc)
	return nil
}
