package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// takeTerminal puts the command in a process group of its own and makes it
// the terminal's foreground group, so a Ctrl-C reaches the command alone and
// not the make that started it: GNU make, when interrupted itself, re-raises
// SIGINT after its recipe ends and exits 130 whatever the recipe returned.
// The command then stops the cluster and exits 0, and so does make. The
// returned function hands the terminal back. Without a terminal on stdin, or
// as a session leader, it does nothing.
func takeTerminal() (restore func()) {
	fd := int(os.Stdin.Fd())
	prev, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || prev != syscall.Getpgrp() {
		return func() {} // no terminal, or not in its foreground group
	}
	if err := syscall.Setpgid(0, 0); err != nil {
		return func() {}
	}
	// A group that is not the terminal's foreground one is stopped by
	// SIGTTOU when it sets the foreground group: ignore it while it does.
	signal.Ignore(syscall.SIGTTOU)
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, syscall.Getpgrp()); err != nil {
		return func() {}
	}
	return func() { _ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, prev) }
}
