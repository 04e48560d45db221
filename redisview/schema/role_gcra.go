package schema

import (
	"fmt"
	"time"
)

// RoleGCRA: a GCRA limiter's theoretical arrival time, epoch ms (scratch).
const RoleGCRA Role = "gcra"

// GCRAParams: role gcra.
type GCRAParams struct {
	Limit  int64         `yaml:"limit"`
	Period time.Duration `yaml:"period"`
}

// Check validates the params.
func (p *GCRAParams) Check(*Family) error {
	if p.Limit <= 0 || p.Period <= 0 {
		return fmt.Errorf("limit and period are required")
	}
	return nil
}

func init() {
	RegisterRole(RoleGCRA, RoleSpec{Types: []string{"string"}, Params: func() Params { return &GCRAParams{} }})
}
