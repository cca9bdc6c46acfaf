//! Exact decimal amounts and offer totals (filled in next).
