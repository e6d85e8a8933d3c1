package ledger

// SetCrossQueue shrinks l's crossing queue to n, so that a test can fill it. Call it before
// anything is settled.
func SetCrossQueue(l *Ledger, n int) { l.ready = make(chan crossing, n) }
