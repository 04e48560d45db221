package bulk

// RateGranted is what the connection's bulk budget granted, per identity.
func (e *Engine) RateGranted(conn string) map[string]int64 { return e.rate(conn).Stats().Granted }
