//! The coordinator (being written).
