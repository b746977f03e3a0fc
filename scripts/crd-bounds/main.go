// Command crd-bounds adds `maxLength: 32` to every x-kubernetes-int-or-string
// node of the CRD files given as arguments, in place.
//
// controller-gen emits resource quantities and int-or-string ports without a
// length bound, and the apiserver's CEL cost estimator then assumes strings as
// long as a whole request, refusing rules such as "request <= limit" as too
// expensive. No quantity or port name needs more than 32 characters.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

const maxLength = 32

func main() {
	for _, path := range os.Args[1:] {
		if err := bound(path); err != nil {
			fmt.Fprintf(os.Stderr, "crd-bounds: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

func bound(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	walk(doc)
	out, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	return os.WriteFile(path, append([]byte("---\n"), out...), 0o644)
}

func walk(node any) {
	switch n := node.(type) {
	case map[string]any:
		if n["x-kubernetes-int-or-string"] == true {
			if _, ok := n["maxLength"]; !ok {
				n["maxLength"] = maxLength
			}
		}
		for _, v := range n {
			walk(v)
		}
	case []any:
		for _, v := range n {
			walk(v)
		}
	}
}
