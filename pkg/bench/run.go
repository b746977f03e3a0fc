package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Scenarios the harness knows, in the order it runs them.
var Scenarios = []string{"throughput", "hop", "writes", "deployments", "memory", "economy"}

// Config is one benchmark run.
type Config struct {
	Tasks int `json:"tasks"`
	// HopWorkflows are the sizes of the hop scenario (workflows of
	// StepsPerWorkflow steps per burst), each run Repeats times.
	HopWorkflows []int `json:"hopWorkflows"`
	// WriteWorkflows is the size of the writes scenario (one-step workflows).
	WriteWorkflows int `json:"writeWorkflows"`
	Deployments    int `json:"deployments"`
	Repeats        int `json:"repeats"`
	Workers        int `json:"workers"`
	MemoryTasks    int `json:"memoryTasks"`
	// MemoryDeployments are extra UserDeployments created (to Ready) before memory is read.
	MemoryDeployments int `json:"memoryDeployments"`
	// Floor adds the floor burst (FloorThroughput) to every throughput repetition.
	Floor       bool          `json:"floor"`
	Scenarios   []string      `json:"scenarios"`
	PodDelay    time.Duration `json:"podDelay"`
	Settle      time.Duration `json:"settle"`
	Timeout     time.Duration `json:"timeout"`
	ManagerArgs []string      `json:"managerArgs"`
	// Profile, when set, captures CPU profiles of kube-apiserver and every
	// manager, this long from the start of every throughput burst and hop
	// run, into ProfileDir.
	Profile    time.Duration `json:"profile,omitempty"`
	ProfileDir string        `json:"profileDir,omitempty"`
}

// Pair is one repetition of the throughput scenario: managed and baseline.
type Pair struct {
	Rep           int        `json:"rep"`
	BaselineFirst bool       `json:"baselineFirst"`
	Managed       Throughput `json:"managed"`
	Baseline      Throughput `json:"baseline"`
	WallRatio     float64    `json:"wallRatio"`
	// TaskWrites are the tasks manager's mutating requests during the managed burst, by method.
	TaskWrites       map[string]float64 `json:"taskWrites"`
	TaskWritesPerObj float64            `json:"taskWritesPerTask"`
	// Floor is the same burst with the harness as the least controller
	// (FloorThroughput), run between the other two; FloorRatio is its wall
	// over the baseline's, ManagedToFloor the managed wall over its.
	Floor          *Throughput `json:"floor,omitempty"`
	FloorRatio     float64     `json:"floorRatio,omitempty"`
	ManagedToFloor float64     `json:"managedToFloor,omitempty"`
}

// Report is everything one run measured.
type Report struct {
	Started         time.Time `json:"started"`
	Config          Config    `json:"config"`
	Throughput      []Pair    `json:"throughput,omitempty"`
	WallRatioMedian float64   `json:"wallRatioMedian,omitempty"`
	// FloorRatioMedian is the median floor/baseline wall ratio: the least
	// wall ratio an AgentTask controller can reach on this cluster.
	FloorRatioMedian float64 `json:"floorRatioMedian,omitempty"`
	// ManagedToFloorMedian is the median managed/floor wall ratio: what the
	// tasks manager adds to the least controller (goal ≤ 1.2).
	ManagedToFloorMedian float64 `json:"managedToFloorMedian,omitempty"`
	// PodSpecMatch: a managed task's Job and a baseline Job have the same pod spec, as stored.
	PodSpecMatch *bool `json:"podSpecMatch,omitempty"`
	// Hops are the hop scenario's repetitions at every size, each managed,
	// baseline and floor.
	Hops []HopPair `json:"hops,omitempty"`
	// HopSummaries are the medians over Hops, one per size.
	HopSummaries []HopSummary `json:"hopSummaries,omitempty"`
	// Writes is the writes scenario.
	Writes      *WriteRun    `json:"writes,omitempty"`
	Deployments *Deployments `json:"deployments,omitempty"`
	Memory      []Memory     `json:"memory,omitempty"`
	Restart     []Writes     `json:"restart,omitempty"`
}

// Writes are a manager's API requests over a scenario, by method.
type Writes struct {
	Manager string             `json:"manager"`
	Methods map[string]float64 `json:"methods"`
	Writes  float64            `json:"writes"`
	PerUnit float64            `json:"perUnit,omitempty"`
	Unit    string             `json:"unit,omitempty"`
}

// Run runs cfg's scenarios on e.
func Run(ctx context.Context, e *Env, cfg Config) (*Report, error) {
	rep := &Report{Started: time.Now().UTC(), Config: cfg}
	base := strconv.FormatInt(time.Now().Unix()%100000, 36)
	if slices.Contains(cfg.Scenarios, "throughput") {
		if err := runThroughput(ctx, e, cfg, base, rep); err != nil {
			return rep, err
		}
	}
	if slices.Contains(cfg.Scenarios, "hop") {
		if err := runHops(ctx, e, cfg, base, rep); err != nil {
			return rep, err
		}
	}
	if slices.Contains(cfg.Scenarios, "writes") {
		w, err := WorkflowWrites(ctx, e, base+"x", cfg.WriteWorkflows, cfg.Workers, cfg.Settle, cfg.Timeout)
		if err != nil {
			return rep, fmt.Errorf("writes: %w", err)
		}
		rep.Writes = w
	}
	if slices.Contains(cfg.Scenarios, "deployments") {
		d, err := RunDeployments(ctx, e, base+"d", cfg.Deployments, cfg.Workers, cfg.Timeout)
		if err != nil {
			return rep, fmt.Errorf("deployments: %w", err)
		}
		rep.Deployments = d
	}
	if slices.Contains(cfg.Scenarios, "memory") {
		if cfg.MemoryTasks > 0 {
			if _, err := TaskThroughput(ctx, e, base+"m", cfg.MemoryTasks, cfg.Workers, cfg.Timeout); err != nil {
				return rep, fmt.Errorf("memory load: %w", err)
			}
		}
		if cfg.MemoryDeployments > 0 {
			if _, err := UserDeploymentsToReady(ctx, e, base+"n", cfg.MemoryDeployments, cfg.Workers, cfg.Timeout); err != nil {
				return rep, fmt.Errorf("memory load: %w", err)
			}
		}
		if err := readMemory(e, rep); err != nil {
			return rep, err
		}
	}
	if slices.Contains(cfg.Scenarios, "economy") {
		if err := runRestarts(ctx, e, cfg, rep); err != nil {
			return rep, err
		}
		if slices.Contains(cfg.Scenarios, "memory") {
			return rep, readMemory(e, rep)
		}
	}
	return rep, nil
}

func runThroughput(ctx context.Context, e *Env, cfg Config, base string, rep *Report) error {
	var ratios, floors, overFloor []float64
	prof := profiler{e: e, window: cfg.Profile, dir: cfg.ProfileDir}
	for i := range cfg.Repeats {
		p := Pair{Rep: i, BaselineFirst: i%2 == 0}
		run := fmt.Sprintf("%s%d", base, i)
		baseline := func() (err error) {
			p.Baseline, err = prof.measure(ctx, run+"-baseline", func() (Throughput, error) {
				return JobThroughput(ctx, e, run+"j", cfg.Tasks, cfg.Workers, cfg.Timeout)
			})
			return err
		}
		managed := func() error {
			before, err := RestCounts(ctx, e.Managers["tasks"])
			if err != nil {
				return err
			}
			if p.Managed, err = prof.measure(ctx, run+"-managed", func() (Throughput, error) {
				return TaskThroughput(ctx, e, run+"t", cfg.Tasks, cfg.Workers, cfg.Timeout)
			}); err != nil {
				return err
			}
			after, err := RestCounts(ctx, e.Managers["tasks"])
			p.TaskWrites = diff(after, before)
			p.TaskWritesPerObj = ratio(writes(p.TaskWrites), float64(cfg.Tasks))
			return err
		}
		floor := func() error {
			t, err := prof.measure(ctx, run+"-floor", func() (Throughput, error) {
				return FloorThroughput(ctx, e, run+"f", cfg.Tasks, cfg.Workers, cfg.Timeout)
			})
			p.Floor = &t
			return err
		}
		steps := []func() error{managed, baseline}
		if cfg.Floor {
			steps = []func() error{managed, floor, baseline}
		}
		if p.BaselineFirst {
			slices.Reverse(steps)
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		p.WallRatio = ratio(p.Managed.WallSeconds, p.Baseline.WallSeconds)
		ratios = append(ratios, p.WallRatio)
		if p.Floor != nil {
			p.FloorRatio = ratio(p.Floor.WallSeconds, p.Baseline.WallSeconds)
			p.ManagedToFloor = ratio(p.Managed.WallSeconds, p.Floor.WallSeconds)
			floors, overFloor = append(floors, p.FloorRatio), append(overFloor, p.ManagedToFloor)
		}
		rep.Throughput = append(rep.Throughput, p)
		if i == 0 {
			match, err := samePodSpec(ctx, e, objectNames("bt-"+run+"t", 1)[0], objectNames("bj-"+run+"j", 1)[0])
			if err != nil {
				return err
			}
			rep.PodSpecMatch = &match
		}
	}
	rep.WallRatioMedian = Median(ratios)
	if len(floors) > 0 {
		rep.FloorRatioMedian, rep.ManagedToFloorMedian = Median(floors), Median(overFloor)
	}
	return nil
}

// samePodSpec compares the stored pod templates of a manager-built Job and a baseline Job.
func samePodSpec(ctx context.Context, e *Env, taskJob, baselineJob string) (bool, error) {
	a, err := e.Kube.BatchV1().Jobs(TaskNamespace).Get(ctx, taskJob, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	b, err := e.Kube.BatchV1().Jobs(BaselineNamespace).Get(ctx, baselineJob, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	return equality.Semantic.DeepEqual(a.Spec.Template.Spec, b.Spec.Template.Spec), nil
}

func readMemory(e *Env, rep *Report) error {
	for _, comp := range []string{"deployments", "tasks", "workflows"} {
		m, err := ReadMemory(e.Managers[comp].Process)
		if err != nil {
			return err
		}
		rep.Memory = append(rep.Memory, m)
	}
	return nil
}

// runRestarts restarts every manager over the converged cluster and counts
// the writes each new process sends from its start to the end of the settle
// period (goal 0).
func runRestarts(ctx context.Context, e *Env, cfg Config, rep *Report) error {
	for _, comp := range []string{"deployments", "tasks", "workflows"} {
		m, err := e.Restart(ctx, comp)
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(cfg.Settle):
		}
		counts, err := RestCounts(ctx, m)
		if err != nil {
			return err
		}
		rep.Restart = append(rep.Restart, Writes{Manager: m.Process.Name, Methods: counts, Writes: writes(counts)})
	}
	return e.CheckAlive()
}
