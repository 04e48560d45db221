package handlers

import (
	"strconv"
	"strings"

	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

const sparkW, sparkH = 120.0, 32.0

// sparks builds the ops/sec and memory sparklines from the history.
func sparks(h []stats.Sample) []views.Spark {
	var ops, mem []float64
	for _, s := range h {
		if s.HasOps {
			ops = append(ops, s.OpsPerSec)
		}
		if s.HasMemory {
			mem = append(mem, float64(s.UsedMemory))
		}
	}
	opsS := views.Spark{Label: "Ops/sec, last 5 min", TestID: "spark-ops", Points: sparkPoints(ops), Empty: "collecting samples…"}
	if len(ops) > 0 {
		opsS.Last = format.Rate(ops[len(ops)-1])
	} else {
		opsS.Last, opsS.Empty = "n/a", "not reported by this server"
	}
	memS := views.Spark{Label: "Memory, last 5 min", TestID: "spark-mem", Points: sparkPoints(mem), Empty: "collecting samples…"}
	if len(mem) > 0 {
		memS.Last = format.Bytes(int64(mem[len(mem)-1]))
	} else {
		memS.Last, memS.Empty = "n/a", "not reported by this server"
	}
	return []views.Spark{opsS, memS}
}

// sparkPoints scales values into the sparkline box; fewer than two points draw nothing.
func sparkPoints(v []float64) string {
	if len(v) < 2 {
		return ""
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	span := hi - lo
	var b strings.Builder
	for i, x := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		px := float64(i) / float64(len(v)-1) * sparkW
		py := sparkH / 2
		if span > 0 {
			py = sparkH - 1 - (x-lo)/span*(sparkH-2)
		}
		b.WriteString(strconv.FormatFloat(px, 'f', 1, 64))
		b.WriteByte(',')
		b.WriteString(strconv.FormatFloat(py, 'f', 1, 64))
	}
	return b.String()
}
