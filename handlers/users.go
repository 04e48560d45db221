package handlers

import (
	"fmt"
	"os"
	"strings"

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

// Users are the accounts that may sign in.
type Users struct {
	byName  map[string]User
	byEmail map[string]User
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
	u := &Users{byName: map[string]User{}, byEmail: map[string]User{}}
	for i, e := range f.Users {
		where := fmt.Sprintf("%s: user %d", path, i+1)
		if e.Name == "" || strings.ContainsAny(e.Name, " \t\r\n") || len(e.Name) > 64 {
			return nil, fmt.Errorf("%s: name %q: want 1–64 characters without spaces", where, e.Name)
		}
		if _, dup := u.byName[e.Name]; dup {
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
		u.byName[user.Name] = user
		if user.Email != "" {
			u.byEmail[user.Email] = user
		}
	}
	if len(u.byName) == 0 {
		return nil, fmt.Errorf("%s: no users", path)
	}
	return u, nil
}

// NewUsers builds Users in memory (tests, embedding).
func NewUsers(list ...User) *Users {
	u := &Users{byName: map[string]User{}, byEmail: map[string]User{}}
	for _, x := range list {
		u.byName[x.Name] = x
		if x.Email != "" {
			u.byEmail[strings.ToLower(x.Email)] = x
		}
	}
	return u
}

// WithPassword sets a user's password hash (tests, embedding).
func (x User) WithPassword(hash []byte) User { x.hash = hash; return x }

// Lookup finds a user by name.
func (u *Users) Lookup(name string) (User, bool) {
	if u == nil {
		return User{}, false
	}
	x, ok := u.byName[name]
	return x, ok
}

// LookupEmail finds a user by e-mail address.
func (u *Users) LookupEmail(email string) (User, bool) {
	if u == nil {
		return User{}, false
	}
	x, ok := u.byEmail[strings.ToLower(email)]
	return x, ok
}

// dummyHash makes a failed lookup cost as much as a wrong password, so
// timing does not tell which account names exist.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("keydeck-dummy-password"), bcrypt.DefaultCost)

// Authenticate checks a password.
func (u *Users) Authenticate(name, password string) (User, bool) {
	x, ok := u.Lookup(name)
	if !ok || x.hash == nil {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return User{}, false
	}
	if bcrypt.CompareHashAndPassword(x.hash, []byte(password)) != nil {
		return User{}, false
	}
	return x, true
}
