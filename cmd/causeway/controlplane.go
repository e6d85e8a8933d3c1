package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/causeway/causeway/commands"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
	"github.com/causeway/causeway/projections/memory"
)

// readModelCatchUp bounds how long start-up waits for the read model to fold the history.
const readModelCatchUp = 5 * time.Minute

// catchUp folds every stored event into the read model before the server answers, so that
// the first request after a restart authenticates against the full history.
func catchUp(ctx context.Context, store eventstore.Store, read *memory.Model) error {
	ctx, cancel := context.WithTimeout(ctx, readModelCatchUp)
	defer cancel()
	for {
		evs, err := store.ReadAll(ctx, read.Position(), 1000)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if err := read.Apply(ev); err != nil {
				return fmt.Errorf("read model: event %s at position %d: %w", ev.ID, ev.Position, err)
			}
		}
		if len(evs) < 1000 {
			return nil
		}
	}
}

// loadSecret returns the server secret: CAUSEWAY_SECRET_KEY, or DATA_DIR/secret.key, created
// with mode 0600 on the first start.
func loadSecret(cfg Config) ([]byte, error) {
	if cfg.SecretKey != "" {
		return []byte(cfg.SecretKey), nil
	}
	path := filepath.Join(cfg.DataDir, "secret.key")
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		return []byte(strings.TrimSpace(string(b))), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	secret := hex.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return []byte(secret), nil
}

// bootstrap creates the organisation, its owner and an admin key on the first start. A
// generated key is saved to DATA_DIR/bootstrap-admin-key (0600) before its hash is stored, so
// a bootstrap cut short resumes with the same key, and printed once to stderr.
func bootstrap(ctx context.Context, cfg Config, deps commands.Deps, stderr io.Writer) (commands.BootstrapResult, error) {
	h, err := commands.NewBootstrapHandler(deps)
	if err != nil {
		return commands.BootstrapResult{}, err
	}
	plan, err := h.Plan(ctx)
	if err != nil {
		return commands.BootstrapResult{}, err
	}
	if plan.Completed {
		return commands.BootstrapResult{OrganisationID: plan.OrganisationID, OwnerUserID: plan.OwnerUserID, AdminKeyID: plan.AdminKeyID}, nil
	}
	key, generated := cfg.BootstrapAdminKey, false
	path := filepath.Join(cfg.DataDir, "bootstrap-admin-key")
	if key == "" {
		if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) >= 20 {
			key = strings.TrimSpace(string(b))
		} else {
			key, generated = domain.NewSecretKey(), true
			if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
				return commands.BootstrapResult{}, fmt.Errorf("write %s: %w", path, err)
			}
		}
	}
	res, err := h.Handle(ctx, commands.Bootstrap{OrganisationName: cfg.BootstrapOrganisation, OwnerEmail: cfg.BootstrapOwnerEmail, AdminKey: key})
	if err != nil {
		return res, err
	}
	if generated && res.Created {
		fmt.Fprintf(stderr, "\nCauseway created organisation %s and an admin API key with every scope.\n"+
			"It is shown once here and saved in %s (mode 0600):\n\n    %s\n\n", res.OrganisationID, path, key)
	}
	return res, nil
}
