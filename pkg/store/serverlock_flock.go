//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// lockServer takes the data directory's server lock, held until the
// returned file is closed or the process ends, however it ends.
func lockServer(dir string) (io.Closer, error) {
	path := filepath.Join(dir, "serve.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: server lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("store: another parley serve is using the SQLite database in %s; "+
				"SQLite serves one server process (set PARLEY_DATABASE_URL to a PostgreSQL database to run several)", dir)
		}
		return nil, fmt.Errorf("store: server lock %s: %w", path, err)
	}
	return f, nil
}
