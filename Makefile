# Convenience targets; the README's two commands need none of them.

.PHONY: test bench-compare

test:
	go test ./...

# Drover vs River vs graphile-worker on one fresh PostgreSQL (and SQLite).
bench-compare:
	bench/compare.sh

# The drover binary with its commit recorded even where the go tool records
# none (GOFLAGS=-buildvcs=false); `drover version` prints it.
COMMIT   := $(shell git rev-parse HEAD 2>/dev/null)
MODIFIED := $(shell test -z "$$(git status --porcelain 2>/dev/null)" || echo true)

.PHONY: build
build:
	go build -ldflags "-X main.commit=$(COMMIT) -X main.modified=$(MODIFIED)" -o drover ./cmd/drover
