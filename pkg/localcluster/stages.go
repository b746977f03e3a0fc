package localcluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// PodDelayAnnotation marks a kwok Stage whose spec.delay.durationMilliseconds
// is the default run time of a pod (used when the pod names no
// kwok.opsnorth.io/delay); Options.PodDelay replaces it.
const PodDelayAnnotation = "localcluster.opsnorth.io/pod-delay"

// loadStages reads every *.yaml file of dir (sorted by name), checks that
// each document is a kwok Stage, and, when podDelay > 0, sets the default
// delay of the stages marked with PodDelayAnnotation. It returns the stages
// as one multi-document YAML for kwok's --config.
func loadStages(dir string, podDelay time.Duration) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list stages in %s: %w", dir, err)
	}
	sort.Strings(files)
	var out bytes.Buffer
	count := 0
	for _, f := range files {
		docs, err := readDocuments(f)
		if err != nil {
			return nil, err
		}
		for _, doc := range docs {
			stage, err := stageWithDelay(doc, podDelay)
			if err != nil {
				return nil, fmt.Errorf("stage in %s: %w", f, err)
			}
			out.WriteString("---\n")
			out.Write(stage)
			count++
		}
	}
	if count == 0 {
		return nil, fmt.Errorf("no kwok stages in %s: kwok refuses to start without them", dir)
	}
	return out.Bytes(), nil
}

// readDocuments splits a YAML file into its non-empty documents.
func readDocuments(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
}

// stageWithDelay validates one Stage document and applies podDelay to it if
// it carries PodDelayAnnotation.
func stageWithDelay(doc []byte, podDelay time.Duration) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if obj == nil {
		return nil, errors.New("empty document")
	}
	if obj["apiVersion"] != "kwok.x-k8s.io/v1alpha1" || obj["kind"] != "Stage" {
		return nil, fmt.Errorf("want a kwok.x-k8s.io/v1alpha1 Stage, got %v %v", obj["apiVersion"], obj["kind"])
	}
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if _, marked := annotations[PodDelayAnnotation]; !marked || podDelay <= 0 {
		return yaml.Marshal(obj)
	}
	spec, _ := obj["spec"].(map[string]any)
	delay, ok := spec["delay"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("stage %v is marked %s but has no spec.delay", meta["name"], PodDelayAnnotation)
	}
	delay["durationMilliseconds"] = podDelay.Milliseconds()
	return yaml.Marshal(obj)
}
