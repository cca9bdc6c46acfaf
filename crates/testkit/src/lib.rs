//! Real parts for tests and the load generator, started in temporary
//! directories on loopback and cleaned up however the test ends:
//!
//! - [`postgres::Cluster`]: a PostgreSQL cluster of its own (initdb +
//!   postgres from Debian's packages under `/usr/lib/postgresql/*/bin`), no
//!   system service; a watchdog stops it and removes its directory when the
//!   process that started it exits, even by a panic or `kill -9`.
//! - [`nginx::Nginx`]: nginx (Debian's package) with its own configuration,
//!   balancing over host processes.
//! - [`deployment::Deployment`]: several host processes on one database
//!   behind nginx, and an admin handle on the same database.
//!
//! Missing binaries are an error that says to run `bash .ci/setup`, never a
//! silent skip.

pub mod deployment;
pub mod nginx;
pub mod postgres;
pub mod process;
pub mod python;
