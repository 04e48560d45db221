package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/keydeck/keydeck/internal/apiv1"
	"github.com/keydeck/keydeck/internal/route"
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
	"github.com/keydeck/keydeck/redisview/vertique"
)

// The API's vertique operations: the bucket inventory (viewers) and the
// finder (support and up: it derives keys with the secret, an HMAC
// oracle), each reading what the vertique page reads.

type apiVertiqueOut struct{ Body apiv1.VertiquePage }

// apiVertique reads the inventory as the vertique page does (the cached
// walk, vtInventory); a server known to be down is not asked.
func (a *App) apiVertique(ctx context.Context, _ echo.Context, in *apiConnIn) (*apiVertiqueOut, error) {
	conn, err := a.conns.Get(in.Conn)
	if err != nil {
		return nil, err
	}
	secret := a.apiVertiqueSecret()
	f, ferr := vertique.Family(conn.Pack())
	if ferr != nil {
		return &apiVertiqueOut{Body: apiv1.Vertique(conn.Name, conn.Status(), secret, nil, vertique.Inventory{}, nil, a.apiErrText(conn))}, nil
	}
	var inv vertique.Inventory
	if st := conn.Status(); st.Up || st.Checked.IsZero() {
		inv, err = a.vtInventory.Get(ctx, conn, f, secret.Fingerprint, a.now())
	}
	return &apiVertiqueOut{Body: apiv1.Vertique(conn.Name, conn.Status(), secret, f, inv, err, a.apiErrText(conn))}, nil
}

// apiVertiqueSecret says what the vertique page says of the secret: never
// the secret, its fingerprint.
func (a *App) apiVertiqueSecret() apiv1.VertiqueSecret {
	if len(a.vertique.Secret) == 0 {
		return apiv1.VertiqueSecret{}
	}
	return apiv1.VertiqueSecret{Configured: true, Demo: a.vertique.Demo, From: a.vertique.From, Fingerprint: vertique.Fingerprint(a.vertique.Secret)}
}

type apiVertiqueFindIn struct {
	Conn     string `path:"conn" doc:"The connection's name."`
	Policy   string `query:"policy" required:"true" doc:"The policy's name."`
	Revision string `query:"revision" required:"true" doc:"The policy's revision."`
	Key      string `query:"key" doc:"The caller's key, as the application builds it (with enc=parts: its parts, one a line)."`
	Enc      string `query:"enc" enum:"parts," doc:"parts: key is the key's parts, one a line, canonicalised as vertique does."`
}

type apiVertiqueFindOut struct{ Body apiv1.VertiqueBucket }

// apiVertiqueFind derives a caller's bucket key and reads its state, as
// the vertique page's finder does; 404 on a pack without vertique
// buckets, 409 when Keydeck has no secret.
func (a *App) apiVertiqueFind(ctx context.Context, _ echo.Context, in *apiVertiqueFindIn) (*apiVertiqueFindOut, error) {
	conn, err := a.conns.Get(in.Conn)
	if err != nil {
		return nil, err
	}
	for _, v := range []string{in.Policy, in.Revision, in.Key} {
		if len(v) > maxLookupField {
			return nil, fmt.Errorf("%w: a lookup field longer than %d bytes", route.ErrParam, maxLookupField)
		}
	}
	f, err := vertique.Family(conn.Pack())
	if err != nil {
		return nil, fmt.Errorf("%w: this connection's pack has no vertique buckets (%s)", route.ErrNoPage, err.Error())
	}
	if in.Policy == "" || in.Revision == "" {
		return nil, fmt.Errorf("%w: a lookup needs a policy name and a revision", route.ErrParam)
	}
	if len(a.vertique.Secret) == 0 {
		return nil, apiv1.NewProblem(http.StatusConflict, "", "Keydeck was not given the secret, so it cannot derive a bucket key. "+secretHowTo)
	}
	canon := in.Key
	if in.Enc == "parts" {
		canon = vertique.CanonicalKey(strings.Split(strings.ReplaceAll(in.Key, "\r\n", "\n"), "\n")...)
	}
	key, err := vertique.Key(f, a.vertique.Secret, in.Policy, in.Revision, canon)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", route.ErrParam, err)
	}
	db := vertiqueDB(f)
	var res decode.Result
	if f.Sensitive {
		res.Sensitive = true
	} else {
		res, err = decode.ReadKey(ctx, conn, db, schema.Match{Family: f}, key, a.now())
	}
	return &apiVertiqueFindOut{Body: apiv1.VertiqueFind(key, db, res, err, a.apiErrText(conn))}, nil
}
