// Package cache is the storage contract of the gateway's answer cache: an Entry is one cached
// answer under an exact key, scoped to a workspace and a namespace, with an optional embedding
// for semantic lookups; a Store keeps entries within a byte bound and lists the entries with a
// vector in put order (Changes), so that each gateway instance can keep its own in-memory
// semantic index and verify every candidate with Get.
//
// The backends are subpackages: cache/memory (embedded mode: in process, written behind to a
// SQLite file), cache/postgres (server mode, shared by every instance on one database) and
// cache/redis (shared through a Redis server). cache/cachetest is the contract suite they are
// all held to.
//
// It imports only the standard library: never a driver, the gateway, HTTP or commands.
package cache
