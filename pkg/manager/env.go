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
// after it: upper case, dashes as underscores (--watch-namespace falls back
// to WATCH_NAMESPACE). See BindEnv.
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
// its bound environment variable, if that variable is set. A deprecated
// alias's variable (AddDeprecatedAlias) counts only where its flag's own is
// unset, and its use is warned about on fs's output.
func applyEnv(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	given, err := givenFlags(fs)
	if err != nil {
		return err
	}
	valueOf := func(f *pflag.Flag) (string, string, bool) {
		env, ok := EnvVar(f)
		if !ok {
			return "", "", false
		}
		value, set := lookup(env)
		return env, value, set && (value != "" || acceptsEmpty(f))
	}
	fs.VisitAll(func(f *pflag.Flag) {
		env, value, set := valueOf(f)
		if err != nil || !set || given[primaryOf(f)] {
			return
		}
		if p := aliasOf(f); p != "" {
			newEnv, _, newSet := valueOf(fs.Lookup(p))
			if newSet {
				return
			}
			if newEnv == "" {
				newEnv = "--" + p
			}
			_, _ = fmt.Fprintf(fs.Output(), "Environment variable %s is deprecated, use %s instead\n", env, newEnv)
		}
		// An alias sets its flag's value: the same, without pflag's
		// warning about a deprecated flag on the command line.
		if setErr := fs.Set(primaryOf(f), value); setErr != nil {
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
