package people

import (
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/goccy/go-yaml"
	"golang.org/x/crypto/bcrypt"

	"github.com/keydeck/keydeck/internal/clock"
	"github.com/keydeck/keydeck/redisview/action"
)

// User is one account of the users file.
type User struct {
	Name  string
	Email string
	Level action.Level
	hash  []byte
}

// PasswordCost is the bcrypt cost `keydeck hash-password` uses: about
// 250 ms per check on a small machine.
const PasswordCost = 12

// Users are the accounts that may sign in. The accounts are replaced as a
// whole when the users file changes (Reload, Watch): every caller holds the
// same *Users and each lookup sees one complete version of the file.
type Users struct {
	path string
	set  atomic.Pointer[userSet]

	// reload bookkeeping, guarded by mu: the content last read (valid or
	// not), so an unchanged or still-broken file is not parsed and logged
	// again every poll, and the last read error.
	mu      sync.Mutex
	seen    [sha256.Size]byte
	readErr string
	// onRemoved are told the accounts a reload removed (OnRemoved).
	onRemoved []func(names []string)
	// clock times GoneGrace; gone holds each removed account's latest
	// removal (a reload's number, goneGen) until its grace is over.
	clock   clock.Clock
	gone    map[string]uint64
	goneGen uint64
}

// OnRemoved has f told the names of accounts a reload removed once they
// have stayed out of the users file for GoneGrace (on the users' clock):
// what ends with an account (its API tokens) is then ended for good, even
// if the account comes back; an account back within the grace (a file
// cut off for one reload) keeps it. f runs on a timer, not during Reload.
func (u *Users) OnRemoved(f func(names []string)) {
	if u == nil {
		return
	}
	u.mu.Lock()
	u.onRemoved = append(u.onRemoved, f)
	u.mu.Unlock()
}

// userSet is one version of the users file.
type userSet struct {
	byName  map[string]User
	byEmail map[string]User
	// cost is the highest bcrypt cost among the hashes (0 when there are
	// none); the dummy hash for unknown names is made at it.
	cost int
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

// dummies holds one hash of a password nobody has per bcrypt cost, made on
// first use (a reload at the same cost reuses it).
var dummies struct {
	sync.Mutex
	byCost map[int][]byte
}

func dummyAt(cost int) []byte {
	if cost == 0 {
		cost = PasswordCost
	}
	dummies.Lock()
	defer dummies.Unlock()
	if h, ok := dummies.byCost[cost]; ok {
		return h
	}
	h, _ := bcrypt.GenerateFromPassword([]byte(RandomToken()), cost)
	if dummies.byCost == nil {
		dummies.byCost = map[int][]byte{}
	}
	dummies.byCost[cost] = h
	return h
}

type usersFile struct {
	Users []struct {
		Name  string `yaml:"name"`
		Email string `yaml:"email"`
		Role  string `yaml:"role"`
		// PasswordHash is nil when the field is left out (a user who
		// signs in only through the trusted proxy); given, it may not be
		// empty, blank or null (parseUsers tells those from left out).
		PasswordHash *string `yaml:"password_hash"`
	} `yaml:"users"`
}

// LoadUsers reads a users file:
//
//	users:
//	  - name: alice
//	    email: alice@example.com   # optional; matched in proxy mode with --proxy-match email
//	    role: admin                # viewer, support or admin
//	    password_hash: "$2a$12$…"  # from `keydeck hash-password`; optional in proxy mode
//
// The returned Users remember the path for Reload and Watch.
func LoadUsers(path string, opts ...Option) (*Users, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	set, err := parseUsers(path, data)
	if err != nil {
		return nil, err
	}
	u := &Users{path: path, seen: sha256.Sum256(data), clock: clockOf(opts)}
	u.set.Store(set)
	return u, nil
}

func parseUsers(path string, data []byte) (*userSet, error) {
	var f usersFile
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.Strict()); err != nil {
		// One line, with the position: it is what start-up prints.
		return nil, fmt.Errorf("%s: %s", path, strings.TrimSpace(yaml.FormatError(err, false, false)))
	}
	// A key written with no value (or ~, null) decodes as if left out:
	// which entries do name password_hash is read from the file again.
	var keys struct {
		Users []map[string]any `yaml:"users"`
	}
	if err := yaml.Unmarshal(data, &keys); err != nil || len(keys.Users) != len(f.Users) {
		return nil, fmt.Errorf("%s: the users list cannot be read twice alike: %v", path, err)
	}
	set := newUserSet()
	for i, e := range f.Users {
		if _, named := keys.Users[i]["password_hash"]; named && e.PasswordHash == nil {
			e.PasswordHash = new(string)
		}
		where := fmt.Sprintf("%s: user %d", path, i+1)
		if e.Name == "" || strings.ContainsAny(e.Name, " \t\r\n") || len(e.Name) > 64 {
			return nil, fmt.Errorf("%s: name %q: want 1–64 characters without spaces", where, e.Name)
		}
		if _, dup := set.byName[e.Name]; dup {
			return nil, fmt.Errorf("%s: name %q appears twice", where, e.Name)
		}
		role, err := action.ParseLevel(e.Role)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %v", where, e.Name, err)
		}
		user := User{Name: e.Name, Email: strings.ToLower(e.Email), Level: role}
		switch {
		case e.PasswordHash == nil:
		case *e.PasswordHash == "":
			return nil, fmt.Errorf("%s (%s): password_hash is empty: make one with `keydeck hash-password`, or leave the field out for a user who signs in only through the trusted proxy", where, e.Name)
		default:
			if _, err := bcrypt.Cost([]byte(*e.PasswordHash)); err != nil {
				return nil, fmt.Errorf("%s (%s): password_hash is not a bcrypt hash (make one with `keydeck hash-password`)", where, e.Name)
			}
			user.hash = []byte(*e.PasswordHash)
		}
		set.add(user)
	}
	if len(set.byName) == 0 {
		return nil, fmt.Errorf("%s: no users", path)
	}
	return set, nil
}

// NewUsers builds Users in memory (tests, embedding).
func NewUsers(list ...User) *Users {
	set := newUserSet()
	for _, x := range list {
		set.add(x)
	}
	u := &Users{}
	u.set.Store(set)
	return u
}

// WithPassword sets a user's password hash (tests, embedding).
func (x User) WithPassword(hash []byte) User { x.hash = hash; return x }

// current is the version of the file in force.
func (u *Users) current() *userSet { return u.set.Load() }

// Lookup finds a user by name.
func (u *Users) Lookup(name string) (User, bool) {
	if u == nil {
		return User{}, false
	}
	x, ok := u.current().byName[name]
	return x, ok
}

// Names are the accounts' names, sorted.
func (u *Users) Names() []string {
	if u == nil {
		return nil
	}
	names := make([]string, 0, len(u.current().byName))
	for n := range u.current().byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Len is how many accounts the version in force holds.
func (u *Users) Len() int {
	if u == nil {
		return 0
	}
	return len(u.current().byName)
}

// LookupEmail finds a user by e-mail address.
func (u *Users) LookupEmail(email string) (User, bool) {
	if u == nil {
		return User{}, false
	}
	x, ok := u.current().byEmail[strings.ToLower(email)]
	return x, ok
}

// MatchProxy finds the account a trusted proxy's identity names, by the one
// field match says: "email" looks the e-mail up, anything else the user
// name. Never either: a proxy that lets users pick their display name must
// not let "mallory" borrow ada's level by also sending ada's address.
func (u *Users) MatchProxy(match, user, email string) (User, bool) {
	if match == "email" {
		return u.LookupEmail(email)
	}
	return u.Lookup(user)
}

// dummy is what a failed lookup compares against, so that it costs as much
// as a wrong password and timing does not tell which account names exist.
func (u *Users) dummy() []byte { return dummyAt(u.current().cost) }

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
