// Command golden records kubectl's own answers for khook's ports of kubectl logic
// (provider/kubectl/threeway.ts and provider/kubectl/jsonpath.ts), so the TypeScript can be checked
// against Go without Go in CI.
//
// Regenerate (from this directory):
//
//	node cases.mjs > cases.json && go run . vectors   # reads cases.json, writes vectors.json
//
// What each case records:
//   - jsonpath: kubectl wait's handling of `--for=jsonpath=<template>`: cmdget.RelaxedJSONPathExpression,
//     then client-go's jsonpath with AllowMissingKeys(true), FindResults on the object decoded as
//     unstructured (integers as int64). The values (JSON), fmt's %v of each scalar (what wait compares),
//     or the parse/evaluation error.
//   - strategic: strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, overwrite=true)
//     with meta = NewPatchMetaFromStruct of the built-in Go type (kubectl's fallback) — and, as a check
//     of the schema this program writes for the TypeScript side, the same patch computed with
//     PatchMetaFromOpenAPIV3 over that schema (kubectl's first choice); the generator fails if they differ.
//   - jsonmerge: jsonmergepatch.CreateThreeWayJSONMergePatch with kubectl apply's preconditions
//     (apiVersion, kind, metadata.name unchanged), and the patch applied to current (json-patch MergePatch).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/kube-openapi/pkg/validation/spec"
	cmdget "k8s.io/kubectl/pkg/cmd/get"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// kinds whose patch metadata the strategic cases use, by the name a case gives.
var kinds = map[string]any{
	"Deployment": &appsv1.Deployment{},
	"DaemonSet":  &appsv1.DaemonSet{},
	"Pod":        &corev1.Pod{},
	"Service":    &corev1.Service{},
	"ConfigMap":  &corev1.ConfigMap{},
	"Job":        &batchv1.Job{},
}

type jsonPathCase struct {
	Name     string          `json:"name,omitempty"`
	Template string          `json:"template"`
	Input    json.RawMessage `json:"input"`
}

type threeWayCase struct {
	Name     string          `json:"name,omitempty"`
	Kind     string          `json:"kind,omitempty"` // strategic only
	Original json.RawMessage `json:"original"`       // null: no last-applied configuration
	Modified json.RawMessage `json:"modified"`
	Current  json.RawMessage `json:"current"`
}

type cases struct {
	JSONPath  []jsonPathCase `json:"jsonpath"`
	Strategic []threeWayCase `json:"strategic"`
	JSONMerge []threeWayCase `json:"jsonmerge"`
}

type jsonPathVector struct {
	jsonPathCase
	Relaxed    string   `json:"relaxed,omitempty"`
	ParseError string   `json:"parseError,omitempty"`
	EvalError  string   `json:"evalError,omitempty"`
	Values     []any    `json:"values,omitempty"`
	Formatted  []string `json:"formatted,omitempty"`
	// Unordered: the template walks a map (`*`, `..`), whose order Go randomizes; compare as multisets.
	Unordered bool `json:"unordered,omitempty"`
}

type threeWayVector struct {
	threeWayCase
	Patch   any    `json:"patch,omitempty"`
	Error   string `json:"error,omitempty"`
	Applied any    `json:"applied,omitempty"` // jsonmerge: the patch applied to current
}

type vectorsFile struct {
	Kubernetes string            `json:"kubernetes"`
	Schemas    map[string]any    `json:"schemas"`
	Kinds      map[string]string `json:"kinds"`
	JSONPath   []jsonPathVector  `json:"jsonpath"`
	Strategic  []threeWayVector  `json:"strategic"`
	JSONMerge  []threeWayVector  `json:"jsonmerge"`
}

func main() {
	if len(os.Args) < 2 || os.Args[1] != "vectors" {
		fmt.Fprintln(os.Stderr, "usage: go run . vectors")
		os.Exit(2)
	}
	raw, err := os.ReadFile("cases.json")
	check(err)
	var cs cases
	check(json.Unmarshal(raw, &cs))

	g := &schemaGen{schemas: map[string]any{}}
	out := vectorsFile{Kubernetes: "v1.35.4 (k8s.io/* v0.35.4)", Kinds: map[string]string{}}
	for name, obj := range kinds {
		t := reflect.TypeOf(obj).Elem()
		g.ref(t)
		out.Kinds[name] = schemaName(t)
	}
	out.Schemas = g.schemas
	v3 := v3Schemas(g.schemas)

	for _, c := range cs.JSONPath {
		out.JSONPath = append(out.JSONPath, recordJSONPath(c))
	}
	for _, c := range cs.Strategic {
		out.Strategic = append(out.Strategic, recordStrategic(c, v3[out.Kinds[c.Kind]], v3))
	}
	for _, c := range cs.JSONMerge {
		out.JSONMerge = append(out.JSONMerge, recordJSONMerge(c))
	}

	check(os.WriteFile("vectors.json", oneVectorPerLine(out), 0o644))
	fmt.Fprintf(os.Stderr, "wrote vectors.json: %d jsonpath, %d strategic, %d jsonmerge\n", len(out.JSONPath), len(out.Strategic), len(out.JSONMerge))
}

// oneVectorPerLine writes the file with one vector (and one schema) per line, so that a regeneration's
// diff shows which vectors changed.
func oneVectorPerLine(out vectorsFile) []byte {
	enc := func(v any) string {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		check(e.Encode(v))
		return strings.TrimSuffix(b.String(), "\n")
	}
	lines := func(n int, at func(int) any) string {
		items := make([]string, n)
		for i := range items {
			items[i] = enc(at(i))
		}
		return "[\n" + strings.Join(items, ",\n") + "\n]"
	}
	names := make([]string, 0, len(out.Schemas))
	for name := range out.Schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	schemas := make([]string, len(names))
	for i, name := range names {
		schemas[i] = enc(name) + ": " + enc(out.Schemas[name])
	}
	return []byte("{\n" +
		`"kubernetes": ` + enc(out.Kubernetes) + ",\n" +
		`"kinds": ` + enc(out.Kinds) + ",\n" +
		`"schemas": {` + "\n" + strings.Join(schemas, ",\n") + "\n},\n" +
		`"jsonpath": ` + lines(len(out.JSONPath), func(i int) any { return out.JSONPath[i] }) + ",\n" +
		`"strategic": ` + lines(len(out.Strategic), func(i int) any { return out.Strategic[i] }) + ",\n" +
		`"jsonmerge": ` + lines(len(out.JSONMerge), func(i int) any { return out.JSONMerge[i] }) + "\n}\n")
}

// ---------------------------------------------------------------- jsonpath (kubectl wait --for=jsonpath=)

func recordJSONPath(c jsonPathCase) jsonPathVector {
	v := jsonPathVector{jsonPathCase: c}
	relaxed, err := cmdget.RelaxedJSONPathExpression(c.Template)
	if err != nil {
		v.ParseError = err.Error()
		return v
	}
	v.Relaxed = relaxed
	if relaxed == "" { // kubectl wait: newJSONPathParser
		v.ParseError = "jsonpath expression cannot be empty"
		return v
	}
	j := jsonpath.New("wait").AllowMissingKeys(true)
	if err := j.Parse(relaxed); err != nil {
		v.ParseError = err.Error()
		return v
	}
	var input any
	check(utiljson.Unmarshal(c.Input, &input)) // like unstructured: whole numbers become int64
	results, err := j.FindResults(input)
	if err != nil {
		v.EvalError = err.Error()
		return v
	}
	v.Values = []any{}
	for _, list := range results {
		for _, r := range list {
			x := r.Interface()
			v.Values = append(v.Values, x)
			switch x.(type) {
			case map[string]any, []any:
				v.Formatted = append(v.Formatted, "")
			default:
				v.Formatted = append(v.Formatted, fmt.Sprintf("%v", x))
			}
		}
	}
	v.Unordered = strings.Contains(relaxed, "*") || strings.Contains(relaxed, "..")
	if v.Unordered {
		sortByJSON(v.Values, v.Formatted)
	}
	return v
}

func sortByJSON(values []any, formatted []string) {
	keys := make([]string, len(values))
	for i, x := range values {
		b, _ := json.Marshal(x)
		keys[i] = string(b)
	}
	idx := make([]int, len(values))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	v2 := make([]any, len(values))
	f2 := make([]string, len(formatted))
	for i, j := range idx {
		v2[i] = values[j]
		if j < len(formatted) {
			f2[i] = formatted[j]
		}
	}
	copy(values, v2)
	copy(formatted, f2)
}

// ---------------------------------------------------------------- three-way patches (kubectl apply)

func original(c threeWayCase) []byte {
	if len(c.Original) == 0 || string(c.Original) == "null" {
		return nil
	}
	return c.Original
}

func recordStrategic(c threeWayCase, kindSchema *spec.Schema, v3 map[string]*spec.Schema) threeWayVector {
	v := threeWayVector{threeWayCase: c}
	obj, ok := kinds[c.Kind]
	if !ok {
		panic("unknown kind " + c.Kind)
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(obj)
	check(err)
	patch, err := strategicpatch.CreateThreeWayMergePatch(original(c), c.Modified, c.Current, meta, true)
	// The same with the schema written for the TypeScript side: it must mean the same to Go.
	v3meta := strategicpatch.PatchMetaFromOpenAPIV3{Schema: kindSchema, SchemaList: v3}
	patch3, err3 := strategicpatch.CreateThreeWayMergePatch(original(c), c.Modified, c.Current, v3meta, true)
	if (err == nil) != (err3 == nil) || (err == nil && !jsonEqual(patch, patch3)) {
		panic(fmt.Sprintf("case %q: struct meta gives %s / %v, the written OpenAPI v3 schema gives %s / %v", c.Name, patch, err, patch3, err3))
	}
	if err != nil {
		v.Error = err.Error()
		return v
	}
	check(json.Unmarshal(patch, &v.Patch))
	return v
}

func recordJSONMerge(c threeWayCase) threeWayVector {
	v := threeWayVector{threeWayCase: c}
	preconditions := []mergepatch.PreconditionFunc{mergepatch.RequireKeyUnchanged("apiVersion"),
		mergepatch.RequireKeyUnchanged("kind"), mergepatch.RequireMetadataKeyUnchanged("name")}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original(c), c.Modified, c.Current, preconditions...)
	if err != nil {
		// kubectl apply (apply/patcher.go) means to say "At least one of apiVersion, kind and name was changed"
		// here, but its IsPreconditionFailed tests for a value and gets a pointer, so it prints this error.
		v.Error = err.Error()
		return v
	}
	check(json.Unmarshal(patch, &v.Patch))
	applied, err := jsonpatch.MergePatch(c.Current, patch)
	check(err)
	check(json.Unmarshal(applied, &v.Applied))
	return v
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// ---------------------------------------------------------------- OpenAPI v3 schemas from the Go types

// schemaGen writes `components.schemas` the way kube-apiserver publishes them for built-in types: one
// schema per named struct, references wrapped in allOf, and the patch extensions taken from the same
// struct tags (`patchStrategy`, `patchMergeKey`) the server's generator reads. Only what patch metadata
// needs is written (no descriptions, formats or required lists).
type schemaGen struct{ schemas map[string]any }

var marshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

func schemaName(t reflect.Type) string {
	parts := strings.Split(t.PkgPath(), "/")
	host := strings.Split(parts[0], ".")
	for i, j := 0, len(host)-1; i < j; i, j = i+1, j-1 {
		host[i], host[j] = host[j], host[i]
	}
	return strings.Join(append(append(host, parts[1:]...), t.Name()), ".")
}

func (g *schemaGen) ref(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		return map[string]any{"type": "string"} // Quantity, IntOrString, Time, RawExtension...: opaque to patching
	}
	switch t.Kind() {
	case reflect.Struct:
		name := schemaName(t)
		if _, ok := g.schemas[name]; !ok {
			g.schemas[name] = nil // recursion guard
			props := map[string]any{}
			g.fields(t, props)
			g.schemas[name] = map[string]any{"type": "object", "properties": props}
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.ref(t.Elem())}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string"}
		}
		return map[string]any{"type": "array", "items": g.ref(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Interface:
		return map[string]any{}
	default:
		return map[string]any{"type": "integer"}
	}
}

func (g *schemaGen) fields(t reflect.Type, props map[string]any) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous { // ",inline"
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			g.fields(ft, props)
			continue
		}
		if name == "" {
			name = f.Name
		}
		s := g.ref(f.Type)
		if _, isRef := s["$ref"]; isRef {
			s = map[string]any{"allOf": []any{s}, "default": map[string]any{}}
		}
		if v := f.Tag.Get("patchStrategy"); v != "" {
			s["x-kubernetes-patch-strategy"] = v
		}
		if v := f.Tag.Get("patchMergeKey"); v != "" {
			s["x-kubernetes-patch-merge-key"] = v
		}
		props[name] = s
	}
}

func v3Schemas(schemas map[string]any) map[string]*spec.Schema {
	out := map[string]*spec.Schema{}
	for name, s := range schemas {
		b, err := json.Marshal(s)
		check(err)
		var sch spec.Schema
		check(json.Unmarshal(b, &sch))
		out[name] = &sch
	}
	return out
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
