package console

import (
	"context"
	"encoding/json"
	"time"

	"github.com/redis/go-redis/v9"
)

// History keeps each user's last command lines in the audit Redis, under
// keydeck: (which no action may touch): one list per user, newest first,
// capped and expiring when the user stops using the console.
type History struct {
	client *redis.Client
	Max    int64         // lines kept per user (default 100)
	TTL    time.Duration // since the user's last line (default 30 days)
}

// Entry is one line of a user's history.
type Entry struct {
	Line string `json:"l"`
	// Withheld: the line touched a sensitive key, so only its command
	// name was kept.
	Withheld bool `json:"w,omitempty"`
}

const historyPrefix = "keydeck:console:history:"

// NewHistory keeps histories on client (the audit server's).
func NewHistory(client *redis.Client) *History {
	return &History{client: client, Max: 100, TTL: 30 * 24 * time.Hour}
}

// Add records a line user ran or previewed; withheld keeps only args[0],
// as does a line that may carry a secret (CarriesSecret), whoever asks.
func (h *History) Add(ctx context.Context, user string, args []string, withheld bool) error {
	if len(args) == 0 {
		return nil
	}
	e := Entry{Line: Line(args)}
	if withheld || CarriesSecret(args) {
		e = Entry{Line: Line(args[:1]), Withheld: true}
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	key := historyPrefix + user
	_, err = h.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, key, b)
		p.LTrim(ctx, key, 0, h.Max-1)
		p.Expire(ctx, key, h.TTL)
		return nil
	})
	return err
}

// List is user's history, newest first.
func (h *History) List(ctx context.Context, user string) ([]Entry, error) {
	raw, err := h.client.LRange(ctx, historyPrefix+user, 0, h.Max-1).Result()
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(raw))
	for _, r := range raw {
		var e Entry
		if json.Unmarshal([]byte(r), &e) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}
