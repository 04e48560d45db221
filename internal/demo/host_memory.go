package demo

import (
	"strings"

	"github.com/alicebob/miniredis/v2/server"
)

// memoryCmd answers MEMORY STATS and MEMORY DOCTOR with Redis's field names
// and words, from the same figures as INFO memory: the demo's memory is its
// data (see measureMemory), so the fields of what it does not have
// (allocator, RSS, replication, AOF) are left out or zero where the demo
// truly has none.
func (h *host) memoryCmd(c *server.Peer, args []string) {
	if strings.EqualFold(args[0], "DOCTOR") {
		writeVerbatim(c, h.memoryReport())
		return
	}
	keys := h.keyCount()
	total := h.usedMem
	perKey := int64(0)
	if keys > 0 {
		perKey = total / keys
	}
	pct := func(part, whole int64) float64 {
		if whole <= 0 {
			return 0
		}
		return float64(part) * 100 / float64(whole)
	}
	ints := []struct {
		name string
		v    int64
	}{
		{"peak.allocated", h.peakMem}, {"total.allocated", total}, {"startup.allocated", 0},
		{"replication.backlog", 0}, {"clients.slaves", 0}, {"aof.buffer", 0},
		{"overhead.total", 0}, {"keys.count", keys}, {"keys.bytes-per-key", perKey},
		{"dataset.bytes", total},
	}
	c.Block(func(w *server.Writer) {
		w.WriteMapLen(len(ints) + 2)
		for _, f := range ints {
			w.WriteBulk(f.name)
			w.WriteInt(int(f.v))
		}
		w.WriteBulk("dataset.percentage")
		w.WriteFloat(pct(total, total))
		w.WriteBulk("peak.percentage")
		w.WriteFloat(pct(total, h.peakMem))
	})
}

// memoryReport is MEMORY DOCTOR's report in Redis's words, for the issues
// the demo can have (Redis's others are about its allocator and
// replication, which the demo has not).
func (h *host) memoryReport() string {
	if h.usedMem < 5*1024*1024 {
		return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. " +
			"Please, leave for your mission on Earth and fill it with some data. " +
			"The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
	}
	if float64(h.peakMem)/float64(h.usedMem) <= 1.5 {
		return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
	}
	return "Sam, I detected a few issues in this Redis instance memory implants:\n\n" +
		" * Peak memory: In the past this instance used more than 150% the memory that is currently using. " +
		"The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, " +
		"however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) " +
		"is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. " +
		"If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, " +
		"otherwise the only other option is to shutdown and restart the instance.\n\n" +
		"I'm here to keep you safe, Sam. I want to help you.\n"
}
