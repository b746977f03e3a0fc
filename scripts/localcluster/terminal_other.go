//go:build !linux

package main

// takeTerminal does nothing off Linux: a Ctrl-C reaches make too, which then
// exits 130 after the command stopped the cluster.
func takeTerminal() (restore func()) { return func() {} }
