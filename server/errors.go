package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/store"
)

// apiError is the one error shape: {"error": {"code", "message", "field"}}.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// httpError is an error with its HTTP status decided where it was found
// (a malformed body is a 400, whatever its code).
type httpError struct {
	status int
	code   errcode.Code
	field  string
	msg    string
}

func (e *httpError) Error() string           { return e.msg }
func (e *httpError) ErrorCode() errcode.Code { return e.code }

func badRequest(field, msg string) error {
	return &httpError{status: http.StatusBadRequest, code: errcode.Invalid, field: field, msg: msg}
}

func invalid(field, msg string) error {
	return &httpError{status: http.StatusUnprocessableEntity, code: errcode.Invalid, field: field, msg: msg}
}

// statusOf maps the core's error codes to HTTP statuses, once.
func statusOf(code errcode.Code) int {
	switch code {
	case errcode.Invalid:
		return http.StatusUnprocessableEntity
	case errcode.NotFound:
		return http.StatusNotFound
	case errcode.Conflict:
		return http.StatusConflict
	case errcode.Unauthorized:
		return http.StatusUnauthorized
	case errcode.Forbidden:
		return http.StatusForbidden
	case errcode.TooLarge:
		return http.StatusRequestEntityTooLarge
	case errcode.RateLimited:
		return http.StatusTooManyRequests
	case errcode.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// fieldNames maps the core's field names (the CLI's flags) to the API's
// body fields.
var fieldNames = map[string]string{
	"max-tokens": "max_tokens",
	"source":     "sources",
	"thread":     "thread_id",
}

func apiField(f string) string {
	if n, ok := fieldNames[f]; ok {
		return n
	}
	return strings.ReplaceAll(f, "-", "_")
}

// writeError writes err in the one error shape.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := s.errorBody(r, err)
	s.writeJSON(w, status, map[string]apiError{"error": body})
}

// errorBody is err's status and body in the one error shape. Internal
// errors are logged and answered without their text, which may name
// paths or hosts.
func (s *Server) errorBody(r *http.Request, err error) (int, apiError) {
	var he *httpError
	var mbe *http.MaxBytesError
	var body apiError
	status := 0
	switch {
	case errors.As(err, &he):
		status, body = he.status, apiError{Code: string(he.code), Message: he.msg, Field: he.field}
	case errors.As(err, &mbe):
		status, body = http.StatusRequestEntityTooLarge, apiError{Code: string(errcode.TooLarge), Message: fmt.Sprintf("request body is over the limit of %d bytes", mbe.Limit)}
	default:
		code := errcode.Of(err)
		if code == errcode.Internal && storeRefusedText(err) {
			// A request's text the checks above let through (a NUL in a
			// dataset's lines) that PostgreSQL cannot store.
			code, err = errcode.Invalid, errors.New("a value in the request holds a character the store cannot keep (a NUL)")
		}
		status = statusOf(code)
		field := fieldOf(err)
		// The field has its own member: the message need not repeat it
		// (a rule's message, such as the seed's, is then exact).
		body = apiError{Code: string(code), Message: strings.TrimPrefix(err.Error(), field+": "), Field: apiField(field)}
		switch code {
		case errcode.Internal:
			s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			body.Message = "internal error; the server log has the details"
		case errcode.Unavailable:
			if errors.Is(err, store.ErrVectorIndexBuilding) {
				// No dependency is down: the knowledge base's vector index
				// is not built yet, and the message says what to do.
				body.Message = store.ErrVectorIndexBuilding.Error()
				break
			}
			s.log.Warn("request failed: a dependency does not answer", "method", r.Method, "path", r.URL.Path, "err", err)
			body.Message = "a dependency (the store, the embedder) does not answer; the server log has the details"
			if d, ok := errors.AsType[*errcode.DependencyError](err); ok {
				body.Message = d.Name + " does not answer; the server log has the details"
			}
		}
	}
	if status == http.StatusUnprocessableEntity && body.Field == "" {
		body.Field = "body"
	}
	return status, body
}

// fieldOf is the field an error is about: an errcode field or a
// store.ValidationError's.
func fieldOf(err error) string {
	if f := errcode.Field(err); f != "" {
		return f
	}
	var ve *store.ValidationError
	if errors.As(err, &ve) {
		return ve.Field
	}
	return ""
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	// Encoded before the status is sent: a value JSON cannot carry (a
	// NaN or infinite score) is a 500 that says so, not a 200 with an
	// empty body.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		s.log.Error("encode response", "err", err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"code":"internal","message":"the response could not be encoded as JSON"}}`+"\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if _, err := w.Write(buf.Bytes()); err != nil {
		s.log.Debug("write response", "err", err)
	}
}

// bodyReadTime bounds reading a JSON body (a client trickling one in
// holds a connection no longer); uploadReadTime an upload.
const (
	bodyReadTime   = 30 * time.Second
	uploadReadTime = 10 * time.Minute
)

// decode reads a JSON body strictly: unknown fields, wrong types,
// trailing data and bodies over the limit are errors naming what broke.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	// curl -d sends its default form type with a JSON body: read it as
	// JSON too, as the examples in docs/http-api.md do.
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return &httpError{status: http.StatusUnsupportedMediaType, code: errcode.Invalid, field: "Content-Type", msg: fmt.Sprintf("must be application/json, got %q", ct)}
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTime))
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, s.opt.MaxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("body", "must hold one JSON object and nothing after it")
	}
	if field := nulField(reflect.ValueOf(v), ""); field != "" {
		// No id, name or text holds one, and PostgreSQL cannot store it.
		return invalid(field, "must not contain a NUL character")
	}
	return nil
}

// storeRefusedText reports a database error refusing text (PostgreSQL's
// SQLSTATE 22021, a NUL or bytes not in the encoding, or 22P05).
func storeRefusedText(err error) bool {
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		return st.SQLState() == "22021" || st.SQLState() == "22P05"
	}
	return false
}

// nulField is the JSON name of the first string under v that holds a NUL
// character ("thread_id", "pipelines[0]", "settings.prompt"), or "".
func nulField(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.String:
		if strings.ContainsRune(v.String(), 0) {
			return orBody(path)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return nulField(v.Elem(), path)
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return "" // bytes (json.RawMessage) are not text
		}
		for i := range v.Len() {
			if f := nulField(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); f != "" {
				return f
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			key := fmt.Sprint(it.Key()) // a reflect.Value prints its value
			if strings.ContainsRune(key, 0) {
				return orBody(path)
			}
			if f := nulField(it.Value(), joinField(path, key)); f != "" {
				return f
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() && !sf.Anonymous {
				continue // as encoding/json: an embedded struct's fields are decoded, exported or not
			}
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			fieldPath := path // an embedded struct's fields are its parent's
			if !sf.Anonymous || name != "" {
				if name == "" {
					name = sf.Name
				}
				fieldPath = joinField(path, name)
			}
			if f := nulField(v.Field(i), fieldPath); f != "" {
				return f
			}
		}
	}
	return ""
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, io.EOF):
		return badRequest("body", "must be a JSON object; the body is empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("body", "is not valid JSON: it ends too early")
	case errors.As(err, &syn):
		return badRequest("body", fmt.Sprintf("is not valid JSON at byte %d: %v", syn.Offset, syn))
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return badRequest("body", fmt.Sprintf("must be a JSON object, got %s", typ.Value))
		}
		return badRequest(field, fmt.Sprintf("must be %s, got %s", jsonKind(typ.Type.Kind().String()), typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return badRequest(name, "is not a known field")
	}
	return badRequest("body", "is not valid JSON: "+err.Error())
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "int32", "int16", "int8", "uint", "uint64", "uint32", "uint16", "uint8":
		return "an integer (written without a fraction or an exponent, in the field's range)"
	case "float64", "float32":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return k
}

// errs adapts a handler that returns its error: a non-nil one is written
// in the one error shape, mapped once by writeError.
func (s *Server) errs(h func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}
