# Keydeck. `make test` is the one command that installs what the tests need
# (when missing) and runs every check; .ci/run calls exactly it.
SHELL := /bin/bash
GO ?= go

# The seed documents the schema packs are checked against
# (TestSeedFixtureInSync) live outside the repository, at ../shared/seeds
# beside the checkout in CI. When that folder exists and KEYDECK_SEEDS is not
# set, the tests are pointed at it (and then fail, not skip, if it cannot be
# read); without it the test skips and says how to run it. Set
# KEYDECK_REQUIRE_SEEDS=1 to make it fail rather than skip when they are missing.
SEEDS_DIR := $(abspath $(CURDIR)/../shared/seeds)
ifeq ($(origin KEYDECK_SEEDS),undefined)
ifneq ($(wildcard $(SEEDS_DIR)/000_f3a0dbfe758eabc7.txt),)
export KEYDECK_SEEDS := $(SEEDS_DIR)
endif
endif

.PHONY: build run screenshots test deps generate check-generated vet test-go test-race css bench-viewers bench-sweep bench-search bench-search-budget bench-keypage bench-limits bench-user bench-bans bench-metrics bench-cluster bench-bulk

# The console as one binary, bin/keydeck (what the README calls keydeck).
build:
	$(GO) build -o bin/keydeck ./cmd/web

run:
	$(GO) run ./cmd/web

# The docs' pictures (docs/img/NAME-light.png and NAME-dark.png), taken
# from the embedded demo in headless Chromium (cmd/screenshots/shots.go
# lists them); about three minutes.
screenshots: build
	$(GO) run ./cmd/screenshots -bin bin/keydeck -out docs/img

test: deps check-generated vet test-go

# redis-server, Chromium, jq and curl (docs/support.sh's test) and promtool (and the prometheus server the
# scrape test starts, package prometheus; its service is not what the tests
# use) come from Debian; installed only when missing.
deps:
	@missing=""; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v promtool >/dev/null || missing="$$missing prometheus"; \
	command -v jq >/dev/null || missing="$$missing jq"; \
	command -v curl >/dev/null || missing="$$missing curl"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	@redis-server --version | head -1
	@chromium --version 2>/dev/null | head -1
	@promtool --version 2>/dev/null | head -1
	@jq --version

generate:
	$(GO) tool templ generate

# Regenerates templ code in a scratch copy and fails if it differs from what
# is committed, without touching the work tree.
check-generated:
	@scripts/check-generated.sh

vet:
	@bad=$$(git ls-files '*.go' | grep -v '_templ.go$$' | xargs gofmt -l); \
	if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...

# Two runs, one after the other (side by side, the machine's load made
# timing-bound tests fail): every package without the race detector, then the
# packages whose job is goroutines meeting under it (RACE_PKGS: the live hub,
# the linger pool, the clock, sessions and the users file, the scan budget,
# the limit, statistics and quota workers, the leaderboard index, the bulk
# engine's workers and leases). Under -race
# the whole suite took 14 min of CPU on this 2-core machine (12 min from a
# fresh clone, which compiles everything twice); the end-to-end tests cost
# ~3x under it (cmd/web 175 s of CPU against 74 s; the sensitive crawl 149 s
# against 46 s). `make test-race` runs every package under -race.
# The longest-running packages are named first: go test starts packages in
# the order given (GOMAXPROCS at a time).
RACE_PKGS := ./internal/live/ ./internal/linger/ ./internal/clock/ ./internal/people/ ./redisview/scanbudget/ ./redisview/limits/ ./redisview/stats/ ./redisview/quotas/ ./redisview/leaderboard/ ./redisview/bulk/
TEST_FIRST := ./cmd/web/ ./handlers/ ./redisview/ ./internal/demo/ ./redisview/action/
PLAIN_PKGS = $(TEST_FIRST) $(filter-out $(shell $(GO) list $(RACE_PKGS)),$(shell $(GO) list ./...))

test-go:
	@$(GO) list ./... >/dev/null || { echo "go list failed: the package lists would be short"; exit 1; }; \
	pkgs="$(PLAIN_PKGS)"; \
	$(GO) test -count=1 -timeout 20m $$pkgs; plain=$$?; \
	$(GO) test -race -count=1 -timeout 10m $(RACE_PKGS); r=$$?; \
	echo "packages: exit $$plain; packages under the race detector: exit $$r"; \
	[ $$plain = 0 ] && [ $$r = 0 ]

test-race:
	$(GO) test -race -count=1 -timeout 15m ./...

# Rebuilds static/css/app.css (needs Node; the output is committed).
css:
	npm ci --no-audit --no-fund && npm run build

# Websocket viewers benchmark: 1, 100 and 1,000 viewers of one overview.
bench-viewers:
	$(GO) run ./cmd/bench-viewers

# Statistics sweep over 1,000,000 seed-shaped keys in a fresh redis-server
# (about 5 minutes): a complete pass at the default budget, Redis CPU,
# commands per key, slowest command, every estimate against the exact value.
# 10M keys (about 45 minutes, 5 GB of RAM): make bench-sweep SWEEP_FLAGS='-keys 10000000'
# On a 3-primary cluster: make bench-sweep SWEEP_FLAGS=-cluster
SWEEP_FLAGS ?=
bench-sweep:
	$(GO) run ./cmd/bench-sweep $(SWEEP_FLAGS)

# Keydeck watching a 3-primary cluster of 3,000,000 vertique and eIsland-shaped
# keys (started and stopped by the command; -keys 300000 to try it quickly):
# first figures, complete pass, Redis CPU per node, slowest command.
# Bulk delete and undo of 1,000,000 keys: time, Redis CPU, the application's
# GET latency meanwhile (cmd/bench-bulk).
bench-bulk:
	$(GO) run ./cmd/bench-bulk

bench-cluster:
	$(GO) run ./cmd/bench-cluster

# Search over 1,000,000 eIsland-shaped keys in a fresh redis-server: a
# username and an account, commands, time, derived vs scanned, slowest command.
bench-search:
	$(GO) run ./cmd/bench-search

# 64 concurrent live searches on 1,000,000 eIsland-shaped keys in a fresh
# redis-server, unpaced and under the scan budget (--search-rate) by 1 and
# by 8 users, against the sweep: Redis CPU, SCANs/s, time to finish.
bench-search-budget:
	$(GO) run ./cmd/bench-search-budget

# Key page on a 100 MB string, 5M-field hash, 5M-member sorted set and 1M-element list.
bench-keypage:
	$(GO) run ./cmd/bench-keypage

# Rate limits page: 100,000 buckets + 100,000 login windows + 10,000 locks,
# 1 vs 100 viewers: Redis commands/s, slowest command, first throttled row.
bench-limits:
	$(GO) run ./cmd/bench-limits

# The user page over 1,000,000 eIsland-shaped keys in a fresh redis-server:
# commands and time of the first read, a live re-read and a whole scan pass.
bench-user:
	$(GO) run ./cmd/bench-user

# The bans page's reads on a 50,000-name ban list in a fresh redis-server:
# time of each, Redis's own time per command, the slowest command (target:
# none over 2 ms).
bench-bans:
	$(GO) run ./cmd/bench-bans

# /metrics over 1,000,000 eIsland-shaped keys in a fresh redis-server: the
# series count by metric once every database is swept, a scrape's size and time.
bench-metrics:
	$(GO) run ./cmd/bench-metrics
