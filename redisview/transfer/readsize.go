package transfer

import (
	"context"
	"fmt"

	"github.com/keydeck/keydeck/views/format"
)

// work is what reading elems elements of bytes bytes costs of the
// budget beyond the key itself: one unit per 100 elements and one per
// 64 KiB, so that an export is paced by what it reads, not by its keys.
func work(elems, bytes int64) int64 { return elems/100 + bytes/(64<<10) }

func boolUnit(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// sizing is a collection's MEMORY USAGE (Redis's estimate, sampled), or
// unknown when the server refused the command (ACL, managed Redis).
type sizing struct {
	mem   int64
	known bool
}

// sizing reads a key's MEMORY USAGE before any of its value: a key over
// the byte cap is skipped without a byte of it read.
func (rd *Reader) sizing(ctx context.Context, key string) (sizing, error) {
	mem, err := rd.C.MemoryUsage(ctx, key).Result()
	if err != nil {
		return sizing{}, nil // refused, or gone: pages stay small, the read tells
	}
	return sizing{mem, true}, rd.overMem(mem)
}

func (rd *Reader) overMem(mem int64) error {
	if lim := rd.limits(); mem > lim.MaxBytes {
		return errTooBig{fmt.Sprintf("skipped: larger than %s (about %s in Redis's memory)", format.Bytes(lim.MaxBytes), format.Bytes(mem))}
	}
	return nil
}

// unknownPage divides the page length when an element's size is not
// known: a page of large elements stays a few of them.
const unknownPage = 10

// pageLen is how many elements of a key of n elements one read takes,
// so that a page holds about Chunk bytes (from the average element
// MEMORY USAGE gives), and what a page costs of the budget.
func (rd *Reader) pageLen(sz sizing, n int64) (page, cost int64) {
	lim := rd.limits()
	page = max(1, lim.Page/unknownPage)
	avg := lim.Chunk / lim.Page
	if sz.known && n > 0 {
		avg = max(1, sz.mem/n)
		page = max(1, min(lim.Page, lim.Chunk/avg))
	}
	return page, work(page, page*avg)
}
