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
// established and (for ours) accepted with exactly its short names and
// categories (README "Names, columns and field selectors").
func TestCRDsEstablished(t *testing.T) {
	env := testenv.Require(t)
	client, err := apiextensionsclient.NewForConfig(env.Config)
	require.NoError(t, err)

	ours := []string{"opsnorth"}
	tests := []struct {
		name       string
		shortNames []string
		categories []string
	}{
		{name: "userdeployments.scheduler.opsnorth.io", shortNames: []string{"ud", "onud"}, categories: ours},
		{name: "deploymenttemplates.scheduler.opsnorth.io", shortNames: []string{"udt", "onudt"}, categories: ours},
		{name: "agenttasks.scheduler.opsnorth.io", shortNames: []string{"at", "onat"}, categories: ours},
		{name: "workflows.scheduler.opsnorth.io", shortNames: []string{"onwf"}, categories: ours},
		{name: "agents.ossa.ai", shortNames: []string{"agt", "onagt"}, categories: []string{"opsnorth", "ossa"}},
		{name: "ingressroutes.traefik.io"},
		{name: "externalsecrets.external-secrets.io"},
		{name: "servicemonitors.monitoring.coreos.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), tt.name, metav1.GetOptions{})
			require.NoError(t, err)
			require.True(t, established(crd), "CRD %s is not Established: %+v", tt.name, crd.Status.Conditions)
			if tt.shortNames != nil {
				require.Equal(t, tt.shortNames, crd.Status.AcceptedNames.ShortNames, "accepted short names")
				require.Equal(t, tt.categories, crd.Status.AcceptedNames.Categories, "accepted categories")
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
