package handlers

import "github.com/keydeck/keydeck/redisview/schema"

func init() {
	presenters[schema.RoleGCRA] = func(d *panel, state any) { d.vm.Summary = "GCRA limiter" }
}
