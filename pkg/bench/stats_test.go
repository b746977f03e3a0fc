package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSummarize(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	got := Summarize(ds)
	assert.Equal(t, Dist{N: 100, P50Ms: 50, P90Ms: 90, P99Ms: 99, MaxMs: 100}, got)
	assert.Equal(t, Dist{}, Summarize(nil))
	assert.Equal(t, Dist{N: 1, P50Ms: 7, P90Ms: 7, P99Ms: 7, MaxMs: 7}, Summarize([]time.Duration{7 * time.Millisecond}))
}

func TestMedian(t *testing.T) {
	assert.InDelta(t, 2.5, Median([]float64{4, 1, 3, 2}), 1e-9)
	assert.InDelta(t, 3, Median([]float64{5, 3, 1}), 1e-9)
	assert.InDelta(t, 0, Median(nil), 1e-9)
}

func TestParseRestWrites(t *testing.T) {
	text := `# HELP rest_client_requests_total Number of HTTP requests
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:1",method="GET"} 40
rest_client_requests_total{code="201",host="127.0.0.1:1",method="POST"} 3
rest_client_requests_total{code="200",host="127.0.0.1:1",method="PATCH"} 5
rest_client_requests_total{code="409",host="127.0.0.1:1",method="POST"} 1
other_metric{method="POST"} 9
`
	got, err := parseRestCounts(text)
	assert.NoError(t, err)
	assert.Equal(t, map[string]float64{"GET": 40, "POST": 3, "POST 409": 1, "PATCH": 5}, got)
	assert.Equal(t, 9.0, writes(got))
	assert.InDelta(t, 9, writes(got), 1e-9)
}
