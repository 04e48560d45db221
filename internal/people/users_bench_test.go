package people

import (
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/redisview/action"
)

// BenchmarkSignIn compares a wrong password for an account that exists with
// one for an account that does not: the two must cost the same, or timing
// tells which accounts exist. go test -run - -bench SignIn ./handlers
func BenchmarkSignIn(b *testing.B) {
	hash, err := bcrypt.GenerateFromPassword([]byte("right-password"), PasswordCost)
	if err != nil {
		b.Fatal(err)
	}
	u := NewUsers(User{Name: "ada", Level: action.Admin}.WithPassword(hash))
	u.Authenticate("warm-up", "x") // the dummy hash is made once, lazily
	for _, c := range []struct{ name, user string }{{"existing-wrong-password", "ada"}, {"missing-account", "nobody"}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := u.Authenticate(c.user, "wrong-password"); ok {
					b.Fatal("signed in")
				}
			}
		})
	}
}
