package integration

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opsnorth.io/scheduler/pkg/testenv"
)

// TestCRDsEstablished checks every CRD the managers depend on is installed,
// established and (for ours) in the scheduler category with its short name.
func TestCRDsEstablished(t *testing.T) {
	env := testenv.Require(t)
	client, err := apiextensionsclient.NewForConfig(env.Config)
	require.NoError(t, err)

	tests := []struct {
		name      string
		shortName string
	}{
		{name: "userdeployments.scheduler.opsnorth.io", shortName: "ud"},
		{name: "deploymenttemplates.scheduler.opsnorth.io", shortName: "udt"},
		{name: "agenttasks.scheduler.opsnorth.io", shortName: "at"},
		{name: "workflows.scheduler.opsnorth.io", shortName: "wf"},
		{name: "agents.ossa.ai", shortName: "agt"},
		{name: "ingressroutes.traefik.io"},
		{name: "externalsecrets.external-secrets.io"},
		{name: "servicemonitors.monitoring.coreos.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), tt.name, metav1.GetOptions{})
			require.NoError(t, err)
			require.True(t, established(crd), "CRD %s is not Established: %+v", tt.name, crd.Status.Conditions)
			if tt.shortName != "" {
				require.Contains(t, crd.Spec.Names.ShortNames, tt.shortName)
				require.Contains(t, crd.Spec.Names.Categories, "scheduler")
				require.NotNil(t, crd.Spec.Versions[0].Subresources, "status subresource")
				require.NotNil(t, crd.Spec.Versions[0].Subresources.Status, "status subresource")
				require.NotEmpty(t, crd.Spec.Versions[0].AdditionalPrinterColumns)
			}
		})
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
