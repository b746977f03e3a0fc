package manager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// InstallCheck is what `<manager> check-install` waits for, the Helm
// chart's test (`helm test`): every named Deployment in Namespace Available
// with its latest generation observed, and every named
// CustomResourceDefinition Established. It only gets objects by name, so
// the RBAC it needs is get on those names.
type InstallCheck struct {
	Namespace   string
	Deployments []string
	CRDs        []string
	// Timeout bounds the wait; Interval is the time between two rounds.
	Timeout, Interval time.Duration
}

var (
	deploymentsResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	crdsResource        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// Run waits until every object is ready or Timeout passes, then writes one
// line per object, as the last round read it, to out; the error names each
// object that is not ready.
func (c InstallCheck) Run(ctx context.Context, dyn dynamic.Interface, out io.Writer) error {
	deadline := time.Now().Add(c.Timeout)
	for {
		states, ready := c.round(ctx, dyn)
		if ready || !time.Now().Before(deadline) || ctx.Err() != nil {
			_, err := io.WriteString(out, strings.Join(states, "\n")+"\n")
			if !ready {
				return errors.Join(fmt.Errorf("not ready after %s", c.Timeout), ctx.Err(), err)
			}
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(min(c.Interval, time.Until(deadline))):
		}
	}
}

// round reads every object once.
func (c InstallCheck) round(ctx context.Context, dyn dynamic.Interface) ([]string, bool) {
	var states []string
	ready := true
	check := func(ri dynamic.ResourceInterface, kind, name, condition string) {
		obj, err := ri.Get(ctx, name, metav1.GetOptions{})
		state := condition
		if why := notReady(obj, err, condition); why != "" {
			ready, state = false, "NOT READY: "+why
		}
		if kind == "Deployment" {
			name = c.Namespace + "/" + name
		}
		states = append(states, fmt.Sprintf("%s %s: %s", kind, name, state))
	}
	for _, d := range c.Deployments {
		check(dyn.Resource(deploymentsResource).Namespace(c.Namespace), "Deployment", d, "Available")
	}
	for _, crd := range c.CRDs {
		check(dyn.Resource(crdsResource), "CustomResourceDefinition", crd, "Established")
	}
	return states, ready
}

// notReady says why obj (read with err) is not ready: its condition of that
// type not True or, for an object with status.observedGeneration (a
// Deployment), its latest generation not observed yet; "" when ready.
func notReady(obj *unstructured.Unstructured, err error, condition string) string {
	if err != nil {
		return err.Error()
	}
	observed, found, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if found && observed < obj.GetGeneration() {
		return fmt.Sprintf("generation %d not observed yet (%d)", obj.GetGeneration(), observed)
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != condition {
			continue
		}
		if m["status"] == "True" {
			return ""
		}
		return fmt.Sprintf("%s=%v (%v: %v)", condition, m["status"], m["reason"], m["message"])
	}
	return "no " + condition + " condition yet"
}

// newCheckInstallCommand is the `check-install` subcommand of every manager
// binary: the chart's test pod runs it in the managers' own image, so the
// test needs neither kubectl nor another image.
func newCheckInstallCommand() *cobra.Command {
	check := InstallCheck{Interval: 2 * time.Second}
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "check-install",
		Short: "Wait until the managers' Deployments are Available and the CRDs Established (the Helm chart's test)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SilenceUsage = true
			cfg, err := loadRESTConfig(kubeconfig)
			if err != nil {
				return fmt.Errorf("load kubeconfig: %w", err)
			}
			dyn, err := dynamic.NewForConfig(cfg)
			if err != nil {
				return err
			}
			if check.Namespace == "" {
				check.Namespace = (&Options{}).OwnNamespace()
			}
			return check.Run(cmd.Context(), dyn, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&check.Namespace, "namespace", "", "Namespace of the Deployments; empty means the pod's own.")
	fs.StringSliceVar(&check.Deployments, "deployment", nil, "Deployments that must be Available (comma list).")
	fs.StringSliceVar(&check.CRDs, "crd", nil, "CustomResourceDefinitions that must be Established (comma list).")
	fs.DurationVar(&check.Timeout, "timeout", 2*time.Minute, "How long to wait for all of them.")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig file; empty means KUBECONFIG, the in-cluster config or $HOME/.kube/config.")
	return cmd
}
