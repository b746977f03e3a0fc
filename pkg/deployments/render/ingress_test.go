package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
)

func TestRoutes(t *testing.T) {
	tests := []struct {
		name     string
		internal bool
		traefik  bool
		check    func(t *testing.T, cs []Child)
	}{
		{name: "traefik public", traefik: true, check: func(t *testing.T, cs []Child) {
			require.Len(t, cs, 2)
			r := cs[0]
			assert.Equal(t, GVKIngressRoute, r.GVK)
			assert.Equal(t, []any{"websecure"}, field(t, r, "spec", "entryPoints"))
			route := field(t, r, "spec", "routes").([]any)[0].(map[string]any)
			assert.Equal(t, "Host(`shop.apps.example.com`)", route["match"])
			assert.Equal(t, map[string]any{"name": "shop-web", "port": int64(8080)}, route["services"].([]any)[0])
			assert.Equal(t, map[string]any{"certResolver": "letsencrypt"}, field(t, r, "spec", "tls"))
			assert.Equal(t, "public", field(t, r, "metadata", "annotations").(map[string]any)["kubernetes.io/ingress.class"])
			admin := field(t, cs[1], "spec", "routes").([]any)[0].(map[string]any)
			assert.Equal(t, "Host(`shop-admin.apps.example.com`)", admin["match"])
		}},
		{name: "ingress fallback internal", internal: true, check: func(t *testing.T, cs []Child) {
			require.Len(t, cs, 2)
			ing := cs[0].Object.(*networkingv1ac.IngressApplyConfiguration)
			assert.Equal(t, "internal", *ing.Spec.IngressClassName)
			assert.Equal(t, "shop.int.apps.example.com", *ing.Spec.Rules[0].Host)
			b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
			assert.Equal(t, "shop-web", *b.Name)
			assert.Equal(t, int32(8080), *b.Port.Number)
			assert.Equal(t, []string{"shop.int.apps.example.com"}, ing.Spec.TLS[0].Hosts)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := makeUD("shop").template("web-app")
			if tt.internal {
				w.internal()
			}
			cs, err := Routes(app(t, w.obj(), webApp()), opts(), Capabilities{IngressRoute: tt.traefik})
			require.NoError(t, err)
			tt.check(t, cs)
		})
	}
}

func TestServiceMonitor(t *testing.T) {
	a := app(t, makeUD("shop").template("web-app").obj(), webApp())
	sm, ok := ServiceMonitor(a, a.Services[0])
	require.True(t, ok)
	assert.Equal(t, []any{map[string]any{"port": "metrics", "path": "/metrics", "interval": "30s"}}, field(t, sm, "spec", "endpoints"))
	assert.Equal(t, map[string]any{"scheduler.opsnorth.io/user-deployment": "team.shop", "scheduler.opsnorth.io/service": "web"},
		field(t, sm, "spec", "selector", "matchLabels"))
	_, ok = ServiceMonitor(a, a.Services[1])
	assert.False(t, ok)
}

func TestNetworkPolicy(t *testing.T) {
	np := NetworkPolicy(app(t, makeUD("shop").template("web-app").obj(), webApp()), opts())
	own := map[string]any{"matchLabels": map[string]any{"scheduler.opsnorth.io/user-deployment": "team.shop"}}
	assert.Equal(t, own, field(t, np, "spec", "podSelector"))
	assert.Equal(t, []any{"Ingress", "Egress"}, field(t, np, "spec", "policyTypes"))
	from := field(t, np, "spec", "ingress").([]any)[0].(map[string]any)["from"].([]any)
	assert.Equal(t, []any{
		map[string]any{"podSelector": own},
		map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "traefik"}}},
	}, from)
	egress := field(t, np, "spec", "egress").([]any)
	require.Len(t, egress, 3)
	assert.Equal(t, []any{map[string]any{"podSelector": own}}, egress[0].(map[string]any)["to"])
	dns := egress[1].(map[string]any)
	assert.Len(t, dns["ports"], 2)
	internet := egress[2].(map[string]any)["to"].([]any)
	assert.Equal(t, map[string]any{"cidr": "0.0.0.0/0", "except": []any{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
		"100.64.0.0/10", "169.254.0.0/16", "127.0.0.0/8"}}, internet[0].(map[string]any)["ipBlock"])
}
