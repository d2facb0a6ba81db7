//! The regionserver (being written).
