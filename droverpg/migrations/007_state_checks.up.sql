-- Migration 007 rebuilds SQLite's job tables so that their state checks are
-- comparisons instead of a temporary B-tree per row (see droversqlite). In
-- PostgreSQL a CHECK (state IN (...)) is already a short array scan per row,
-- so there is nothing to change; the migration exists so that both stores
-- number their migrations alike (drover migrate --status reports one
-- version for either).
SELECT 1;
