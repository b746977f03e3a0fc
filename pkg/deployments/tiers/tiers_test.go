package tiers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDefaults(t *testing.T) {
	c := Defaults()
	assert.Equal(t, []string{"enterprise", "free", "pro"}, c.Names())
	free, err := c.Get("free")
	require.NoError(t, err)
	assert.Equal(t, int32(2), free.MaxReplicas)
	q := free.Quota["requests.cpu"]
	assert.Equal(t, "1", q.String())
	_, err = c.Get("gold")
	assert.EqualError(t, err, `unknown tier "gold" (known: enterprise, free, pro)`)
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr string
		check   func(t *testing.T, c Config)
	}{
		{name: "valid", data: "tiers:\n  basic:\n    maxReplicas: 3\n    quota: {pods: \"5\", requests.cpu: 500m}\n    max: {cpu: \"1\"}\n",
			check: func(t *testing.T, c Config) {
				assert.Equal(t, int32(3), c["basic"].MaxReplicas)
				assert.True(t, c["basic"].Quota["requests.cpu"].Equal(resource.MustParse("500m")))
				assert.True(t, c["basic"].Max["cpu"].Equal(resource.MustParse("1")))
			}},
		{name: "empty", data: "tiers: {}\n", wantErr: "tier config: no tiers"},
		{name: "unknown field", data: "tiers:\n  a:\n    maxReplica: 3\n", wantErr: `unknown field "maxReplica"`},
		{name: "bad name and replicas", data: "tiers:\n  Bad_Name:\n    maxReplicas: 0\n",
			wantErr: `tier "Bad_Name": invalid name`},
		{name: "zero replicas", data: "tiers:\n  a:\n    quota: {pods: \"1\"}\n", wantErr: `tier "a": maxReplicas must be at least 1`},
		{name: "no quota", data: "tiers:\n  a:\n    maxReplicas: 1\n", wantErr: `tier "a": quota is required`},
		{name: "bad quantity", data: "tiers:\n  a:\n    maxReplicas: 1\n    quota: {cpu: lots}\n", wantErr: "parse tier config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.data))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

func TestLoad(t *testing.T) {
	c, err := Load("")
	require.NoError(t, err)
	assert.Equal(t, Defaults(), c)

	path := filepath.Join(t.TempDir(), "tiers.yaml")
	require.NoError(t, os.WriteFile(path, []byte("tiers:\n  one:\n    maxReplicas: 1\n    quota: {pods: \"1\"}\n"), 0o600))
	c, err = Load(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"one"}, c.Names())

	_, err = Load(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorContains(t, err, "read tier config")
}

func TestDocExampleParses(t *testing.T) {
	c, err := Parse([]byte(`tiers:
  free:
    maxReplicas: 2
    quota: {requests.cpu: "1", requests.memory: 1Gi, limits.cpu: "2", limits.memory: 2Gi, pods: "10"}
    defaultRequest: {cpu: 50m, memory: 64Mi}
    defaultLimit: {cpu: 250m, memory: 256Mi}
    max: {cpu: "1", memory: 1Gi}
`))
	require.NoError(t, err)
	free := c["free"]
	assert.Equal(t, Defaults()["free"].DefaultLimit, free.DefaultLimit)
	assert.Equal(t, Defaults()["free"].Max, free.Max)
}

func TestAllowed(t *testing.T) {
	c := Defaults()
	for _, tc := range []struct {
		asked, max, want string
	}{
		{"free", "free", ""},
		{"free", "pro", ""},
		{"pro", "pro", ""},
		{"pro", "free", `tier "pro" is above "free", the most generous tier allowed`},
		{"enterprise", "pro", `tier "enterprise" is above "pro", the most generous tier allowed`},
		{"gold", "pro", `unknown tier "gold" (known: enterprise, free, pro)`},
		{"free", "gold", `the most generous tier allowed, "gold", is unknown (known: enterprise, free, pro)`},
	} {
		t.Run(tc.asked+" under "+tc.max, func(t *testing.T) {
			err := c.Allowed(tc.asked, tc.max)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tc.want)
		})
	}
}
