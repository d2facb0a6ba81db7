//! The Thrift connection server (being written).
