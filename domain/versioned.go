package domain

import "fmt"

// Versioned is what prompts and their partials share: numbered versions, the one served by
// default, and labels that point at versions and move.
type Versioned[V interface {
	versionID() string
	versionNumber() int
}] struct {
	Versions []V `json:"versions"`
	// DefaultVersion is the number of the version served when none is named.
	DefaultVersion int `json:"default_version"`
	// Labels maps a label's id to the number of the version it points at.
	Labels map[string]int `json:"labels,omitempty"`
}

func (v PromptVersion) versionID() string   { return v.ID }
func (v PromptVersion) versionNumber() int  { return v.Number }
func (v PartialVersion) versionID() string  { return v.ID }
func (v PartialVersion) versionNumber() int { return v.Number }

// Latest is the newest version.
func (s *Versioned[V]) Latest() V {
	var zero V
	if len(s.Versions) == 0 {
		return zero
	}
	return s.Versions[len(s.Versions)-1]
}

// Version is the version numbered n.
func (s *Versioned[V]) Version(n int) (V, bool) {
	var zero V
	if n < 1 || n > len(s.Versions) {
		return zero, false
	}
	return s.Versions[n-1], true
}

// VersionByID is the version whose id is id.
func (s *Versioned[V]) VersionByID(id string) (V, bool) {
	for _, v := range s.Versions {
		if v.versionID() == id {
			return v, true
		}
	}
	var zero V
	return zero, false
}

// Default is the version served (or included) when none is named.
func (s *Versioned[V]) Default() V {
	v, ok := s.Version(s.DefaultVersion)
	if !ok {
		return s.Latest()
	}
	return v
}

// LabelOf is the id of the label on version n, or "".
func (s *Versioned[V]) LabelOf(n int) string {
	for id, v := range s.Labels {
		if v == n {
			return id
		}
	}
	return ""
}

// Labelled is the version labelID points at.
func (s *Versioned[V]) Labelled(labelID string) (V, bool) {
	n, ok := s.Labels[labelID]
	if !ok {
		var zero V
		return zero, false
	}
	return s.Version(n)
}

// Select is the version sel names, labelID being the id of sel's label (for a label
// selector); false when there is none.
func (s *Versioned[V]) Select(sel VersionSelector, labelID string) (V, bool) {
	switch sel.Kind {
	case SelectLatest:
		return s.Latest(), len(s.Versions) > 0
	case SelectNumber:
		return s.Version(sel.Number)
	case SelectLabel:
		return s.Labelled(labelID)
	}
	return s.Default(), len(s.Versions) > 0
}

// defaultTo decides making version n the default of what (its name and id, for the error):
// false when it already is; an unknown version is not found.
func (s *Versioned[V]) defaultTo(what string, n int) (bool, error) {
	if _, ok := s.Version(n); !ok {
		return false, &Error{Code: CodeNotFound, Param: "version", Message: fmt.Sprintf("%s has no version %d (it has 1 to %d)", what, n, len(s.Versions))}
	}
	return s.DefaultVersion != n, nil
}

// labelTo decides pointing labelID at the version versionID of what ("" takes the version's
// label away): the version's number, and false when the label already points there.
func (s *Versioned[V]) labelTo(what, versionID, labelID string) (int, bool, error) {
	v, ok := s.VersionByID(versionID)
	if !ok {
		return 0, false, &Error{Code: CodeNotFound, Param: "versionId", Message: what + " has no version " + versionID}
	}
	n := v.versionNumber()
	if s.LabelOf(n) == labelID && (labelID == "" || s.Labels[labelID] == n) {
		return n, false, nil
	}
	return n, true, nil
}
