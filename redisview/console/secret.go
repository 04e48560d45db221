package console

import (
	"slices"
	"strings"

	"github.com/keydeck/keydeck/redisview/server"
)

// CarriesSecret reports a line whose arguments may hold a secret: a
// password (AUTH, HELLO … AUTH, MIGRATE … AUTH/AUTH2, ACL SETUSER's >pw),
// a sensitive setting's value (CONFIG SET requirepass, server.SensitiveConfig)
// or a module's load arguments (MODULE LOAD/LOADEX, often credentials).
// Such a line is never run as a dangerous command, and never kept with its
// arguments in a history or an audit record. It reads the arguments only,
// so it holds for a line the server does not know.
func CarriesSecret(args []string) bool {
	if len(args) == 0 {
		return false
	}
	name := strings.ToLower(args[0])
	sub := ""
	if len(args) > 1 {
		sub = strings.ToLower(args[1])
	}
	isWord := func(words ...string) func(string) bool {
		return func(a string) bool {
			return slices.ContainsFunc(words, func(w string) bool { return strings.EqualFold(a, w) })
		}
	}
	switch name {
	case "auth", "acl":
		return true
	case "hello":
		return slices.ContainsFunc(args[1:], isWord("auth"))
	case "migrate":
		return slices.ContainsFunc(args[1:], isWord("auth", "auth2"))
	case "module":
		return sub == "load" || sub == "loadex"
	case "config":
		if sub != "set" {
			return false
		}
		// CONFIG SET name value [name value …]
		for i := 2; i < len(args); i += 2 {
			if server.SensitiveConfig(args[i]) {
				return true
			}
		}
	}
	return false
}
