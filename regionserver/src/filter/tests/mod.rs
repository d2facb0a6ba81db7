//! Tests of the filter language through its public functions: a harness that drives a
//! filter exactly in the engine's documented call order, then parser, per-filter,
//! combination and property tests.

mod combinations;
mod extension_filters;
mod harness;
mod parsing;
mod properties;
mod row_and_column_filters;
mod skip_hints;
mod value_filters;
