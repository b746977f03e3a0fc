package manager

import "context"

// Phase is one item of a reconcile's ordered checklist over its scope S, in
// the manner of cluster-api's Machine reconciler: every manager's Reconcile
// fetches its object, builds a scope, runs its phases with RunPhases, then
// writes the status the phases computed once, if it changed, and requeues
// as the scope says. A phase returns done to end the checklist early (what
// follows needs what it could not do), or an error to end it and have the
// reconcile retried.
type Phase[S any] func(ctx context.Context, s S) (done bool, err error)

// RunPhases runs phases in order until one is done or fails, and returns
// that phase's error.
func RunPhases[S any](ctx context.Context, s S, phases ...Phase[S]) error {
	for _, p := range phases {
		done, err := p(ctx, s)
		if err != nil || done {
			return err
		}
	}
	return nil
}
