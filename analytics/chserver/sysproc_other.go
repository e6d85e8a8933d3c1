//go:build unix && !linux

package chserver

import "syscall"

// sysProcAttr runs the server in a process group of its own, so that the terminal's Ctrl-C
// reaches only the test, which stops the server in its cleanup.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}
