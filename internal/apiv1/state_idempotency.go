package apiv1

import (
	"github.com/keydeck/keydeck/redisview/decode"
	"github.com/keydeck/keydeck/redisview/schema"
)

func init() { registerState[decode.Marker](schema.RoleIdempotency) }
