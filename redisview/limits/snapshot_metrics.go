package limits

// Snapshots copies what every running sweep knows, by connection name
// (lingering sweeps included): the rows they hold in memory. It sends no
// Redis command.
func (p *Pool) Snapshots() map[string]Snapshot {
	out := map[string]Snapshot{}
	p.pool.Each(func(conn string, s *Sweeper) { out[conn] = s.Snapshot() })
	return out
}
