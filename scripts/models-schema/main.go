// Command models-schema prints the OpenAPI v2 definitions of the scheduler API
// (and the Kubernetes types it embeds) as JSON. scripts/generate.sh feeds it to
// applyconfiguration-gen, so the generated fake clientset understands
// server-side apply of our kinds.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"opsnorth.io/scheduler/generated/openapi"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "models-schema: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	ref := func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + common.EscapeJsonPointer(definitionName(name)))
	}
	defs := openapi.GetOpenAPIDefinitions(ref)
	schemas := make(map[string]spec.Schema, len(defs))
	for name, def := range defs {
		schema := def.Schema
		// Prefer the embedded OpenAPI v2 schema where a type carries both.
		if v2, ok := def.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
			schema = v2
		}
		schemas[definitionName(name)] = schema
	}
	doc := spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "opsnorth scheduler", Version: "v1alpha1"}},
		Definitions: schemas,
	}}
	out, err := json.Marshal(&doc)
	if err != nil {
		return fmt.Errorf("marshal definitions: %w", err)
	}
	_, err = os.Stdout.Write(out)
	return err
}

// definitionName turns a Go package path type name such as
// "k8s.io/api/core/v1.Probe" into the reverse-DNS form Kubernetes uses in
// OpenAPI documents ("io.k8s.api.core.v1.Probe"), which applyconfiguration-gen
// matches against.
func definitionName(name string) string {
	parts := strings.Split(name, "/")
	host := strings.Split(parts[0], ".")
	for i, j := 0, len(host)-1; i < j; i, j = i+1, j-1 {
		host[i], host[j] = host[j], host[i]
	}
	parts[0] = strings.Join(host, ".")
	return strings.Join(parts, ".")
}
