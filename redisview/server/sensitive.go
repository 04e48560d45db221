package server

import "strings"

// sensitiveExact are settings that hold a secret or say where one is,
// by name; sensitiveParts catch the rest by what their names contain,
// so a setting a newer Redis adds (or a module's) is withheld by default
// when its name says it is a password or a key.
var sensitiveExact = map[string]bool{
	"requirepass": true, "masterauth": true, "masteruser": true, "aclfile": true,
	"tls-key-file": true, "tls-client-key-file": true, "tls-dh-params-file": true,
}

var sensitiveParts = []string{"pass", "auth", "secret", "token", "credential", "acl-file", "private"}

// SensitiveConfig reports a CONFIG parameter Keydeck never reads out nor
// writes: passwords, the user a replica signs in as, the ACL file and TLS
// private key paths (and any parameter whose name says it holds a secret).
func SensitiveConfig(name string) bool {
	n := strings.ToLower(name)
	if sensitiveExact[n] {
		return true
	}
	if strings.HasPrefix(n, "tls-") && strings.Contains(n, "key") {
		return true
	}
	for _, p := range sensitiveParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}
