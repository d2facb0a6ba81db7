//! The commit log (being written).
