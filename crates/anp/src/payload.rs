//! Strict, typed payloads for every event kind (filled in next).
