//! Plain terms' seam, pure: the diff, the counter check, the breach.
