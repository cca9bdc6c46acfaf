//! The conformance suite (RUNNER_CONTRACT v1-draft).
