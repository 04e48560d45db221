#!/bin/sh
# Support tasks through Keydeck's API (docs/api.md), with curl and jq:
#
#   support.sh banned NAME          is NAME banned? (exit 0 yes, 1 no, 2 unknown)
#   support.sh unban NAME           unban NAME (preview, then execute)
#   support.sh unlock NAME          unlock NAME's login
#   support.sh reset-captcha NAME   reset NAME's slider-CAPTCHA bucket
#
# Environment: KEYDECK_TOKEN, an API token (kdt_…) from /account/tokens
# with the support role (banned needs only viewer); KEYDECK_URL (default
# http://127.0.0.1:8080); KEYDECK_CONN, the connection (default main).
# NAME is sent byte for byte: as base64 in queries, as {"b64": …} in bodies.
# Every change is previewed, then executed with the preview's token, and
# printed with its audit id (POST /api/v1/actions/undo undoes it).
set -eu

: "${KEYDECK_URL:=http://127.0.0.1:8080}"
: "${KEYDECK_CONN:=main}"
: "${KEYDECK_TOKEN:?set KEYDECK_TOKEN to an API token (kdt_...) from /account/tokens}"

# The eIsland pack's families these tasks act on.
LOGIN_FAMILIES='["login-lock", "login-failures"]'
CAPTCHA_FAMILY='slider-rate-create-account'

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

# api METHOD PATH [JSON]: the answer on stdout; a problem (RFC 9457) is
# printed to stderr and ends the script.
api() {
	if [ $# -gt 2 ]; then
		code=$(curl -sS -o "$tmp" -w '%{http_code}' -X "$1" \
			-H "Authorization: Bearer $KEYDECK_TOKEN" -H 'Accept: application/json' \
			-H 'Content-Type: application/json' --data-binary "$3" "$KEYDECK_URL$2")
	else
		code=$(curl -sS -o "$tmp" -w '%{http_code}' -X "$1" \
			-H "Authorization: Bearer $KEYDECK_TOKEN" -H 'Accept: application/json' "$KEYDECK_URL$2")
	fi
	if [ "$code" -ge 400 ]; then
		jq -r '"\(.status) \(.title): \(.detail)"' "$tmp" >&2 || cat "$tmp" >&2
		exit 3
	fi
	cat "$tmp"
}

# b64 NAME: its bytes in base64 (standard alphabet, one line).
b64() { printf %s "$1" | base64 | tr -d '\n'; }

# query64 NAME: its bytes in URL-safe base64, for a ..._b64 parameter.
query64() { b64 "$1" | tr '+/' '-_' | tr -d '='; }

conn_path="/api/v1/connections/$(jq -rn --arg c "$KEYDECK_CONN" '$c|@uri')"

# say TEXT: TEXT as it is, with a newline (dash's echo would turn the
# backslashes of a name into escapes).
say() { printf '%s\n' "$1"; }

# act BODY: preview the action, print what it will do, execute it. An
# answer is kept before jq reads it: a refused request ends the script
# (exit 3) instead of feeding jq nothing.
act() {
	preview=$(api POST /api/v1/actions/preview "$1")
	say "$preview" | jq -r '"preview: \(.summary)"'
	token=$(say "$preview" | jq -r .token)
	done=$(api POST /api/v1/actions/execute "$(jq -n --arg t "$token" '{token: $t}')")
	say "$done" | jq -r '"done: \(.summary) (audit \(.audit_id))"'
}

# user_keys NAME FAMILIES: the user's keys of those families, one JSON
# object {db, key} a line.
user_keys() {
	user=$(api GET "$conn_path/user?name_b64=$(query64 "$1")")
	say "$user" | jq -c --argjson fams "$2" '.keys[] | select(.family as $f | $fams | index($f)) | {db, key}'
}

[ $# -eq 2 ] || { sed -n '2,8p' "$0" >&2; exit 64; }
task=$1 name=$2

case $task in
banned)
	check=$(api GET "$conn_path/ban-check?name_b64=$(query64 "$name")")
	say "$check" | jq -r '.lists[] | select(.purpose == "ban") | "\(.list): \(.words // "not read")"'
	say "$check" | jq -r '.unread[] | "not read: \(.what): \(.why)"' >&2
	case $(say "$check" | jq -r '.banned') in
	true) echo banned; exit 0 ;;
	false) echo "not banned"; exit 1 ;;
	*) echo "unknown: a ban list could not be read"; exit 2 ;;
	esac
	;;
unban)
	check=$(api GET "$conn_path/ban-check?name_b64=$(query64 "$name")")
	lists=$(say "$check" | jq -c '.lists[] | select(.purpose == "ban" and .in_set == true) | {db, key: .set_key}')
	[ -n "$lists" ] || { echo "not in any ban list's set: nothing to unban"; exit 1; }
	say "$lists" | while IFS= read -r l; do
		act "$(say "$l" | jq -c --arg c "$KEYDECK_CONN" --arg n "$(b64 "$name")" \
			'{kind: "unban", conn: $c, db, key, args: {name: {b64: $n}}}')"
	done
	;;
unlock | reset-captcha)
	kind=unlock-login fams=$LOGIN_FAMILIES
	if [ "$task" = reset-captcha ]; then
		kind=reset-limit fams="[\"$CAPTCHA_FAMILY\"]"
	fi
	keys=$(user_keys "$name" "$fams") || exit $?
	[ -n "$keys" ] || { say "no such key of $name's: nothing to do"; exit 1; }
	if [ "$kind" = unlock-login ]; then
		# One unlock clears the lock and the failures together.
		keys=$(say "$keys" | head -n 1)
	fi
	say "$keys" | while IFS= read -r k; do
		act "$(say "$k" | jq -c --arg c "$KEYDECK_CONN" --arg kind "$kind" '{kind: $kind, conn: $c, db, key}')"
	done
	;;
*)
	sed -n '2,8p' "$0" >&2
	exit 64
	;;
esac
