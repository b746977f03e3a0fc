package deployments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/render"
	"opsnorth.io/scheduler/pkg/repo"
)

func TestReservedHost(t *testing.T) {
	twoExposed := &v1alpha1.DeploymentTemplate{Spec: v1alpha1.DeploymentTemplateSpec{Services: []v1alpha1.TemplateService{
		{Name: "web", Image: "web", Ports: []v1alpha1.ServicePort{{Name: "http", Port: 80}}, Expose: "http"},
		{Name: "sts", Image: "sts", Ports: []v1alpha1.ServicePort{{Name: "http", Port: 80}}, Expose: "http"},
	}}}
	tests := []struct {
		name, ud   string
		visibility v1alpha1.Visibility
		tmpl       *v1alpha1.DeploymentTemplate
		reserved   []string
		want       string
	}{
		{name: "a free name", ud: "shop"},
		{name: "a reserved name", ud: "www",
			want: `metadata.name "www" makes host www.apps.example.com, whose first label is reserved`},
		{name: "reserved, internal too", ud: "www", visibility: v1alpha1.VisibilityInternal,
			want: `metadata.name "www" makes host www.int.apps.example.com, whose first label is reserved`},
		{name: "int, the parent of internal hosts", ud: "int",
			want: `metadata.name "int" makes host int.apps.example.com, whose first label is reserved`},
		{name: "a further service's host", ud: "mta", tmpl: twoExposed,
			want: `metadata.name "mta" and service "sts" make host mta-sts.apps.example.com, whose first label is reserved`},
		{name: "nothing reserved", ud: "www", reserved: []string{}},
		{name: "a list of its own", ud: "shop", reserved: []string{"shop"},
			want: `metadata.name "shop" makes host shop.apps.example.com, whose first label is reserved`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ud := hostsUD("a", tt.ud)
			ud.Spec.Visibility = tt.visibility
			if tt.tmpl != nil {
				ud.Spec.Image, ud.Spec.ContainerPort, ud.Spec.Template = "", nil, "two"
			}
			services, err := render.Services(ud, tt.tmpl)
			require.NoError(t, err)
			reserved := tt.reserved
			if reserved == nil {
				reserved = DefaultReservedHosts
			}
			assert.Equal(t, tt.want, reservedHost(ud, render.Hosts(ud, services, "apps.example.com"), reserved))
		})
	}
}

// TestReservedHostsAgree keeps the three homes of the default list equal:
// the flag's default, the policy's ConfigMap in kustomize and the chart's
// value.
func TestReservedHostsAgree(t *testing.T) {
	root, err := repo.Root()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "kustomize", "base", "policies", "reserved-hosts.yaml"))
	require.NoError(t, err)
	var kustomize []string
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		var cm struct {
			Kind string            `json:"kind"`
			Data map[string]string `json:"data"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &cm))
		if cm.Kind == "ConfigMap" {
			for h := range strings.SplitSeq(cm.Data["hosts"], ",") {
				kustomize = append(kustomize, strings.TrimSpace(h))
			}
		}
	}
	assert.Equal(t, DefaultReservedHosts, kustomize, "kustomize/base/policies/reserved-hosts.yaml")

	data, err = os.ReadFile(filepath.Join(root, "manifests", "charts", "opsnorth-scheduler", "values.yaml"))
	require.NoError(t, err)
	var values struct {
		Managers struct {
			Deployments struct {
				ReservedHosts []string `json:"reservedHosts"`
			} `json:"deployments"`
		} `json:"managers"`
	}
	require.NoError(t, yaml.Unmarshal(data, &values))
	assert.Equal(t, DefaultReservedHosts, values.Managers.Deployments.ReservedHosts, "the chart's managers.deployments.reservedHosts")
}
