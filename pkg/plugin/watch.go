package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// clearScreen moves a terminal's cursor home and clears it, so each render
// replaces the one before.
const clearScreen = "\x1b[H\x1b[2J"

func newWatchCommand(o *Options) *cobra.Command {
	var output string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "watch KIND NAME",
		Short: "Show an object as get does, again on every change, until it finishes",
		Long: "watch renders the object as get does and again whenever it changes, until a workflow or\n" +
			"agenttask finishes (Succeeded, Failed, or Timeout for a task), Ctrl-C, or --timeout. It\n" +
			"exits non-zero when the object ends in failure, was deleted or --timeout passed. A\n" +
			"userdeployment never finishes: watch it with --timeout or stop with Ctrl-C.",
		Example: "  kubectl opsnorth watch workflow research-report\n  kubectl opsnorth watch task summarize-1 --timeout 10m",
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, name, err := kindAndName(args)
			if err != nil {
				return err
			}
			if err := validOutput(output); err != nil {
				return err
			}
			c, err := o.connect()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			w := &watcher{o: o, c: c, r: r, name: name, output: output}
			err = w.run(ctx)
			if errors.Is(err, context.DeadlineExceeded) && timeout > 0 {
				return fmt.Errorf("%s %s has not finished after %s", r.name, name, timeout)
			}
			if errors.Is(err, context.Canceled) {
				return nil // Ctrl-C
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml: print the object on every change instead")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: never)")
	return cmd
}

// watcher follows one object and renders each change that shows.
type watcher struct {
	o      *Options
	c      *clients
	r      *resource
	name   string
	output string
	last   []byte
}

// run renders the object until it ended, returning nil for a success, an
// error for a failure, a deletion, or ctx's error once ctx is done.
func (w *watcher) run(ctx context.Context) error {
	obj, err := fetch(ctx, w.c, w.r, w.name)
	if err != nil {
		return err
	}
	rv, done, err := w.emit(ctx, obj)
	if done || err != nil {
		return err
	}
	for {
		rv, done, err = w.follow(ctx, rv)
		if done || err != nil {
			return err
		}
	}
}

// follow watches from resource version rv until the watch closes (it
// returns the last version seen, to resume from) or the object ended.
func (w *watcher) follow(ctx context.Context, rv string) (string, bool, error) {
	events, err := w.r.watch(ctx, w.c, metav1.ListOptions{
		FieldSelector:       fields.OneTermEqualSelector("metadata.name", w.name).String(),
		ResourceVersion:     rv,
		AllowWatchBookmarks: true,
	})
	if err != nil {
		if ctx.Err() != nil {
			return rv, true, ctx.Err()
		}
		return rv, true, fmt.Errorf("watch %s %s: %w", w.r.name, w.name, err)
	}
	defer events.Stop()
	for {
		select {
		case <-ctx.Done():
			return rv, true, ctx.Err()
		case ev, ok := <-events.ResultChan():
			if !ok {
				return rv, false, nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				next, done, err := w.emit(ctx, ev.Object)
				if done || err != nil {
					return next, true, err
				}
				rv = next
			case watch.Bookmark:
				if m, err := meta.Accessor(ev.Object); err == nil {
					rv = m.GetResourceVersion()
				}
			case watch.Deleted:
				return rv, true, fmt.Errorf("%s %s was deleted", w.r.name, w.name)
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
					return rv, true, fmt.Errorf("watch %s %s: %w", w.r.name, w.name, err)
				}
				// Too old to resume from: read the object afresh.
				obj, err := fetch(ctx, w.c, w.r, w.name)
				if err != nil {
					return rv, true, err
				}
				return w.emit(ctx, obj)
			}
		}
	}
}

// emit renders obj when it shows differently from the last render and
// reports whether it ended.
func (w *watcher) emit(ctx context.Context, obj runtime.Object) (string, bool, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", true, err
	}
	var b bytes.Buffer
	if err := w.o.show(ctx, &b, w.c, w.r, obj, w.output); err != nil {
		return "", true, err
	}
	if !bytes.Equal(b.Bytes(), w.last) {
		if err := w.write(b.Bytes()); err != nil {
			return "", true, err
		}
	}
	ended, phase := w.r.ended(obj)
	if !ended {
		return m.GetResourceVersion(), false, nil
	}
	if phase == "Succeeded" {
		return m.GetResourceVersion(), true, nil
	}
	return m.GetResourceVersion(), true, fmt.Errorf("%s %s ended %s", w.r.name, w.name, phase)
}

// write replaces the last render on a terminal and follows it after a
// blank line otherwise.
func (w *watcher) write(render []byte) error {
	prefix := ""
	switch {
	case w.output == "" && w.o.style().fancy:
		prefix = clearScreen
	case w.last != nil && w.output == "":
		prefix = "\n"
	}
	w.last = render
	if _, err := io.WriteString(w.o.Out, prefix); err != nil {
		return err
	}
	_, err := w.o.Out.Write(render)
	return err
}
