//! The shared block cache (being written).
