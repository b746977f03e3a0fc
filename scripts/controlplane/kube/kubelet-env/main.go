// Command kubelet-env prints the environment the kubelet would give each
// container of a Pod: it reads the Pod as JSON on stdin and expands every env
// value with the kubelet's own expansion package, in the order and with the
// mapping of makeEnvironmentVariables (pkg/kubelet/kubelet_pods.go): a
// variable sees the ones defined before it. kwok runs no processes, so tests
// use this to see what an agent would see. Values from valueFrom and service
// links are outside its scope.
//
// Output: one JSON object, container name -> variable name -> value.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

func main() {
	var pod corev1.Pod
	if err := json.NewDecoder(os.Stdin).Decode(&pod); err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-env: read pod: %v\n", err)
		os.Exit(1)
	}
	out := map[string]map[string]string{}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		env := map[string]string{}
		mapping := expansion.MappingFuncFor(env)
		for _, e := range c.Env {
			value := e.Value
			if value != "" {
				value = expansion.Expand(value, mapping)
			}
			env[e.Name] = value
		}
		out[c.Name] = env
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-env: %v\n", err)
		os.Exit(1)
	}
}
