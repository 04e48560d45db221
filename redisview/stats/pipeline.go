package stats

import "github.com/redis/go-redis/v9"

// pipelineErr tells a pipeline that never ran (the connection failed: no
// command carries a reply) from one whose commands each got a reply, some
// of them errors, which the caller judges one by one.
func pipelineErr(cmds []redis.Cmder, err error) error {
	if err == nil {
		return nil
	}
	for _, c := range cmds {
		if c.Err() != nil {
			return nil
		}
	}
	return err
}

// cmdErr is a command's error, redis.Nil (an absent value) excepted.
func cmdErr(c redis.Cmder) error {
	if err := c.Err(); err != nil && err != redis.Nil {
		return err
	}
	return nil
}
