//! The console engine against a real `countersign-host` on loopback: one
//! test binary, one module per topic.

mod anex;
mod anex_sdk;
mod chain;
mod clock;
mod common;
mod concurrent;
mod connect;
mod contract;
mod core;
mod decided;
mod desk;
mod disputes;
mod files;
mod gate;
mod gate_sdk;
mod glance;
mod history;
mod key;
mod keyring;
mod mcp_sdk;
mod notices;
mod oanp_gate;
mod plain;
mod receipts;
mod rotation;
mod seam;
mod settings;
mod waiting;
