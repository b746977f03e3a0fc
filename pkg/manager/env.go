package manager

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// envAnnotation is the pflag annotation key holding a flag's environment variable.
const envAnnotation = "opsnorth.io/env"

// BindEnv makes the flag flagName fall back to the environment variable env
// when the flag is not given on the command line, and appends the variable
// name to the flag's usage text. A variable set to the empty string is
// applied only to string, namespace-list and label-list flags, where empty is a
// meaningful value; for other flags it counts as unset.
//
// BindEnv panics if flagName is not defined in fs: that is a programming error.
func BindEnv(fs *pflag.FlagSet, flagName, env string) {
	f := fs.Lookup(flagName)
	if f == nil {
		panic(fmt.Sprintf("manager.BindEnv: flag --%s is not defined", flagName))
	}
	if err := fs.SetAnnotation(flagName, envAnnotation, []string{env}); err != nil {
		panic(fmt.Sprintf("manager.BindEnv: %v", err))
	}
	f.Usage = fmt.Sprintf("%s (env %s)", f.Usage, env)
}

// BindEnvs binds each flag of flagNames to the environment variable named
// after it: upper case, dashes as underscores (--task-namespace falls back
// to TASK_NAMESPACE). See BindEnv.
func BindEnvs(fs *pflag.FlagSet, flagNames ...string) {
	for _, name := range flagNames {
		BindEnv(fs, name, strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
	}
}

// EnvVar returns the environment variable bound to the flag, if any.
func EnvVar(f *pflag.Flag) (string, bool) {
	names := f.Annotations[envAnnotation]
	if len(names) == 0 {
		return "", false
	}
	return names[0], true
}

// applyEnv sets every flag of fs that was not given on the command line from
// its bound environment variable, if that variable is set.
func applyEnv(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		env, ok := EnvVar(f)
		if err != nil || !ok || f.Changed {
			return
		}
		value, set := lookup(env)
		if !set || (value == "" && !acceptsEmpty(f)) {
			return
		}
		if setErr := fs.Set(f.Name, value); setErr != nil {
			err = fmt.Errorf("invalid value %q for %s (--%s): %w", value, env, f.Name, setErr)
		}
	})
	return err
}

func acceptsEmpty(f *pflag.Flag) bool {
	switch f.Value.Type() {
	case "string", namespacesType, labelsType:
		return true
	}
	return false
}

func applyEnvFromOS(fs *pflag.FlagSet) error {
	return applyEnv(fs, os.LookupEnv)
}
