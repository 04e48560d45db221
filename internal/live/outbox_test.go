package live

import (
	"reflect"
	"testing"
)

func TestOutboxCoalesces(t *testing.T) {
	type put struct{ topic, payload string }
	tests := []struct {
		name      string
		puts      []put
		want      []Message
		coalesced int64
	}{
		{"empty", nil, nil, 0},
		{"one", []put{{"a", "1"}}, []Message{{"a", []byte("1")}}, 0},
		{"newest wins", []put{{"a", "1"}, {"a", "2"}, {"a", "3"}}, []Message{{"a", []byte("3")}}, 2},
		{
			"order of first pending",
			[]put{{"b", "1"}, {"a", "1"}, {"b", "2"}, {"c", "1"}},
			[]Message{{"b", []byte("2")}, {"a", []byte("1")}, {"c", []byte("1")}},
			1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOutbox()
			for _, p := range tt.puts {
				o.Put(p.topic, []byte(p.payload))
			}
			if n := o.Len(); n != len(tt.want) {
				t.Errorf("Len = %d, want %d", n, len(tt.want))
			}
			if got := o.Take(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Take = %q, want %q", got, tt.want)
			}
			if got := o.Take(); got != nil {
				t.Errorf("second Take = %q, want nothing", got)
			}
			if got := o.Coalesced(); got != tt.coalesced {
				t.Errorf("Coalesced = %d, want %d", got, tt.coalesced)
			}
		})
	}
}

func TestOutboxReadySignal(t *testing.T) {
	o := NewOutbox()
	select {
	case <-o.Ready():
		t.Fatal("Ready before any Put")
	default:
	}
	for range 10 {
		o.Put("a", []byte("x")) // must not block although nobody reads Ready
	}
	select {
	case <-o.Ready():
	default:
		t.Fatal("no Ready after Put")
	}
	select {
	case <-o.Ready():
		t.Fatal("Ready signals should coalesce into one")
	default:
	}
	// A Take between Puts must not lose the signal for the later Put.
	o.Take()
	o.Put("a", []byte("y"))
	select {
	case <-o.Ready():
	default:
		t.Fatal("no Ready after Put following Take")
	}
}
