package demo

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// The host accepts the demo's connections itself and hands each to
// miniredis: miniredis's peers know neither their socket nor their
// address, and CLIENT LIST shows both, CLIENT KILL closes the socket and the
// slow log names the client's address. Each accepted connection first says,
// to the host's hook, which connection it is: a command named by a secret
// of the host, sent before the client's own bytes, that only the hook sees
// and answers with nothing.

// runHost starts a demo server on a random loopback port.
func runHost(now time.Time) (*host, error) {
	m := miniredis.NewMiniRedis()
	// Dial starts the server without a listener of its own (the host is
	// its listener); the connection it opens is not needed.
	c, err := m.Dial()
	if err != nil {
		return nil, fmt.Errorf("start demo redis: %w", err)
	}
	_ = c.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("start demo redis: %w", err)
	}
	h := newHost(m, now)
	h.connsBase = int64(h.srv.TotalConnections()) // Dial's: not a client's
	h.ln = ln
	h.accepting.Go(h.accept)
	return h, nil
}

// addr is the host:port clients dial.
func (h *host) addr() string { return h.ln.Addr().String() }

// port is the port clients dial.
func (h *host) port() int { return h.ln.Addr().(*net.TCPAddr).Port }

// close stops accepting, then closes every connection and the server.
func (h *host) close() {
	h.closeOnce.Do(func() {
		_ = h.ln.Close()
		h.accepting.Wait()
		h.m.Close()
	})
}

func (h *host) accept() {
	for {
		conn, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		h.nextID++
		id := h.nextID
		pc := &prefacedConn{Conn: conn, preface: h.greeting(id), in: &h.netIn, out: &h.netOut}
		h.conns[id] = &clientConn{id: id, conn: conn, pc: pc, fd: socketFD(conn), created: time.Now()}
		h.mu.Unlock()
		h.srv.ServeConn(pc)
	}
}

// greeting is the command a connection sends first: the host's secret and
// the connection's id.
func (h *host) greeting(id int64) []byte {
	n := strconv.FormatInt(id, 10)
	return []byte(fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(h.secret), h.secret, len(n), n))
}

func newSecret() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "KEYDECK-DEMO-" + strings.ToUpper(hex.EncodeToString(b))
}

// prefacedConn reads preface before what the client sends, and keeps the
// head of the reply to the command being served (an error reply is counted
// in INFO errorstats as Redis counts it).
type prefacedConn struct {
	net.Conn
	mu       sync.Mutex
	preface  []byte
	watching bool
	head     []byte
	in, out  *atomic.Int64 // INFO's total_net_input_bytes, total_net_output_bytes
	names    nameScanner
}

// sentName is the name of the command being served as the client sent it,
// or upper, miniredis's, where the scanner lost track.
func (p *prefacedConn) sentName(upper string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.names.pop(); strings.EqualFold(n, upper) {
		return n
	}
	p.names.names = nil // out of step: start again with the next command
	return upper
}

// replyHead is how much of a reply the host keeps: enough for an error's
// code.
const replyHead = 64

func (p *prefacedConn) Write(b []byte) (int, error) {
	p.mu.Lock()
	if p.watching && len(p.head) < replyHead {
		p.head = append(p.head, b[:min(len(b), replyHead-len(p.head))]...)
	}
	p.mu.Unlock()
	n, err := p.Conn.Write(b)
	p.out.Add(int64(n))
	return n, err
}

// watch starts keeping the head of what is written.
func (p *prefacedConn) watch() {
	p.mu.Lock()
	p.watching, p.head = true, p.head[:0]
	p.mu.Unlock()
}

// peek is the head written since watch.
func (p *prefacedConn) peek() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.head)
}

// written is the head written since watch, which it stops.
func (p *prefacedConn) written() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watching = false
	return string(p.head)
}

func (p *prefacedConn) Read(b []byte) (int, error) {
	p.mu.Lock()
	if len(p.preface) > 0 {
		n := copy(b, p.preface)
		p.preface = p.preface[n:]
		p.mu.Unlock()
		return n, nil
	}
	p.mu.Unlock()
	n, err := p.Conn.Read(b)
	p.in.Add(int64(n))
	p.mu.Lock()
	p.names.feed(b[:n])
	p.mu.Unlock()
	return n, err
}

// socketFD is the connection's file descriptor, as CLIENT LIST shows it.
func socketFD(c net.Conn) int {
	fd := -1
	if tc, ok := c.(*net.TCPConn); ok {
		if raw, err := tc.SyscallConn(); err == nil {
			_ = raw.Control(func(f uintptr) { fd = int(f) })
		}
	}
	return fd
}

// clientConn is what the host knows of one accepted connection.
type clientConn struct {
	id      int64
	conn    net.Conn
	pc      *prefacedConn
	fd      int
	created time.Time
	peer    *server.Peer // once the greeting arrived
}

// greeted binds a connection's peer to its connection when the greeting
// arrives; it reports whether cmd was the greeting.
func (h *host) greeted(c *server.Peer, cmd string, args []string) bool {
	if cmd != h.secret || len(args) != 1 {
		return false
	}
	id, _ := strconv.ParseInt(args[0], 10, 64)
	h.mu.Lock()
	defer h.mu.Unlock()
	cc, ok := h.conns[id]
	if !ok || cc.peer != nil {
		return true
	}
	cc.peer = c
	st := &peerState{conn: cc, lastAt: cc.created}
	h.peers[c] = st
	c.OnDisconnect(func() {
		h.mu.Lock()
		delete(h.peers, c)
		delete(h.conns, id)
		h.mu.Unlock()
	})
	return true
}

// pubsubCounts are INFO's pubsub_channels and pubsub_patterns: the
// channels and patterns some client is subscribed to.
func (h *host) pubsubCounts() (channels, patterns int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, pat := map[string]bool{}, map[string]bool{}
	for _, st := range h.peers {
		for c := range st.subs {
			ch[c] = true
		}
		for p := range st.psubs {
			pat[p] = true
		}
	}
	return len(ch), len(pat)
}
