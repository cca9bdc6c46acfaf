//! All of this crate's integration tests, linked into one test binary: each
//! file under tests/ used to be its own ~50 MB executable, which cost CI
//! link time and disk. Each module keeps its own tests and helpers.

mod a2a;
mod a2a_interop;
mod agent_api;
mod anex_routing;
mod approver_api;
mod authority;
mod callback_proxies;
mod callback_targets;
mod cli;
mod common;
mod deployment;
mod durability;
mod gate;
mod gate_client;
mod gate_deadline;
mod gate_decisions;
mod gate_interop;
mod gate_oanp;
mod gate_plain;
mod gate_routing;
mod gate_support;
mod key_rotation;
mod mcp;
mod mcp_plain;
mod pg_statements;
mod rate_limits;
mod refusals;
mod routing;
mod schema;
mod signing_v2;
mod slow_clients;
mod stand_ins;
mod stores;
mod throughput;
mod with_client;
