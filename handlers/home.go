package handlers

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/stats"
	"github.com/keydeck/keydeck/views"
	"github.com/keydeck/keydeck/views/format"
)

// homeRead bounds how long the home page waits for the connections'
// figures; a connection that does not answer in time says so.
const homeRead = 2 * time.Second

// home lists the connections with their state and headline figures: keys,
// memory, ops/sec and pack. Each connection's overview is read at once (the
// poller's latest when an overview is open), all in parallel.
func (a *App) home(c echo.Context) error {
	conns := a.conns.All()
	vm := views.HomeVM{Connections: make([]views.HomeItem, len(conns))}
	ctx, cancel := context.WithTimeout(c.Request().Context(), homeRead)
	defer cancel()
	var wg sync.WaitGroup
	for i, conn := range conns {
		wg.Go(func() { vm.Connections[i] = a.homeItem(ctx, conn) })
	}
	wg.Wait()
	return render(c, http.StatusOK, vm, views.HomePage(a.page(c, "Connections", ""), vm))
}

func (a *App) homeItem(ctx context.Context, conn *redisview.Conn) views.HomeItem {
	st := conn.Status()
	it := views.HomeItem{
		Name: conn.Name, Display: conn.Display, Href: route.OverviewURL(conn.Name),
		Up: st.Up, Status: statusText(st), Keys: "—", Memory: "—", Ops: "—", Pack: "none",
	}
	pc := conn.PackChoice()
	switch {
	case pc.Pack != nil:
		it.Pack = pc.Pack.Name
	case pc.Why == "":
		it.Pack = "matching…"
	}
	if !st.Up && !st.Checked.IsZero() {
		return it // nothing can be read: no figures, not zeros
	}
	r := a.overviews[conn.Name]
	if r == nil {
		return it
	}
	ov := r.Latest(ctx, 3*time.Second)
	if ov.Err != "" {
		it.Note = ov.Err
		return it
	}
	homeFigures(&it, ov)
	return it
}

// homeFigures fills a connection's headline figures from its overview.
func homeFigures(it *views.HomeItem, ov stats.Overview) {
	var keys int64
	for _, db := range ov.DBs {
		keys += db.Keys
	}
	it.Keys = format.Count(keys)
	it.Memory = optString(mapOpt(ov.Server.UsedMemory, format.Bytes))
	var vm views.OverviewVM
	it.Ops = opsTile(ov.Server, &vm).Value
}
