package stats

import "github.com/redis/go-redis/v9"

// cmdErr is a command's error, redis.Nil (an absent value) excepted.
func cmdErr(c redis.Cmder) error {
	if err := c.Err(); err != nil && err != redis.Nil {
		return err
	}
	return nil
}
