package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/apiv1"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview"
	"github.com/keydeck/keydeck/redisview/action"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/leaderboard"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/search"
)

// apiDecode is the role's reading of a key of family m, as the key page
// reads it (decode.ReadKey), never of a sensitive family.
func (a *App) apiDecode(ctx context.Context, conn *redisview.Conn, db int, key, typ string, m schema.Match) *apiv1.Decoded {
	if !search.Decodes(m, typ) {
		return apiv1.DecodedOf(m.Family, typ, false, decode.Result{}, "")
	}
	res, err := decode.ReadKey(ctx, conn, db, m, key, a.now())
	msg := ""
	if err != nil {
		msg = conn.WrapErr(redisview.ReadError("reading the key by its role", err)).Error()
	}
	return apiv1.DecodedOf(m.Family, typ, true, res, msg)
}

type apiLeaderboardIn struct {
	Conn   string `path:"conn" doc:"The connection's name."`
	N      string `path:"n" doc:"The database index, 0 to 255."`
	Key    string `query:"key" doc:"The leaderboard's key, percent-encoded: any bytes."`
	KeyB64 string `query:"key_b64" doc:"The key's bytes in base64 (standard or URL-safe, padded or not), instead of key."`
	Start  int64  `query:"start" minimum:"0" maximum:"1000000000" default:"0" doc:"The 0-based offset of the first entry."`
	Count  int64  `query:"count" minimum:"1" maximum:"500" default:"10" doc:"How many entries."`
}

type apiLeaderboardOut struct{ Body apiv1.Leaderboard }

// apiLeaderboard reads a window as the leaderboard page does
// (leaderboard.Read); a sensitive board is refused (403).
func (a *App) apiLeaderboard(ctx context.Context, c echo.Context, in *apiLeaderboardIn) (*apiLeaderboardOut, error) {
	conn, db, err := a.openDB(ctx, in.Conn, in.N)
	if err != nil {
		return nil, err
	}
	key, err := apiQueryName(c, "key", route.MaxLinkedName)
	if err != nil {
		return nil, err
	}
	w, err := leaderboard.Read(ctx, conn, db, key, in.Start, in.Count)
	if errors.Is(err, leaderboard.ErrSensitive) {
		return nil, err
	}
	if err != nil {
		// Unreachable or refused: a 502, not an error of Keydeck's.
		return nil, conn.WrapErr(redisview.ReadError("reading the leaderboard", err))
	}
	if w.Size == 0 {
		// Redis keeps no empty sorted set: the key is missing.
		return nil, missingKey(conn, db, key, "leaderboard")
	}
	return &apiLeaderboardOut{Body: apiv1.LeaderboardOf(conn.Name, w)}, nil
}

type apiPreviewIn struct{ Body apiv1.ActionRequest }

type apiPreviewOut struct{ Body apiv1.ActionPreview }

// apiPreview previews an action as the confirmation page does
// (Runner.Preview as the caller), its token sealed the same way.
func (a *App) apiPreview(ctx context.Context, c echo.Context, in *apiPreviewIn) (*apiPreviewOut, error) {
	return a.apiPreviewOf(ctx, c, in.Body.Kind, in.Body.Request())
}

func (a *App) apiPreviewOf(ctx context.Context, c echo.Context, kind string, req action.Request) (*apiPreviewOut, error) {
	if _, err := route.ParseDB(fmt.Sprint(req.DB)); err != nil {
		return nil, err
	}
	conn, err := a.conns.Get(req.Conn)
	if err != nil {
		return nil, err
	}
	pv, err := a.actions.Preview(ctx, actor(c), conn, kind, req)
	if err != nil {
		return nil, err
	}
	return &apiPreviewOut{Body: apiv1.PreviewOf(pv, a.signer.Seal("action", []byte(pv.Token())))}, nil
}

type apiUndoIn struct{ Body apiv1.UndoRequest }

// apiUndo previews undoing an executed action: the undo kind, as the
// audit page's undo link previews it.
func (a *App) apiUndo(ctx context.Context, c echo.Context, in *apiUndoIn) (*apiPreviewOut, error) {
	req := action.Request{Conn: in.Body.Conn, DB: in.Body.DB, Args: map[string]string{action.ArgRecord: in.Body.Record}}
	return a.apiPreviewOf(ctx, c, action.KindUndo, req)
}

type apiExecuteIn struct{ Body apiv1.ExecuteRequest }

type apiExecuteOut struct{ Body apiv1.ActionOutcome }

// apiExecute executes a previewed action as the confirmation page's
// button does (Runner.Execute as the caller: the role checked again, the
// state compared with the preview's, audited).
func (a *App) apiExecute(ctx context.Context, c echo.Context, in *apiExecuteIn) (*apiExecuteOut, error) {
	raw, err := a.signer.Unseal("action", in.Body.Token)
	if err != nil {
		return nil, fmt.Errorf("%w: the confirmation was tampered with or comes from another console; preview again", action.ErrInvalid)
	}
	pv, err := action.ParseToken(string(raw))
	if err != nil {
		return nil, err
	}
	conn, err := a.conns.Get(pv.Request.Conn)
	if err != nil {
		return nil, err
	}
	out, err := a.actions.Execute(ctx, actor(c), conn, pv)
	if err != nil {
		if !errors.Is(err, action.ErrForbidden) {
			a.log.Warn("action failed", "user", actor(c).User, "action", pv.Kind, "conn", conn.Name, "db", pv.Request.DB, "err", err)
		}
		return nil, err
	}
	a.executed(c, conn, pv, out)
	return &apiExecuteOut{Body: apiv1.OutcomeOf(out)}, nil
}
