package handlers

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/redisview/action"
)

// User is one account of the users file.
type User struct {
	Name  string
	Email string
	Role  action.Role
	hash  []byte
}

// PasswordCost is the bcrypt cost `keydeck hash-password` uses: about
// 250 ms per check on a small machine.
const PasswordCost = 12

// Users are the accounts that may sign in.
type Users struct {
	set *userSet
}

// userSet is one version of the users file.
type userSet struct {
	byName  map[string]User
	byEmail map[string]User
	// cost is the highest bcrypt cost among the hashes (PasswordCost when
	// there are none); the dummy hash for unknown names is made at it.
	cost      int
	dummyOnce sync.Once
	dummyHash []byte
}

func newUserSet() *userSet {
	return &userSet{byName: map[string]User{}, byEmail: map[string]User{}}
}

// add puts x in the set; the caller has checked its name is new.
func (s *userSet) add(x User) {
	s.byName[x.Name] = x
	if x.Email != "" {
		s.byEmail[strings.ToLower(x.Email)] = x
	}
	if x.hash != nil {
		if c, err := bcrypt.Cost(x.hash); err == nil && c > s.cost {
			s.cost = c
		}
	}
}

// dummy is a hash of a password nobody has, at the users' cost, made on
// first use (one ~250 ms computation per version of the file).
func (s *userSet) dummy() []byte {
	s.dummyOnce.Do(func() {
		cost := s.cost
		if cost == 0 {
			cost = PasswordCost
		}
		s.dummyHash, _ = bcrypt.GenerateFromPassword([]byte(randomToken()), cost)
	})
	return s.dummyHash
}

type usersFile struct {
	Users []struct {
		Name         string `yaml:"name"`
		Email        string `yaml:"email"`
		Role         string `yaml:"role"`
		PasswordHash string `yaml:"password_hash"`
	} `yaml:"users"`
}

// LoadUsers reads a users file:
//
//	users:
//	  - name: alice
//	    email: alice@example.com   # optional; matched in proxy mode with --proxy-match email
//	    role: admin                # viewer, support or admin
//	    password_hash: "$2a$12$…"  # from `keydeck hash-password`; optional in proxy mode
func LoadUsers(path string) (*Users, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f usersFile
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("%s: %s", path, yaml.FormatError(err, false, true))
	}
	set := newUserSet()
	for i, e := range f.Users {
		where := fmt.Sprintf("%s: user %d", path, i+1)
		if e.Name == "" || strings.ContainsAny(e.Name, " \t\r\n") || len(e.Name) > 64 {
			return nil, fmt.Errorf("%s: name %q: want 1–64 characters without spaces", where, e.Name)
		}
		if _, dup := set.byName[e.Name]; dup {
			return nil, fmt.Errorf("%s: name %q appears twice", where, e.Name)
		}
		role, err := action.ParseRole(e.Role)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %v", where, e.Name, err)
		}
		user := User{Name: e.Name, Email: strings.ToLower(e.Email), Role: role}
		if e.PasswordHash != "" {
			if _, err := bcrypt.Cost([]byte(e.PasswordHash)); err != nil {
				return nil, fmt.Errorf("%s (%s): password_hash is not a bcrypt hash (make one with `keydeck hash-password`)", where, e.Name)
			}
			user.hash = []byte(e.PasswordHash)
		}
		set.add(user)
	}
	if len(set.byName) == 0 {
		return nil, fmt.Errorf("%s: no users", path)
	}
	return &Users{set: set}, nil
}

// NewUsers builds Users in memory (tests, embedding).
func NewUsers(list ...User) *Users {
	set := newUserSet()
	for _, x := range list {
		set.add(x)
	}
	return &Users{set: set}
}

// WithPassword sets a user's password hash (tests, embedding).
func (x User) WithPassword(hash []byte) User { x.hash = hash; return x }

// Lookup finds a user by name.
func (u *Users) Lookup(name string) (User, bool) {
	if u == nil {
		return User{}, false
	}
	x, ok := u.set.byName[name]
	return x, ok
}

// LookupEmail finds a user by e-mail address.
func (u *Users) LookupEmail(email string) (User, bool) {
	if u == nil {
		return User{}, false
	}
	x, ok := u.set.byEmail[strings.ToLower(email)]
	return x, ok
}

// dummy is what a failed lookup compares against, so that it costs as much
// as a wrong password and timing does not tell which account names exist.
func (u *Users) dummy() []byte { return u.set.dummy() }

// Authenticate checks a password.
func (u *Users) Authenticate(name, password string) (User, bool) {
	x, ok := u.Lookup(name)
	if !ok || x.hash == nil {
		_ = bcrypt.CompareHashAndPassword(u.dummy(), []byte(password))
		return User{}, false
	}
	if bcrypt.CompareHashAndPassword(x.hash, []byte(password)) != nil {
		return User{}, false
	}
	return x, true
}
