//! The structured diff of two offers (filled in next).
