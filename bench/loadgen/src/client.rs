//! Thrift1 connections and the calls the workloads make.
//!
//! Owns: [`Connection`] (one TCP connection with a generated `HbaseSyncClient` over
//! the chosen transport and protocol) and table set-up ([`ensure_table`]).
//! Must not: choose keys or time anything.

use std::collections::BTreeMap;
use std::net::TcpStream;

use tabula_thrift::hbase::{
    BatchMutation, ColumnDescriptor, HbaseSyncClient, Mutation, THbaseSyncClient, TRowResult, TScan,
};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TInputProtocol, TOutputProtocol,
};
use thrift::transport::{
    TBufferedReadTransport, TBufferedWriteTransport, TFramedReadTransport, TFramedWriteTransport,
    TIoChannel, TTcpChannel,
};

use crate::args::{DurabilityArg, ProtocolArg, TransportArg};
use crate::error::BenchError;

type Client = HbaseSyncClient<Box<dyn TInputProtocol + Send>, Box<dyn TOutputProtocol + Send>>;

/// Where and how to connect.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub addr: String,
    pub transport: TransportArg,
    pub protocol: ProtocolArg,
    pub durability: DurabilityArg,
}

/// One client connection.
pub struct Connection {
    client: Client,
    write_to_wal: bool,
}

fn no_attributes() -> BTreeMap<Vec<u8>, Vec<u8>> {
    BTreeMap::new()
}

impl Connection {
    /// Connects to `endpoint`.
    pub fn open(endpoint: &Endpoint) -> Result<Connection, BenchError> {
        let connect_error = |e: std::io::Error| BenchError::Connect {
            addr: endpoint.addr.clone(),
            message: e.to_string(),
        };
        let stream = TcpStream::connect(&endpoint.addr).map_err(connect_error)?;
        stream.set_nodelay(true).map_err(connect_error)?;
        let (read, write) =
            TTcpChannel::with_stream(stream)
                .split()
                .map_err(|e| BenchError::Connect {
                    addr: endpoint.addr.clone(),
                    message: e.to_string(),
                })?;
        let (read, write): (
            Box<dyn thrift::transport::TReadTransport + Send>,
            Box<dyn thrift::transport::TWriteTransport + Send>,
        ) = match endpoint.transport {
            TransportArg::Buffered => (
                Box::new(TBufferedReadTransport::new(read)),
                Box::new(TBufferedWriteTransport::new(write)),
            ),
            TransportArg::Framed => (
                Box::new(TFramedReadTransport::new(read)),
                Box::new(TFramedWriteTransport::new(write)),
            ),
        };
        let (input, output): (
            Box<dyn TInputProtocol + Send>,
            Box<dyn TOutputProtocol + Send>,
        ) = match endpoint.protocol {
            ProtocolArg::Binary => (
                Box::new(TBinaryInputProtocol::new(read, true)),
                Box::new(TBinaryOutputProtocol::new(write, true)),
            ),
            ProtocolArg::Compact => (
                Box::new(TCompactInputProtocol::new(read)),
                Box::new(TCompactOutputProtocol::new(write)),
            ),
        };
        Ok(Connection {
            client: HbaseSyncClient::new(input, output),
            write_to_wal: endpoint.durability == DurabilityArg::Sync,
        })
    }

    fn put_mutation(&self, column: &[u8], value: &[u8]) -> Mutation {
        Mutation {
            is_delete: Some(false),
            column: Some(column.to_vec()),
            value: Some(value.to_vec()),
            write_to_w_a_l: Some(self.write_to_wal),
        }
    }

    /// Writes `cells` (column, value) to `row` in one mutateRow.
    pub fn put(
        &mut self,
        table: &[u8],
        row: &[u8],
        cells: &[(&[u8], &[u8])],
    ) -> thrift::Result<()> {
        let mutations = cells.iter().map(|(c, v)| self.put_mutation(c, v)).collect();
        self.client
            .mutate_row(table.to_vec(), row.to_vec(), mutations, no_attributes())
    }

    /// Writes one cell at an explicit timestamp.
    pub fn put_at(
        &mut self,
        table: &[u8],
        row: &[u8],
        column: &[u8],
        value: &[u8],
        timestamp: i64,
    ) -> thrift::Result<()> {
        let mutation = self.put_mutation(column, value);
        self.client.mutate_row_ts(
            table.to_vec(),
            row.to_vec(),
            vec![mutation],
            timestamp,
            no_attributes(),
        )
    }

    /// Writes the same `cells` to each of `rows` in one mutateRows.
    pub fn put_rows(
        &mut self,
        table: &[u8],
        rows: &[Vec<u8>],
        cells: &[(&[u8], &[u8])],
    ) -> thrift::Result<()> {
        let batches = rows
            .iter()
            .map(|r| BatchMutation {
                row: Some(r.clone()),
                mutations: Some(cells.iter().map(|(c, v)| self.put_mutation(c, v)).collect()),
            })
            .collect();
        self.client
            .mutate_rows(table.to_vec(), batches, no_attributes())
    }

    /// The newest value of one column; returns its length (0 when absent).
    pub fn get(&mut self, table: &[u8], row: &[u8], column: &[u8]) -> thrift::Result<usize> {
        let cells = self.client.get(
            table.to_vec(),
            row.to_vec(),
            column.to_vec(),
            no_attributes(),
        )?;
        Ok(cells
            .first()
            .and_then(|c| c.value.as_ref())
            .map_or(0, Vec::len))
    }

    /// The newest value of one column of each of `rows` in one getRowsWithColumns:
    /// the length of each value returned (rows without the column are left out, as
    /// HBase leaves them out).
    pub fn get_rows(
        &mut self,
        table: &[u8],
        rows: &[Vec<u8>],
        column: &[u8],
    ) -> thrift::Result<Vec<usize>> {
        let results = self.client.get_rows_with_columns(
            table.to_vec(),
            rows.to_vec(),
            vec![column.to_vec()],
            no_attributes(),
        )?;
        Ok(results
            .iter()
            .map(|r| {
                r.columns
                    .as_ref()
                    .and_then(|c| c.get(column))
                    .or_else(|| {
                        r.sorted_columns
                            .as_ref()
                            .and_then(|s| {
                                s.iter().find(|c| c.column_name.as_deref() == Some(column))
                            })
                            .and_then(|c| c.cell.as_ref())
                    })
                    .and_then(|c| c.value.as_ref())
                    .map_or(0, Vec::len)
            })
            .collect())
    }

    /// The newest value of one column with a timestamp below `before`: its
    /// timestamp, if any.
    pub fn get_as_of(
        &mut self,
        table: &[u8],
        row: &[u8],
        column: &[u8],
        before: i64,
    ) -> thrift::Result<Option<i64>> {
        let cells = self.client.get_ver_ts(
            table.to_vec(),
            row.to_vec(),
            column.to_vec(),
            before,
            1,
            no_attributes(),
        )?;
        Ok(cells.first().and_then(|c| c.timestamp))
    }

    /// The whole row; returns the number of cells.
    pub fn get_row(&mut self, table: &[u8], row: &[u8]) -> thrift::Result<usize> {
        let rows = self
            .client
            .get_row(table.to_vec(), row.to_vec(), no_attributes())?;
        Ok(rows.first().map_or(0, cell_count))
    }

    /// Reads up to `rows` rows from `start`, `batch` rows per call; returns how many
    /// rows came back.
    pub fn scan(
        &mut self,
        table: &[u8],
        start: &[u8],
        rows: u32,
        batch: u32,
    ) -> thrift::Result<u64> {
        let batch = batch.clamp(1, rows.max(1));
        // Every field spelled out: the generated Default sets an empty filter
        // string and a zero timestamp, which mean something else on the wire.
        let scan = TScan {
            start_row: Some(start.to_vec()),
            stop_row: None,
            timestamp: None,
            columns: None,
            caching: Some(batch as i32),
            filter_string: None,
            batch_size: None,
            sort_columns: None,
            reversed: None,
            cache_blocks: None,
        };
        let id = self
            .client
            .scanner_open_with_scan(table.to_vec(), scan, no_attributes())?;
        let mut seen = 0u64;
        let result = loop {
            let want = (u64::from(rows) - seen).min(u64::from(batch));
            if want == 0 {
                break Ok(seen);
            }
            match self.client.scanner_get_list(id, want as i32) {
                Ok(got) if got.is_empty() => break Ok(seen),
                Ok(got) => seen += got.len() as u64,
                Err(e) => break Err(e),
            }
        };
        let closed = self.client.scanner_close(id);
        let seen = result?;
        closed?;
        Ok(seen)
    }

    /// Runs a major compaction of `table` (Tabula answers once it is done).
    pub fn major_compact(&mut self, table: &[u8]) -> thrift::Result<()> {
        self.client.major_compact(table.to_vec())
    }

    /// Creates `table` with `family` keeping `max_versions` versions, unless it exists.
    /// With `fresh`, an existing table is dropped first.
    pub fn ensure_table(
        &mut self,
        table: &str,
        family: &str,
        max_versions: i32,
        fresh: bool,
    ) -> Result<(), BenchError> {
        let names = self.client.get_table_names().map_err(BenchError::setup)?;
        let exists = names.iter().any(|n| n.as_slice() == table.as_bytes());
        if exists && !fresh {
            return Ok(());
        }
        if exists {
            self.client
                .disable_table(table.as_bytes().to_vec())
                .map_err(BenchError::setup)?;
            self.client
                .delete_table(table.as_bytes().to_vec())
                .map_err(BenchError::setup)?;
        }
        let family = ColumnDescriptor {
            name: Some(format!("{family}:").into_bytes()),
            max_versions: Some(max_versions),
            compression: Some("NONE".into()),
            in_memory: Some(false),
            bloom_filter_type: Some("ROW".into()),
            bloom_filter_vector_size: Some(0),
            bloom_filter_nb_hashes: Some(0),
            block_cache_enabled: Some(true),
            time_to_live: Some(i32::MAX),
        };
        self.client
            .create_table(table.as_bytes().to_vec(), vec![family])
            .map_err(BenchError::setup)
    }
}

fn cell_count(row: &TRowResult) -> usize {
    row.columns.as_ref().map_or(0, BTreeMap::len) + row.sorted_columns.as_ref().map_or(0, Vec::len)
}
