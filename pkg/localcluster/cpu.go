package localcluster

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CPUSeconds reads the user+system CPU time of process pid from
// /proc/<pid>/stat.
func CPUSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseCPUSeconds(string(data), clockTicks)
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// parseCPUSeconds returns utime+stime of a /proc/<pid>/stat line in seconds.
// The command name (field 2) may hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseCPUSeconds(stat string, ticks float64) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat %q", stat)
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state): utime is field 14, stime field 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("short stat %q", stat)
	}
	var sum float64
	for _, f := range fields[11:13] {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return 0, fmt.Errorf("stat field %q: %w", f, err)
		}
		sum += v
	}
	return sum / ticks, nil
}
