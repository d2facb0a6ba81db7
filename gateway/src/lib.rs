//! The gateway (being written).
