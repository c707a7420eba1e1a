// Package jsonx holds what Quarry's JSON needs beyond encoding/json:
// output with empty lists, and JSON Lines files read whole.
package jsonx

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
)

// EmptySlices replaces, in the value v points to, every nil slice that
// JSON would print as null (a field without omitempty, an element of a
// slice) with an empty one, recursively, so lists print as []. Maps are
// left as they are.
func EmptySlices(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	fill(rv.Elem(), true)
}

func fill(v reflect.Value, printed bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			fill(v.Elem(), true)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			fv := v.Field(i)
			if fv.CanSet() {
				fill(fv, !strings.Contains(tag, ",omitempty"))
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			if printed && v.CanSet() && v.Type().Elem().Kind() != reflect.Uint8 {
				v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			}
			return
		}
		for i := range v.Len() {
			fill(v.Index(i), true)
		}
	}
}

// ReadLinesFile reads a JSON Lines file (one value per line, any line
// length) into a slice.
func ReadLinesFile[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	dec := json.NewDecoder(f)
	for {
		var v T
		if err := dec.Decode(&v); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: value %d: %w", path, len(out)+1, err)
		}
		out = append(out, v)
	}
}
