package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/google/uuid"
)

// instance is this process's claim on its data directory: an exclusive lock on
// DATA_DIR/instance.lock, held until Close, and the instance id kept in DATA_DIR/instance-id,
// which it holds its budget leases under in a shared database and keeps across restarts (a
// restart gives back at once what the previous run held). Two processes on one data
// directory would share its spool, journal and exports, so the second refuses to start.
type instance struct {
	ID   string
	lock *os.File
}

func claimDataDir(dir string) (*instance, error) {
	path := filepath.Join(dir, "instance.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		owner, _ := os.ReadFile(path)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data directory %s is in use by another Causeway process (pid %s); "+
				"give each instance a CAUSEWAY_DATA_DIR of its own", dir, strings.TrimSpace(string(owner)))
		}
		return nil, fmt.Errorf("data directory %s: lock: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	id, err := instanceID(filepath.Join(dir, "instance-id"))
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &instance{ID: id, lock: f}, nil
}

// instanceID reads the id at path, writing a new one when there is none.
func instanceID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("instance id: %w", err)
	}
	host, _ := os.Hostname()
	id := strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, host), "-")
	if id == "" {
		id = "causeway"
	}
	id += "-" + uuid.NewString()[:8]
	if err := os.WriteFile(path, []byte(id+"\n"), 0o640); err != nil {
		return "", fmt.Errorf("instance id: %w", err)
	}
	return id, nil
}

// Close releases the data directory.
func (i *instance) Close() error { return i.lock.Close() }
