package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keydeck/keydeck/internal/benchkit"
)

// meter measures what each phase cost Redis and the application.
type meter struct {
	ctx     context.Context
	db      *redis.Client
	addr    string
	getRate float64
	idleCPU float64 // % of a core with only the application's GETs
}

func (m *meter) load() *benchkit.GetLoad {
	return benchkit.StartGetLoad(m.addr, 0, 4, m.getRate, func(i int) string { return "app:" + strconv.Itoa(i%100_000) })
}

// idle measures the application alone: the baseline of CPU and latency.
func (m *meter) idle(d time.Duration) error {
	g := m.load()
	cpu, err := benchkit.CPUOver(m.ctx, m.db, d)
	lat := g.Stop()
	if err != nil {
		return err
	}
	m.idleCPU = cpu
	fmt.Printf("idle (the application's %.0f GET/s alone, %s): Redis CPU %.1f%% of a core; %s\n", m.getRate, d, cpu, lat)
	return nil
}

// phase runs f under the application's traffic and reports its costs.
func (m *meter) phase(name string, f func() error) error {
	if err := m.db.SlowLogReset(m.ctx).Err(); err != nil {
		return err
	}
	before, err := benchkit.CPUSeconds(m.ctx, m.db)
	if err != nil {
		return err
	}
	g := m.load()
	t := time.Now()
	err = f()
	took := time.Since(t)
	lat := g.Stop()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	after, err := benchkit.CPUSeconds(m.ctx, m.db)
	if err != nil {
		return err
	}
	cpu := (after - before) / took.Seconds() * 100
	slow, err := benchkit.Slowest(m.ctx, m.db)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s; Redis CPU %.1f%% of a core (%.1f%% above idle); application %s; slowest command over 1 ms: %s\n",
		name, took.Round(time.Millisecond), cpu, cpu-m.idleCPU, lat, slow)
	return nil
}

// field is one field of an INFO reply.
func field(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return "?"
}
