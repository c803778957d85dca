//! The test suite, one binary: every test shares one emulator (a project each) and runs
//! beside the others, where 52 binaries each started their own and ran one after another.
//! The tests that capture `tracing` output are binaries of their own (`tests/tests/*.rs`):
//! tracing's per-callsite caching, disturbed by other tests' threads, would hide lines they
//! look for.

mod aggregates_declared;
mod backfill;
mod bulk_contract;
mod bulk_writer;
mod counters;
mod cursor_refusals;
mod dependent_crates;
mod description;
mod emulator_kit;
mod firebase_cli;
mod get_many;
mod inclusive_cursors;
mod increment_ids;
mod job_processes;
mod job_state;
mod limit_to_last;
mod listen;
mod listen_dead_connection;
mod listen_reshard;
mod live_counters;
mod merges;
mod model;
mod one_struct_two_places;
mod other_clients;
mod partitioned_jobs;
mod projection;
mod query_api;
mod query_contains;
mod query_equivalence;
mod query_exactness;
mod query_failures;
mod query_in;
mod query_or;
mod query_plan;
mod query_range_sets;
mod query_ranges;
mod query_reversed;
mod read_time;
mod rename_field;
mod resharding;
mod security_rules;
mod serialization;
mod server_aggregates;
mod server_batch_write;
mod server_explain_and_vectors;
mod server_increments;
mod server_inequalities;
mod server_listen_consistency;
mod server_order;
mod server_timestamp;
mod several_aggregations;
mod shard_distribution;
mod snapshot;
mod subcollections;
mod transactions;
mod transforms;
mod typescript_client;
mod typescript_live;
mod typescript_package;
mod ui;
mod vector_search;
mod writes;
