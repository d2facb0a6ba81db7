//! The HBase filter language (being written).
