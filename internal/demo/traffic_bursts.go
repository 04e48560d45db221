package demo

import (
	"context"
	"time"
)

// sliderBot is an account whose client retries the slider CAPTCHA in a
// loop: its creation bucket is drained and stays throttled, refilling a
// little between bursts, as the Rate limits page shows a real one.
const sliderBot = "bot-7f3a@eisland.dev"

// burst is a client that hammers one limit at once: every other time the
// slider bot drains its account's bucket (12 a minute) with 14 hits, else
// the gateway's noisy key spends its whole RPS bucket and then some, so
// both pages show buckets that are empty, refilling, and empty again.
func (s *Simulator) burst(ctx context.Context, now time.Time) error {
	if s.rng.IntN(2) == 0 {
		key := "verify:slider:rate:create:account:" + SliderKeyPart(sliderBot)
		for range sliderCreateAccount + 2 {
			if _, err := s.bucket(ctx, key, sliderCreateAccount, now); err != nil {
				return err
			}
		}
		return nil
	}
	key := "q:rps:" + gatewayKeyIDs[0]
	for range GatewayRPSCapacity + 2 {
		if err := GatewayTokenBucket.Run(ctx, s.gateway, []string{key}, gatewayRPSArgs(now.UnixMilli())...).Err(); err != nil {
			return err
		}
	}
	return nil
}
