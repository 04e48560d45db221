package handlers

import (
	"errors"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
)

// Each distinct live topic is a poller reading Redis every interval, and
// the console runs at most maxLiveTopics of them. Without a share per
// viewer, one user (31 connections × 16 audit filters) took every poller
// and everyone else was refused. These caps keep one user, or one client
// address (several accounts, one attacker), to a fraction of the whole.
const (
	maxConnsPerUser  = 32 // tabs; each page opens one websocket
	maxTopicsPerUser = 64 // distinct topics over all of the user's websockets
	// An address may be a whole office behind NAT, so it gets more than a
	// user, yet well short of maxLiveTopics.
	maxConnsPerAddr  = 256
	maxTopicsPerAddr = 192
	// A channel watch holds a subscription on the server, not only a
	// poller: a user keeps a few (distinct channels or patterns), an
	// address a few users' worth.
	maxWatchesPerUser = 3
	maxWatchesPerAddr = 24
)

var (
	errLiveShare  = errors.New("too many live views")
	errWatchShare = errors.New("too many channel watches")
)

// liveShares counts, per user and per client address, the open websockets
// and the distinct topics they hold.
type liveShares struct {
	user, addr shareCaps // tests lower them

	mu sync.Mutex
	m  map[string]*liveShare
}

type shareCaps struct{ conns, topics, watches int }

func newLiveShares() *liveShares {
	return &liveShares{
		user: shareCaps{conns: maxConnsPerUser, topics: maxTopicsPerUser, watches: maxWatchesPerUser},
		addr: shareCaps{conns: maxConnsPerAddr, topics: maxTopicsPerAddr, watches: maxWatchesPerAddr},
	}
}

// limits are the holders a websocket request counts against. Open mode
// (no sign-in, loopback only) has none: everyone there is the same admin
// at the same address, with nobody to be fair between, and the global
// maxLiveTopics still bounds the pollers.
func (s *liveShares) limits(a *App, c echo.Context) []shareLimit {
	id := identity(c)
	if id.Via == "open" {
		return nil
	}
	return []shareLimit{
		{holder: id.Holder(), shareCaps: s.user},
		{holder: "addr:" + a.clientAddr(c), shareCaps: s.addr},
	}
}

type liveShare struct {
	conns  int
	topics map[string]int // topic → websockets of this holder watching it
}

// watches counts the channel watches among the topics held.
func (sh *liveShare) watches() int {
	n := 0
	for t := range sh.topics {
		n += isWatch(t)
	}
	return n
}

func isWatch(topic string) int {
	if strings.HasPrefix(topic, pubsubWatchKind+":") {
		return 1
	}
	return 0
}

type shareLimit struct {
	holder string // "user:NAME", "proxy:NAME" (unmatched) or "addr:IP"
	shareCaps
}

// take admits one websocket watching topics for every holder, or none: it
// returns errLiveShare (and takes nothing) if any holder would go over its
// limits. Topics a holder already watches cost it nothing more.
func (s *liveShares) take(limits []shareLimit, topics []string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*liveShare{}
	}
	for _, l := range limits {
		sh := s.m[l.holder]
		if sh == nil {
			sh = &liveShare{topics: map[string]int{}}
		}
		fresh, freshWatches := 0, 0
		for _, t := range topics {
			if sh.topics[t] == 0 {
				fresh++
				freshWatches += isWatch(t)
			}
		}
		if sh.conns+1 > l.conns || len(sh.topics)+fresh > l.topics {
			return nil, errLiveShare
		}
		if freshWatches > 0 && sh.watches()+freshWatches > l.watches {
			return nil, errWatchShare
		}
	}
	for _, l := range limits {
		sh := s.m[l.holder]
		if sh == nil {
			sh = &liveShare{topics: map[string]int{}}
			s.m[l.holder] = sh
		}
		sh.conns++
		for _, t := range topics {
			sh.topics[t]++
		}
	}
	var once sync.Once
	return func() { once.Do(func() { s.give(limits, topics) }) }, nil
}

func (s *liveShares) give(limits []shareLimit, topics []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range limits {
		sh := s.m[l.holder]
		if sh == nil {
			continue
		}
		sh.conns--
		for _, t := range topics {
			if sh.topics[t]--; sh.topics[t] <= 0 {
				delete(sh.topics, t)
			}
		}
		if sh.conns <= 0 {
			delete(s.m, l.holder)
		}
	}
}
