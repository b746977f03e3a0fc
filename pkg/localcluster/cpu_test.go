package localcluster

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCPUSeconds(t *testing.T) {
	// A real /proc/<pid>/stat line, with a command name holding ") ".
	stat := "4242 (kube) (x)) S 1 4242 4242 0 -1 4194560 2105 0 0 0 1234 567 0 0 20 0 12 0 100 0 0\n"
	got, err := parseCPUSeconds(stat, 100)
	require.NoError(t, err)
	assert.InDelta(t, 18.01, got, 1e-9)

	_, err = parseCPUSeconds("4242 (kube S 1", 100)
	assert.Error(t, err)
}

func TestCPUSecondsOfThisProcess(t *testing.T) {
	got, err := CPUSeconds(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, got, 0.0)
	_, err = CPUSeconds(-1)
	assert.Error(t, err)
}
