# Convenience targets; the README's two commands need none of them.

.PHONY: test bench-compare

test:
	go test ./...

# Drover vs River vs graphile-worker on one fresh PostgreSQL (and SQLite).
bench-compare:
	bench/compare.sh
