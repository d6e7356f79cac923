// Command golden renders khook pipeline golden vectors with the real Go implementation
// (text/template + sprig v3), so the TypeScript evaluator can be checked against Go without Go in CI.
//
// Regenerate (from this directory):
//
//	go run . vectors            # reads cases.json, writes vectors.json
//	go run . tables ../../../provider/gotemplate/unicode-tables.ts   # Go's Unicode tables for the evaluator
//
// Each case is rendered as the template `{{ . | <pipeline> }}` executed with the string value as dot,
// using sprig.HermeticTxtFuncMap() minus the functions khook excludes (see excluded below).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"unicode"

	"github.com/Masterminds/sprig/v3"
)

// excluded are removed from sprig's hermetic map: certificate/password generators, and functions that are
// not deterministic although sprig calls them hermetic. khook rejects them with an explanatory error; Go
// (without them in the map) fails with "function ... not defined" — both are errors.
var excluded = []string{
	"bcrypt", "htpasswd", "genPrivateKey", "genCA", "genCAWithKey", "genSelfSignedCert",
	"genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey",
	"randInt", "shuffle", "encryptAES", "ago", "toDate", "mustToDate",
}

func funcMap() template.FuncMap {
	fm := sprig.HermeticTxtFuncMap()
	for _, n := range excluded {
		delete(fm, n)
	}
	return fm
}

type testCase struct {
	Value         string `json:"value"`
	Pipeline      string `json:"pipeline"`
	ErrorContains string `json:"errorContains,omitempty"`
}

type vector struct {
	Value         string `json:"value"`
	Pipeline      string `json:"pipeline"`
	Output        *string `json:"output,omitempty"`
	Error         bool   `json:"error,omitempty"`
	ErrorContains string `json:"errorContains,omitempty"`
	GoError       string `json:"goError,omitempty"`
}

func render(fm template.FuncMap, value, pipeline string) (string, error) {
	t, err := template.New("t").Funcs(fm).Parse("{{ . | " + pipeline + " }}")
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, value); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func vectors() {
	raw, err := os.ReadFile("cases.json")
	if err != nil {
		panic(err)
	}
	var cases []testCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		panic(err)
	}
	fm := funcMap()
	names := make([]string, 0, len(fm))
	for k := range fm {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "allowed sprig functions: %d\n", len(names))
	seen := map[string]bool{}
	var out [][]byte
	failed := false
	for _, c := range cases {
		key := c.Value + "\x00" + c.Pipeline
		if seen[key] {
			fmt.Fprintf(os.Stderr, "duplicate case: %q | %q\n", c.Value, c.Pipeline)
			failed = true
		}
		seen[key] = true
		v := vector{Value: c.Value, Pipeline: c.Pipeline}
		s, err := render(fm, c.Value, c.Pipeline)
		if err != nil {
			v.Error = true
			v.GoError = err.Error()
			v.ErrorContains = c.ErrorContains
			if c.ErrorContains != "" && !strings.Contains(err.Error(), c.ErrorContains) {
				fmt.Fprintf(os.Stderr, "case %q | %q: Go error %q does not contain %q\n", c.Value, c.Pipeline, err.Error(), c.ErrorContains)
				failed = true
			}
		} else {
			if c.ErrorContains != "" {
				fmt.Fprintf(os.Stderr, "case %q | %q: expected an error containing %q, got output %q\n", c.Value, c.Pipeline, c.ErrorContains, s)
				failed = true
			}
			v.Output = &s
		}
		out = append(out, marshal(v))
	}
	// Which allowed functions are never exercised?
	for _, n := range names {
		used := false
		for _, c := range cases {
			if containsWord(c.Pipeline, n) {
				used = true
				break
			}
		}
		if !used {
			fmt.Fprintf(os.Stderr, "function never used: %s\n", n)
		}
	}
	body := append([]byte("[\n"), bytes.Join(out, []byte(",\n"))...)
	body = append(body, []byte("\n]\n")...)
	if err := os.WriteFile("vectors.json", body, 0o644); err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stderr, "wrote %d vectors\n", len(out))
	if failed {
		os.Exit(1)
	}
}

func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || !isIdent(rune(s[j-1]))
		after := j+len(w) == len(s) || !isIdent(rune(s[j+len(w)]))
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isIdent(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// ranges emits the code points where pred holds as a compact delta-encoded base-36 list:
// "start,length" pairs, start relative to the end of the previous range.
func ranges(pred func(rune) bool) string {
	var parts []string
	prevEnd := rune(0)
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !pred(r) {
			continue
		}
		start := r
		for r+1 <= unicode.MaxRune && pred(r+1) {
			r++
		}
		parts = append(parts, strconv.FormatInt(int64(start-prevEnd), 36)+"."+strconv.FormatInt(int64(r-start+1), 36))
		prevEnd = r + 1
	}
	return strings.Join(parts, ",")
}

func tables(path string) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.IsPrint(r) != strconv.IsPrint(r) {
			panic(fmt.Sprintf("unicode.IsPrint and strconv.IsPrint differ at %U", r))
		}
	}
	var b strings.Builder
	b.WriteString("// Code generated by test/golden/pipeline (go run . tables); DO NOT EDIT.\n")
	fmt.Fprintf(&b, "// Unicode tables of Go's unicode package (Unicode %s), so that case mapping and character classes\n", unicode.Version)
	b.WriteString("// match Go exactly rather than the JavaScript engine's Unicode version.\n\n")
	fmt.Fprintf(&b, "export const GO_UNICODE_VERSION = %q;\n\n", unicode.Version)
	b.WriteString("/** unicode.CaseRanges: [lo, hi, deltaUpper, deltaLower, deltaTitle]; a delta of 0x110000 marks an Upper/Lower alternating sequence. */\n")
	b.WriteString("export const CASE_RANGES: ReadonlyArray<readonly [number, number, number, number, number]> = [\n")
	for _, cr := range unicode.CaseRanges {
		fmt.Fprintf(&b, "  [%d, %d, %d, %d, %d],\n", cr.Lo, cr.Hi, cr.Delta[0], cr.Delta[1], cr.Delta[2])
	}
	b.WriteString("];\n\n")
	b.WriteString("/** Delta-encoded base-36 ranges (\"gap.length\" pairs) of code points where the Go predicate holds. */\n")
	preds := []struct {
		name string
		f    func(rune) bool
	}{
		{"LETTER", unicode.IsLetter},
		{"DIGIT", unicode.IsDigit},
		{"NUMBER", unicode.IsNumber},
		{"UPPER", unicode.IsUpper},
		{"LOWER", unicode.IsLower},
		{"TITLE", unicode.IsTitle},
		{"PUNCT", unicode.IsPunct},
		{"PRINT", unicode.IsPrint},
		{"SPACE", unicode.IsSpace},
	}
	for _, p := range preds {
		fmt.Fprintf(&b, "export const %s_RANGES = %q;\n", p.name, ranges(p.f))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		panic(err)
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run . vectors | tables <out.ts>")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "vectors":
		vectors()
	case "tables":
		tables(os.Args[2])
	case "eval": // ad-hoc: go run . eval <value> <pipeline>
		s, err := render(funcMap(), os.Args[2], os.Args[3])
		if err != nil {
			fmt.Println("ERROR:", err)
			return
		}
		fmt.Printf("%q\n", s)
	default:
		os.Exit(2)
	}
}
