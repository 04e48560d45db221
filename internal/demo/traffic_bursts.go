package demo

import (
	"context"
	"time"
)

// sliderBot is an account whose client retries the slider CAPTCHA in a
// loop, once every simulator step (2.5 a second against a refill of 0.2):
// its creation bucket is empty and stays throttled, as the Rate limits
// page shows a real one.
const sliderBot = "bot-7f3a@eisland.dev"

func (s *Simulator) sliderBotHit(ctx context.Context, now time.Time) error {
	_, err := s.bucket(ctx, "verify:slider:rate:create:account:"+SliderKeyPart(sliderBot), sliderCreateAccount, now)
	return err
}

// burst is the gateway's noisy key spending its whole RPS bucket and then
// some at once: the bucket is empty, refills at 1 token a second, and is
// emptied again by the next burst.
func (s *Simulator) burst(ctx context.Context, now time.Time) error {
	key := "q:rps:" + gatewayKeyIDs[0]
	for range GatewayRPSCapacity + 2 {
		if err := GatewayTokenBucket.Run(ctx, s.gateway, []string{key}, gatewayRPSArgs(now.UnixMilli())...).Err(); err != nil {
			return err
		}
	}
	return nil
}
