package resolve

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL is where a schema under check is put for the compiler: on a
// scheme nothing serves, so a relative $ref resolves to a URL the loader
// refuses like any other.
const schemaURL = "mem:///schema.json"

// drafts are the $schema values honoured, without "http(s)://" and "#".
var drafts = map[string]bool{
	"json-schema.org/draft-04/schema":      true,
	"json-schema.org/draft-06/schema":      true,
	"json-schema.org/draft-07/schema":      true,
	"json-schema.org/draft/2019-09/schema": true,
	"json-schema.org/draft/2020-12/schema": true,
	"json-schema.org/schema":               true,
}

// refuser is the compiler's loader: it loads nothing and remembers the
// first URL asked for. The drafts' meta-schemas are built into the
// compiler and never reach it.
type refuser struct{ url string }

func (l *refuser) Load(url string) (any, error) {
	if l.url == "" {
		l.url = url
	}
	return nil, errors.New("not fetched")
}

// compileSchema compiles one schema object that scan has bounded.
func compileSchema(raw []byte, res *regexps) (err error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	if obj, ok := doc.(map[string]any); ok {
		if s, ok := obj["$schema"].(string); ok && !knownDraft(s) {
			return fmt.Errorf("unsupported $schema %q: use draft-04, -06, -07, 2019-09 or 2020-12 (the default)", s)
		}
	}
	loader := &refuser{}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(loader)
	c.UseRegexpEngine(res.compile)
	res.refused = nil
	defer func() {
		// The compiler is a large parser of hostile input: a panic in it
		// is an invalid schema, not a crashed manager.
		if p := recover(); p != nil {
			err = fmt.Errorf("schema compiler failed: %v", p)
		}
		switch {
		case err == nil:
		case loader.url != "":
			err = fmt.Errorf("%w (asked for %s; $ref must stay inside the schema): %w", ErrFetchRefused, loader.url, err)
		case res.refused != nil:
			err = fmt.Errorf("%w: %w", res.refused, err)
		}
	}()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return fmt.Errorf("add schema: %w", err)
	}
	if _, err := c.Compile(schemaURL); err != nil {
		// The compiler names locations by our internal URL: users wrote
		// the schema, not that URL, so the message points into it.
		msg := strings.ReplaceAll(err.Error(), `"`+schemaURL+`#"`, "the schema")
		return fmt.Errorf("invalid JSON Schema: %s", strings.ReplaceAll(msg, schemaURL, ""))
	}
	return nil
}

func knownDraft(s string) bool {
	s = strings.TrimSuffix(s, "#")
	if t, ok := strings.CutPrefix(s, "https://"); ok {
		return drafts[t]
	}
	if t, ok := strings.CutPrefix(s, "http://"); ok {
		return drafts[t]
	}
	return false
}
