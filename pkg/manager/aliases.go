package manager

import (
	"fmt"

	"github.com/spf13/pflag"
)

// WatchNamespaceFlag is the flag of the namespaces a manager watches, one
// name for every manager (env WATCH_NAMESPACE).
const WatchNamespaceFlag = "watch-namespace"

// aliasAnnotation marks a deprecated alias with the name of its flag.
const aliasAnnotation = "opsnorth.io/alias-of"

// AddWatchNamespaceFlag registers --watch-namespace (env WATCH_NAMESPACE)
// into ns, empty by default (all namespaces), and each of deprecated as an
// alias of it (AddDeprecatedAlias): the names the manager had before.
func AddWatchNamespaceFlag(fs *pflag.FlagSet, ns *Namespaces, usage string, deprecated ...string) {
	*ns = nil
	fs.Var(ns, WatchNamespaceFlag, usage)
	BindEnvs(fs, WatchNamespaceFlag)
	for _, old := range deprecated {
		AddDeprecatedAlias(fs, WatchNamespaceFlag, old)
	}
}

// AddDeprecatedAlias registers old as a deprecated alias of the flag name:
// it sets the same value, is hidden from --help and warned about when used,
// and falls back to its own environment variable (old in upper case) only
// where neither flag is given and name's variable is unset. Giving both
// flags is an error. It panics if name is not defined in fs.
func AddDeprecatedAlias(fs *pflag.FlagSet, name, old string) {
	f := fs.Lookup(name)
	if f == nil {
		panic(fmt.Sprintf("manager.AddDeprecatedAlias: flag --%s is not defined", name))
	}
	fs.Var(f.Value, old, "Deprecated: use --"+name+".")
	for _, err := range []error{
		fs.MarkDeprecated(old, "use --"+name+" instead"),
		fs.SetAnnotation(old, aliasAnnotation, []string{name}),
	} {
		if err != nil {
			panic(fmt.Sprintf("manager.AddDeprecatedAlias: %v", err))
		}
	}
	BindEnvs(fs, old)
}

// aliasOf returns the flag that f is a deprecated alias of, or "".
func aliasOf(f *pflag.Flag) string {
	if names := f.Annotations[aliasAnnotation]; len(names) > 0 {
		return names[0]
	}
	return ""
}

// primaryOf returns the name of the flag f stands for: its own or, for an
// alias, its flag's.
func primaryOf(f *pflag.Flag) string {
	if p := aliasOf(f); p != "" {
		return p
	}
	return f.Name
}

// givenFlags returns the flags given on the command line by primaryOf,
// refusing a flag given together with its alias.
func givenFlags(fs *pflag.FlagSet) (map[string]bool, error) {
	given := map[string]bool{}
	var err error
	fs.Visit(func(f *pflag.Flag) {
		if p := primaryOf(f); given[p] && err == nil {
			err = fmt.Errorf("--%s is a deprecated alias of --%s: give only --%s", firstAlias(fs, p), p, p)
		} else {
			given[p] = true
		}
	})
	return given, err
}

// firstAlias names a deprecated alias of the flag name that was given.
func firstAlias(fs *pflag.FlagSet, name string) string {
	alias := ""
	fs.Visit(func(f *pflag.Flag) {
		if alias == "" && aliasOf(f) == name {
			alias = f.Name
		}
	})
	return alias
}
