package server

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrSensitive: a sensitive setting was asked for by name; it is never
// read (SensitiveConfig).
var ErrSensitive = errors.New("a sensitive setting, never read by Keydeck")

// ConfigValue reads one parameter (CONFIG GET name, no pattern); ok is
// false when the server has no such parameter. A sensitive parameter is
// not even asked for (ErrSensitive).
func ConfigValue(ctx context.Context, c redis.UniversalClient, name string) (value string, ok bool, err error) {
	if SensitiveConfig(name) {
		return "", false, ErrSensitive
	}
	if strings.ContainsAny(name, "*?[") {
		return "", false, errors.New("server: a parameter name, not a pattern, is needed")
	}
	m, err := c.ConfigGet(ctx, name).Result()
	if err != nil {
		return "", false, refusal("CONFIG GET", err)
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v, true, nil
		}
	}
	return "", false, nil
}
