package main

import (
	"net/http"

	"github.com/causeway/causeway/console"
)

// console is the web console's handler, served at /console/ on the main port; nil (no
// console) with CAUSEWAY_CONSOLE=off.
func (m *Main) console() http.Handler {
	if !m.Config.Console {
		return nil
	}
	return console.Handler()
}
