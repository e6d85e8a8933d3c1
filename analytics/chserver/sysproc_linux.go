package chserver

import "syscall"

// sysProcAttr runs the server in a process group of its own, so that the terminal's Ctrl-C
// reaches only the test, which stops the server in its cleanup; and kills the server should
// the test binary die without cleaning up.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
