package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"opsnorth.io/scheduler/apis/scheduler/v1alpha1"
	"opsnorth.io/scheduler/pkg/deployments/tiers"
)

func TestName(t *testing.T) {
	long := strings.Repeat("a", 50)
	tests := []struct {
		parts []string
		want  string
	}{
		{parts: []string{"shop", "web"}, want: "shop-web"},
		{parts: []string{long, "service-with-long-name"}, want: (long + "-s")[:52] + "-" + Hash(long+"-service-with-long-name", 10)},
	}
	for _, tt := range tests {
		got := Name(tt.parts...)
		assert.Equal(t, tt.want, got)
		assert.Empty(t, validation.IsDNS1123Label(got))
	}
	key := strings.Repeat("n", 63) + "." + strings.Repeat("m", 40)
	assert.Empty(t, validation.IsValidLabelValue(KeyLabel(key)))
	assert.Len(t, KeyLabel(key), 63)
	assert.Equal(t, "ns.name", KeyLabel("ns.name"))
	ns, name, ok := ParseKey("team.shop.v2")
	assert.Equal(t, []any{"team", "shop.v2", true}, []any{ns, name, ok})
}

func TestServices(t *testing.T) {
	tests := []struct {
		name    string
		ud      *v1alpha1.UserDeployment
		tmpl    *v1alpha1.DeploymentTemplate
		want    []string
		wantErr string
	}{
		{name: "template", ud: makeUD("shop").template("web-app").obj(), tmpl: webApp(), want: []string{"web", "worker", "admin"}},
		{name: "raw image", ud: makeUD("hello").image("hello:2", 8080).obj(), want: []string{"app"}},
		{name: "template missing", ud: makeUD("shop").template("web-app").obj(), wantErr: "template not resolved"},
		{name: "neither", ud: makeUD("x").obj(), wantErr: "spec.image with spec.containerPort"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Services(tt.ud, tt.tmpl)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, s := range got {
				names = append(names, s.Name)
			}
			assert.Equal(t, tt.want, names)
		})
	}
	raw, err := Services(makeUD("hello").image("hello:2", 8080).obj(), nil)
	require.NoError(t, err)
	assert.Equal(t, v1alpha1.TemplateService{Name: "app", Image: "hello:2", Expose: "http", Replicas: raw[0].Replicas,
		Ports: []v1alpha1.ServicePort{{Name: "http", Port: 8080, Protocol: "TCP"}}}, raw[0])
}

func TestReplicasAndTier(t *testing.T) {
	svc := webApp().Spec.Services[0] // replicas 2
	tests := []struct {
		name    string
		ud      *v1alpha1.UserDeployment
		want    *int32
		tierErr string
	}{
		{name: "template default", ud: makeUD("a").obj(), want: ptrTo(2)},
		{name: "override", ud: makeUD("a").replicas(5).obj(), want: ptrTo(5)},
		{name: "stopped", ud: makeUD("a").replicas(5).stopped().obj(), want: ptrTo(0)},
		{name: "autoscaled", ud: makeUD("a").autoscale(1, 3).obj(), want: nil},
		{name: "over tier", ud: makeUD("a").replicas(11).obj(), want: ptrTo(11), tierErr: "service web: 11 replicas exceed the pro tier's maximum of 10"},
		{name: "autoscale over tier", ud: makeUD("a").autoscale(1, 20).obj(), tierErr: "autoscaling.maxReplicas 20 exceeds the pro tier's maximum of 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Replicas(tt.ud, svc))
			err := CheckTier(tt.ud, []v1alpha1.TemplateService{svc}, tiers.Defaults()["pro"])
			if tt.tierErr == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tt.tierErr)
			}
		})
	}
}

func ptrTo(n int32) *int32 { return &n }

func TestCheckTierResources(t *testing.T) {
	svc := webApp().Spec.Services[0] // limits cpu unset, memory 512Mi
	ud := makeUD("a").obj()
	ud.Spec.Tier = "free"
	assert.NoError(t, CheckTier(ud, []v1alpha1.TemplateService{svc}, tiers.Defaults()["pro"]))
	free := tiers.Defaults()["free"] // max memory 1Gi, max replicas 2
	big := *svc.DeepCopy()
	big.Resources.Limits.Memory = ptrQ("2Gi")
	assert.EqualError(t, CheckTier(ud, []v1alpha1.TemplateService{big}, free),
		"service web: memory 2Gi exceeds the free tier's maximum of 1Gi")
	big.Resources.Limits.Memory = ptrQ("1Gi")
	assert.NoError(t, CheckTier(ud, []v1alpha1.TemplateService{big}, free), "equal to the maximum is allowed")
}

func TestHosts(t *testing.T) {
	tmpl := webApp()
	public := Hosts(makeUD("shop").template("web-app").obj(), tmpl.Spec.Services, "apps.example.com")
	assert.Equal(t, []v1alpha1.IngressStatus{
		{Service: "web", Host: "shop.apps.example.com", URL: "https://shop.apps.example.com", Visibility: "public"},
		{Service: "admin", Host: "shop-admin.apps.example.com", URL: "https://shop-admin.apps.example.com", Visibility: "public"},
	}, public)
	internal := Hosts(makeUD("shop").template("web-app").internal().obj(), tmpl.Spec.Services, "apps.example.com")
	assert.Equal(t, "shop.int.apps.example.com", internal[0].Host)
	assert.Equal(t, "shop-admin.int.apps.example.com", internal[1].Host)
	assert.Equal(t, v1alpha1.VisibilityInternal, internal[1].Visibility)
}

func TestChildren(t *testing.T) {
	all := Capabilities{IngressRoute: true, ExternalSecret: true, ServiceMonitor: true}
	kinds := func(cs []Child) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.GVK.Kind+"/"+c.Name)
		}
		return out
	}
	tests := []struct {
		name    string
		ud      *v1alpha1.UserDeployment
		tmpl    *v1alpha1.DeploymentTemplate
		o       func(*Options)
		caps    Capabilities
		want    []string
		wantErr error
	}{
		{name: "raw image", ud: makeUD("hello").image("hello:2", 8080).obj(), caps: all,
			want: []string{"Deployment/hello-app", "Service/hello-app", "IngressRoute/hello-app", "NetworkPolicy/hello-isolation"}},
		{name: "template with everything", ud: makeUD("shop").template("web-app").secret("DB", "k").autoscale(1, 3).obj(), tmpl: webApp(), caps: all,
			want: []string{"ExternalSecret/shop-secrets",
				"ConfigMap/shop-web-env", "Deployment/shop-web", "Service/shop-web", "HorizontalPodAutoscaler/shop-web", "ServiceMonitor/shop-web",
				"PersistentVolumeClaim/shop-worker-data", "Deployment/shop-worker", "HorizontalPodAutoscaler/shop-worker",
				"Deployment/shop-admin", "Service/shop-admin", "HorizontalPodAutoscaler/shop-admin",
				"IngressRoute/shop-web", "IngressRoute/shop-admin", "NetworkPolicy/shop-isolation"}},
		{name: "no optional CRDs, no policies, stopped", ud: makeUD("shop").template("web-app").autoscale(1, 3).stopped().obj(), tmpl: webApp(),
			o: func(o *Options) { o.NetworkPolicies = false },
			want: []string{"ConfigMap/shop-web-env", "Deployment/shop-web", "Service/shop-web",
				"PersistentVolumeClaim/shop-worker-data", "Deployment/shop-worker", "Deployment/shop-admin", "Service/shop-admin",
				"Ingress/shop-web", "Ingress/shop-admin"}},
		{name: "secrets without the CRD", ud: makeUD("hello").image("hello:2", 8080).secret("DB", "k").obj(), wantErr: ErrNoExternalSecrets},
		{name: "secret key outside the user's prefix", ud: makeUD("hello").image("hello:2", 8080).secret("DB", "../bob/db").obj(), caps: all,
			wantErr: ErrSecretKeyNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts()
			if tt.o != nil {
				tt.o(&o)
			}
			got, err := Children(app(t, tt.ud, tt.tmpl), o, tt.caps)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, kinds(got))
			for _, c := range got {
				assert.Equal(t, "user-alice", c.Namespace, c.Name)
				ann := field(t, c, "metadata", "annotations").(map[string]any)
				assert.Equal(t, "team."+tt.ud.Name, ann[AnnotationUserDeployment], c.Name)
				lbls := field(t, c, "metadata", "labels").(map[string]any)
				assert.Equal(t, "opsnorth-scheduler", lbls["app.kubernetes.io/managed-by"])
				assert.Equal(t, "alice", lbls["scheduler.opsnorth.io/user"])
				assert.Equal(t, "team."+tt.ud.Name, lbls["scheduler.opsnorth.io/user-deployment"])
			}
		})
	}
}

func ptrQ(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
