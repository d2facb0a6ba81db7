//! Generated Thrift code (being written).
