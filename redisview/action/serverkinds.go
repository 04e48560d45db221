package action

import "github.com/keydeck/keydeck/redisview/schema"

// AppliesTo is false: a kind acting on a server (OnServer) refuses a
// request naming a key, so a key page must not offer it; its forms are on
// the server and client pages.
func (ConfigSet) AppliesTo(*schema.Family) bool  { return false }
func (KillClient) AppliesTo(*schema.Family) bool { return false }
