//! Thrift1 connections and the calls the workloads make.
//!
//! Owns: [`Connection`] (one TCP connection on the async runtime, framed or
//! unframed, binary or compact, or HBase's HTTP mode with each call a POST, over
//! TLS for `https`) and table set-up ([`Connection::ensure_table`]).
//! A call is encoded with the generated argument struct into a buffer, written
//! whole, and its reply decoded with the generated result struct once enough bytes
//! have arrived, so one runtime thread drives many connections the way
//! redis-benchmark does, instead of a thread per connection whose wake-ups cost as
//! much CPU as the server's work on a machine the client shares.
//! Must not: choose keys or time anything.

use std::collections::BTreeMap;
use std::io::{Cursor, Write};
use std::sync::Arc;

use tabula_thrift::hbase::{
    BatchMutation, ColumnDescriptor, HbaseCreateTableArgs, HbaseCreateTableResult,
    HbaseDeleteTableArgs, HbaseDeleteTableResult, HbaseDisableTableArgs, HbaseDisableTableResult,
    HbaseGetArgs, HbaseGetResult, HbaseGetRowArgs, HbaseGetRowResult, HbaseGetRowsWithColumnsArgs,
    HbaseGetRowsWithColumnsResult, HbaseGetTableNamesArgs, HbaseGetTableNamesResult,
    HbaseGetVerTsArgs, HbaseGetVerTsResult, HbaseIncrementArgs, HbaseIncrementResult,
    HbaseMajorCompactArgs, HbaseMajorCompactResult, HbaseMutateRowArgs, HbaseMutateRowResult,
    HbaseMutateRowTsArgs, HbaseMutateRowTsResult, HbaseMutateRowsArgs, HbaseMutateRowsResult,
    HbaseScannerCloseArgs, HbaseScannerCloseResult, HbaseScannerGetListArgs,
    HbaseScannerGetListResult, HbaseScannerOpenWithScanArgs, HbaseScannerOpenWithScanResult,
    Mutation, TIncrement, TRowResult, TScan,
};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TInputProtocol, TMessageIdentifier, TMessageType, TOutputProtocol,
};
use thrift::{ApplicationError, ApplicationErrorKind, TransportError, TransportErrorKind};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::args::{DurabilityArg, ProtocolArg, TransportArg};
use crate::error::BenchError;

/// Largest reply frame accepted; a bigger length prefix means a broken stream.
const MAX_FRAME: usize = 256 * 1024 * 1024;
/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 64 * 1024;
/// Longest HTTP response head (status line and headers) accepted.
const MAX_HTTP_HEAD: usize = 16 * 1024;

/// Where and how to connect.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub addr: String,
    pub transport: TransportArg,
    pub protocol: ProtocolArg,
    pub durability: DurabilityArg,
    /// The TLS client of `--transport https`.
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

/// How calls and replies are delimited on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delimiting {
    /// Back to back.
    Unframed,
    /// Each behind its length.
    Framed,
    /// Each call an HTTP POST body, each reply a response body.
    Http,
}

/// The byte stream under a connection.
enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Stream {
    async fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.write_all(bytes).await,
            Stream::Tls(s) => {
                s.write_all(bytes).await?;
                s.flush().await
            }
        }
    }

    async fn read_buf(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read_buf(buf).await,
            Stream::Tls(s) => s.read_buf(buf).await,
        }
    }
}

/// One client connection.
pub struct Connection {
    stream: Stream,
    delimiting: Delimiting,
    /// The `Host` header of HTTP calls.
    host: String,
    protocol: ProtocolArg,
    write_to_wal: bool,
    sequence: i32,
    /// The encoded call being sent.
    out: Vec<u8>,
    /// An HTTP call's body, encoded before its head (which gives its length).
    body: Vec<u8>,
    /// Bytes received and not yet decoded.
    received: Vec<u8>,
}

fn no_attributes() -> BTreeMap<Vec<u8>, Vec<u8>> {
    BTreeMap::new()
}

/// Whether decoding failed only because the reply has not fully arrived.
fn is_incomplete(e: &thrift::Error) -> bool {
    matches!(
        e,
        thrift::Error::Transport(TransportError {
            kind: TransportErrorKind::EndOfFile,
            ..
        })
    )
}

fn transport_error(kind: TransportErrorKind, message: impl Into<String>) -> thrift::Error {
    thrift::Error::Transport(TransportError::new(kind, message))
}

/// A generated call struct that can be written as a call's arguments.
trait CallArgs {
    fn write(&self, o: &mut dyn TOutputProtocol) -> thrift::Result<()>;
}

/// A generated result struct: decoded from a reply, then turned into the answer or
/// the service's exception.
trait CallResult: Sized {
    type Answer;
    fn read(i: &mut dyn TInputProtocol) -> thrift::Result<Self>;
    fn answer(self) -> thrift::Result<Self::Answer>;
}

macro_rules! call_structs {
    ($($args:ident => $result:ident : $answer:ty),* $(,)?) => {$(
        impl CallArgs for $args {
            fn write(&self, o: &mut dyn TOutputProtocol) -> thrift::Result<()> {
                self.write_to_out_protocol(o)
            }
        }
        impl CallResult for $result {
            type Answer = $answer;
            fn read(i: &mut dyn TInputProtocol) -> thrift::Result<Self> {
                $result::read_from_in_protocol(i)
            }
            fn answer(self) -> thrift::Result<$answer> {
                self.ok_or()
            }
        }
    )*};
}

call_structs! {
    HbaseMutateRowArgs => HbaseMutateRowResult: (),
    HbaseMutateRowTsArgs => HbaseMutateRowTsResult: (),
    HbaseMutateRowsArgs => HbaseMutateRowsResult: (),
    HbaseGetArgs => HbaseGetResult: Vec<tabula_thrift::hbase::TCell>,
    HbaseGetRowsWithColumnsArgs => HbaseGetRowsWithColumnsResult: Vec<TRowResult>,
    HbaseGetVerTsArgs => HbaseGetVerTsResult: Vec<tabula_thrift::hbase::TCell>,
    HbaseGetRowArgs => HbaseGetRowResult: Vec<TRowResult>,
    HbaseScannerOpenWithScanArgs => HbaseScannerOpenWithScanResult: i32,
    HbaseScannerGetListArgs => HbaseScannerGetListResult: Vec<TRowResult>,
    HbaseScannerCloseArgs => HbaseScannerCloseResult: (),
    HbaseMajorCompactArgs => HbaseMajorCompactResult: (),
    HbaseGetTableNamesArgs => HbaseGetTableNamesResult: Vec<Vec<u8>>,
    HbaseDisableTableArgs => HbaseDisableTableResult: (),
    HbaseDeleteTableArgs => HbaseDeleteTableResult: (),
    HbaseCreateTableArgs => HbaseCreateTableResult: (),
    HbaseIncrementArgs => HbaseIncrementResult: (),
}

/// Writes one call message (`method`, `sequence`, `args`) with `protocol`.
fn encode_call(
    out: &mut Vec<u8>,
    protocol: ProtocolArg,
    method: &str,
    sequence: i32,
    args: &dyn CallArgs,
) -> thrift::Result<()> {
    let write = |o: &mut dyn TOutputProtocol| -> thrift::Result<()> {
        o.write_message_begin(&TMessageIdentifier::new(
            method,
            TMessageType::Call,
            sequence,
        ))?;
        args.write(o)?;
        o.write_message_end()?;
        o.flush()
    };
    match protocol {
        ProtocolArg::Binary => write(&mut TBinaryOutputProtocol::new(&mut *out, true)),
        ProtocolArg::Compact => write(&mut TCompactOutputProtocol::new(&mut *out)),
    }
}

/// Decodes one reply message to `method`'s call `sequence` from the start of `bytes`.
/// Returns the answer (or the call's error) and the bytes the message took.
fn decode_reply<R: CallResult>(
    bytes: &[u8],
    protocol: ProtocolArg,
    method: &str,
    sequence: i32,
) -> thrift::Result<(thrift::Result<R::Answer>, usize)> {
    let mut cursor = Cursor::new(bytes);
    let read = |i: &mut dyn TInputProtocol| -> thrift::Result<thrift::Result<R::Answer>> {
        let header = i.read_message_begin()?;
        let answer = match header.message_type {
            TMessageType::Exception => {
                let e = thrift::Error::read_application_error_from_in_protocol(i)?;
                Err(thrift::Error::Application(e))
            }
            TMessageType::Reply => R::read(i)?.answer(),
            other => {
                return Err(thrift::Error::Application(ApplicationError::new(
                    ApplicationErrorKind::InvalidMessageType,
                    format!("expected a reply to {method}, got a {other:?} message"),
                )))
            }
        };
        i.read_message_end()?;
        if header.name != method || header.sequence_number != sequence {
            return Err(thrift::Error::Application(ApplicationError::new(
                ApplicationErrorKind::BadSequenceId,
                format!(
                    "expected the reply to {method} #{sequence}, got {} #{}",
                    header.name, header.sequence_number
                ),
            )));
        }
        Ok(answer)
    };
    let answer = match protocol {
        ProtocolArg::Binary => read(&mut TBinaryInputProtocol::new(&mut cursor, true))?,
        ProtocolArg::Compact => read(&mut TCompactInputProtocol::new(&mut cursor))?,
    };
    Ok((answer, cursor.position() as usize))
}

/// A failure of HTTP framing, keeping its message (a transport error's display
/// shows only its kind).
fn http_error(message: String) -> thrift::Error {
    thrift::Error::User(message.into())
}

/// Writes the head of an HTTP call whose body is `body_len` bytes into `out`.
fn write_http_head(out: &mut Vec<u8>, host: &str, body_len: usize) -> thrift::Result<()> {
    write!(
        out,
        "POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-thrift\r\nAccept: application/x-thrift\r\nContent-Length: {body_len}\r\n\r\n"
    )
    .map_err(|e| http_error(e.to_string()))
}

/// Where the body of the HTTP response at the start of `received` lies, once all
/// of it has arrived; an error for a status other than 200 or a head without a
/// length.
fn http_body(received: &[u8], method: &str) -> thrift::Result<Option<(usize, usize)>> {
    let Some(head_len) = received.windows(4).position(|w| w == b"\r\n\r\n") else {
        if received.len() > MAX_HTTP_HEAD {
            return Err(http_error(format!(
                "an HTTP response head longer than {MAX_HTTP_HEAD} bytes"
            )));
        }
        return Ok(None);
    };
    let head = String::from_utf8_lossy(received.get(..head_len).unwrap_or_default());
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(http_error(format!("{method} answered {status:?}")));
    }
    let length = lines
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse::<usize>().ok())
        .ok_or_else(|| {
            http_error(format!(
                "the HTTP response to {method} has no Content-Length"
            ))
        })?;
    if length > MAX_FRAME {
        return Err(http_error(format!(
            "an HTTP response body of {length} bytes"
        )));
    }
    let start = head_len + 4;
    if received.len() < start + length {
        return Ok(None);
    }
    Ok(Some((start, start + length)))
}

impl Connection {
    /// Connects to `endpoint`.
    pub async fn open(endpoint: &Endpoint) -> Result<Connection, BenchError> {
        let connect_error = |e: std::io::Error| BenchError::Connect {
            addr: endpoint.addr.clone(),
            message: e.to_string(),
        };
        let tcp = TcpStream::connect(&endpoint.addr)
            .await
            .map_err(connect_error)?;
        tcp.set_nodelay(true).map_err(connect_error)?;
        let stream = match (&endpoint.tls, endpoint.transport) {
            (Some(config), TransportArg::Https) => {
                let name = crate::tls::server_name(&endpoint.addr)?;
                let session = TlsConnector::from(Arc::clone(config))
                    .connect(name, tcp)
                    .await
                    .map_err(connect_error)?;
                Stream::Tls(Box::new(session))
            }
            (None, TransportArg::Https) => {
                return Err(BenchError::InvalidOption(
                    "--transport https needs --tls-ca-file".into(),
                ))
            }
            _ => Stream::Plain(tcp),
        };
        let delimiting = match endpoint.transport {
            TransportArg::Buffered => Delimiting::Unframed,
            TransportArg::Framed => Delimiting::Framed,
            TransportArg::Http | TransportArg::Https => Delimiting::Http,
        };
        Ok(Connection {
            stream,
            delimiting,
            host: endpoint.addr.clone(),
            protocol: endpoint.protocol,
            write_to_wal: endpoint.durability == DurabilityArg::Sync,
            sequence: 0,
            out: Vec::with_capacity(4096),
            body: Vec::new(),
            received: Vec::with_capacity(READ_CHUNK),
        })
    }

    /// Sends one call and waits for its reply.
    async fn call<R: CallResult>(
        &mut self,
        method: &str,
        args: &(dyn CallArgs + Sync),
    ) -> thrift::Result<R::Answer> {
        self.sequence = self.sequence.wrapping_add(1);
        self.out.clear();
        match self.delimiting {
            Delimiting::Unframed => {
                encode_call(&mut self.out, self.protocol, method, self.sequence, args)?;
            }
            Delimiting::Framed => {
                self.out.extend_from_slice(&[0; 4]);
                encode_call(&mut self.out, self.protocol, method, self.sequence, args)?;
                let length = u32::try_from(self.out.len() - 4).map_err(|_| {
                    transport_error(TransportErrorKind::SizeLimit, "call too large for a frame")
                })?;
                self.out[..4].copy_from_slice(&length.to_be_bytes());
            }
            Delimiting::Http => {
                self.body.clear();
                encode_call(&mut self.body, self.protocol, method, self.sequence, args)?;
                write_http_head(&mut self.out, &self.host, self.body.len())?;
                self.out.extend_from_slice(&self.body);
            }
        }
        self.stream.write_all(&self.out).await?;
        loop {
            if let Some(answer) = self.try_decode::<R>(method)? {
                return answer;
            }
            self.received.reserve(READ_CHUNK);
            if self.stream.read_buf(&mut self.received).await? == 0 {
                return Err(transport_error(
                    TransportErrorKind::EndOfFile,
                    format!("the server closed the connection before answering {method}"),
                ));
            }
        }
    }

    /// The reply to the call in flight, if all of it has arrived.
    fn try_decode<R: CallResult>(
        &mut self,
        method: &str,
    ) -> thrift::Result<Option<thrift::Result<R::Answer>>> {
        let (start, end) = match self.delimiting {
            Delimiting::Framed => {
                let Some(prefix) = self.received.first_chunk::<4>() else {
                    return Ok(None);
                };
                let length = u32::from_be_bytes(*prefix) as usize;
                if length > MAX_FRAME {
                    return Err(transport_error(
                        TransportErrorKind::SizeLimit,
                        format!("reply frame of {length} bytes"),
                    ));
                }
                if self.received.len() < 4 + length {
                    return Ok(None);
                }
                (4, 4 + length)
            }
            Delimiting::Http => match http_body(&self.received, method)? {
                Some(body) => body,
                None => return Ok(None),
            },
            Delimiting::Unframed => (0, self.received.len()),
        };
        let unframed = self.delimiting == Delimiting::Unframed;
        let bytes = self.received.get(start..end).unwrap_or_default();
        match decode_reply::<R>(bytes, self.protocol, method, self.sequence) {
            Ok((answer, used)) => {
                let consumed = if unframed { used } else { end };
                self.received.drain(..consumed);
                Ok(Some(answer))
            }
            Err(e) if unframed && is_incomplete(&e) => Ok(None),
            Err(e) => Err(e),
        }
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
    pub async fn put(
        &mut self,
        table: &[u8],
        row: &[u8],
        cells: &[(&[u8], &[u8])],
    ) -> thrift::Result<()> {
        let args = HbaseMutateRowArgs {
            table_name: table.to_vec(),
            row: row.to_vec(),
            mutations: cells.iter().map(|(c, v)| self.put_mutation(c, v)).collect(),
            attributes: no_attributes(),
        };
        self.call::<HbaseMutateRowResult>("mutateRow", &args).await
    }

    /// Writes one cell at an explicit timestamp.
    pub async fn put_at(
        &mut self,
        table: &[u8],
        row: &[u8],
        column: &[u8],
        value: &[u8],
        timestamp: i64,
    ) -> thrift::Result<()> {
        let args = HbaseMutateRowTsArgs {
            table_name: table.to_vec(),
            row: row.to_vec(),
            mutations: vec![self.put_mutation(column, value)],
            timestamp,
            attributes: no_attributes(),
        };
        self.call::<HbaseMutateRowTsResult>("mutateRowTs", &args)
            .await
    }

    /// Writes the same `cells` to each of `rows` in one mutateRows.
    pub async fn put_rows(
        &mut self,
        table: &[u8],
        rows: &[Vec<u8>],
        cells: &[(&[u8], &[u8])],
    ) -> thrift::Result<()> {
        let args = HbaseMutateRowsArgs {
            table_name: table.to_vec(),
            row_batches: rows
                .iter()
                .map(|r| BatchMutation {
                    row: Some(r.clone()),
                    mutations: Some(cells.iter().map(|(c, v)| self.put_mutation(c, v)).collect()),
                })
                .collect(),
            attributes: no_attributes(),
        };
        self.call::<HbaseMutateRowsResult>("mutateRows", &args)
            .await
    }

    /// Adds `amount` to the counter `column` of `row` with Thrift1's `increment`
    /// (the call a gateway may queue and coalesce; it answers nothing).
    pub async fn increment(
        &mut self,
        table: &[u8],
        row: &[u8],
        column: &[u8],
        amount: i64,
    ) -> thrift::Result<()> {
        let args = HbaseIncrementArgs {
            increment: TIncrement {
                table: Some(table.to_vec()),
                row: Some(row.to_vec()),
                column: Some(column.to_vec()),
                ammount: Some(amount),
            },
        };
        self.call::<HbaseIncrementResult>("increment", &args).await
    }

    /// The newest value of one column; returns its length (0 when absent).
    pub async fn get(&mut self, table: &[u8], row: &[u8], column: &[u8]) -> thrift::Result<usize> {
        let args = HbaseGetArgs {
            table_name: table.to_vec(),
            row: row.to_vec(),
            column: column.to_vec(),
            attributes: no_attributes(),
        };
        let cells = self.call::<HbaseGetResult>("get", &args).await?;
        Ok(cells
            .first()
            .and_then(|c| c.value.as_ref())
            .map_or(0, |value| value.len()))
    }

    /// The newest value of one column of each of `rows` in one getRowsWithColumns:
    /// the length of each value returned (rows without the column are left out, as
    /// HBase leaves them out).
    pub async fn get_rows(
        &mut self,
        table: &[u8],
        rows: &[Vec<u8>],
        column: &[u8],
    ) -> thrift::Result<Vec<usize>> {
        let args = HbaseGetRowsWithColumnsArgs {
            table_name: table.to_vec(),
            rows: rows.to_vec(),
            columns: vec![column.to_vec()],
            attributes: no_attributes(),
        };
        let results = self
            .call::<HbaseGetRowsWithColumnsResult>("getRowsWithColumns", &args)
            .await?;
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
                    .map_or(0, |value| value.len())
            })
            .collect())
    }

    /// The newest value of one column with a timestamp below `before`: its
    /// timestamp, if any.
    pub async fn get_as_of(
        &mut self,
        table: &[u8],
        row: &[u8],
        column: &[u8],
        before: i64,
    ) -> thrift::Result<Option<i64>> {
        let args = HbaseGetVerTsArgs {
            table_name: table.to_vec(),
            row: row.to_vec(),
            column: column.to_vec(),
            timestamp: before,
            num_versions: 1,
            attributes: no_attributes(),
        };
        let cells = self.call::<HbaseGetVerTsResult>("getVerTs", &args).await?;
        Ok(cells.first().and_then(|c| c.timestamp))
    }

    /// The whole row; returns the number of cells.
    pub async fn get_row(&mut self, table: &[u8], row: &[u8]) -> thrift::Result<usize> {
        let args = HbaseGetRowArgs {
            table_name: table.to_vec(),
            row: row.to_vec(),
            attributes: no_attributes(),
        };
        let rows = self.call::<HbaseGetRowResult>("getRow", &args).await?;
        Ok(rows.first().map_or(0, cell_count))
    }

    /// Reads up to `rows` rows from `start` that pass `filter` (a filter-language
    /// string), `batch` rows per call; returns how many rows came back.
    pub async fn scan(
        &mut self,
        table: &[u8],
        start: &[u8],
        rows: u32,
        batch: u32,
        filter: Option<&[u8]>,
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
            filter_string: filter.map(<[u8]>::to_vec),
            batch_size: None,
            sort_columns: None,
            reversed: None,
            cache_blocks: None,
        };
        let open = HbaseScannerOpenWithScanArgs {
            table_name: table.to_vec(),
            scan,
            attributes: no_attributes(),
        };
        let id = self
            .call::<HbaseScannerOpenWithScanResult>("scannerOpenWithScan", &open)
            .await?;
        let mut seen = 0u64;
        let result = loop {
            let want = (u64::from(rows) - seen).min(u64::from(batch));
            if want == 0 {
                break Ok(seen);
            }
            let next = HbaseScannerGetListArgs {
                id,
                nb_rows: want as i32,
            };
            match self
                .call::<HbaseScannerGetListResult>("scannerGetList", &next)
                .await
            {
                Ok(got) if got.is_empty() => break Ok(seen),
                Ok(got) => seen += got.len() as u64,
                Err(e) => break Err(e),
            }
        };
        let closed = self
            .call::<HbaseScannerCloseResult>("scannerClose", &HbaseScannerCloseArgs { id })
            .await;
        let seen = result?;
        closed?;
        Ok(seen)
    }

    /// Runs a major compaction of `table` (Tabula answers once it is done).
    pub async fn major_compact(&mut self, table: &[u8]) -> thrift::Result<()> {
        let args = HbaseMajorCompactArgs {
            table_name_or_region_name: table.to_vec(),
        };
        self.call::<HbaseMajorCompactResult>("majorCompact", &args)
            .await
    }

    /// Creates `table` with `family` keeping `max_versions` versions, unless it exists.
    /// With `fresh`, an existing table is dropped first.
    pub async fn ensure_table(
        &mut self,
        table: &str,
        family: &str,
        max_versions: i32,
        fresh: bool,
    ) -> Result<(), BenchError> {
        let names = self
            .call::<HbaseGetTableNamesResult>("getTableNames", &HbaseGetTableNamesArgs {})
            .await
            .map_err(BenchError::setup)?;
        let exists = names.iter().any(|n| n.as_slice() == table.as_bytes());
        if exists && !fresh {
            return Ok(());
        }
        let table_name = table.as_bytes().to_vec();
        if exists {
            let disable = HbaseDisableTableArgs {
                table_name: table_name.clone(),
            };
            self.call::<HbaseDisableTableResult>("disableTable", &disable)
                .await
                .map_err(BenchError::setup)?;
            let delete = HbaseDeleteTableArgs {
                table_name: table_name.clone(),
            };
            self.call::<HbaseDeleteTableResult>("deleteTable", &delete)
                .await
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
        let create = HbaseCreateTableArgs {
            table_name,
            column_families: vec![family],
        };
        self.call::<HbaseCreateTableResult>("createTable", &create)
            .await
            .map_err(BenchError::setup)
    }
}

fn cell_count(row: &TRowResult) -> usize {
    row.columns.as_ref().map_or(0, BTreeMap::len) + row.sorted_columns.as_ref().map_or(0, Vec::len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_thrift::hbase::{IOError, TCell};

    /// A reply message to `get` call `sequence` carrying `result`, as a server
    /// writes it.
    fn reply(protocol: ProtocolArg, sequence: i32, result: &HbaseGetResult) -> Vec<u8> {
        let mut out = Vec::new();
        let write = |o: &mut dyn TOutputProtocol| -> thrift::Result<()> {
            o.write_message_begin(&TMessageIdentifier::new(
                "get",
                TMessageType::Reply,
                sequence,
            ))?;
            result.write_to_out_protocol(o)?;
            o.write_message_end()?;
            o.flush()
        };
        match protocol {
            ProtocolArg::Binary => write(&mut TBinaryOutputProtocol::new(&mut out, true)),
            ProtocolArg::Compact => write(&mut TCompactOutputProtocol::new(&mut out)),
        }
        .expect("encode a reply");
        out
    }

    fn cells() -> HbaseGetResult {
        HbaseGetResult {
            result_value: Some(vec![TCell {
                value: Some(vec![7; 1000].into()),
                timestamp: Some(42),
            }]),
            io: None,
        }
    }

    #[test]
    fn an_http_response_is_cut_at_its_content_length() {
        let body = reply(ProtocolArg::Binary, 3, &cells());
        let mut response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-thrift\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        let head = response.len();
        response.extend_from_slice(&body);
        for cut in 0..response.len() {
            let part = response.get(..cut).expect("prefix");
            assert_eq!(
                http_body(part, "get").expect("incomplete"),
                None,
                "cut at {cut}"
            );
        }
        let (start, end) = http_body(&response, "get")
            .expect("parsed")
            .expect("complete");
        assert_eq!((start, end), (head, response.len()));
        let (answer, _) =
            decode_reply::<HbaseGetResult>(&response[start..end], ProtocolArg::Binary, "get", 3)
                .expect("decoded");
        assert_eq!(answer.expect("cells").len(), 1);
    }

    #[test]
    fn an_http_error_status_or_a_head_without_length_fails_the_call() {
        let refused = b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 0\r\n\r\n";
        let err = http_body(refused, "mutateRow").expect_err("413");
        assert!(err.to_string().contains("413"), "{err}");
        let no_length = b"HTTP/1.1 200 OK\r\n\r\n";
        assert!(http_body(no_length, "get").is_err());
        let endless = vec![b'x'; MAX_HTTP_HEAD + 1];
        assert!(http_body(&endless, "get").is_err());
    }

    #[test]
    fn an_http_call_carries_its_length_and_host() {
        let mut out = Vec::new();
        write_http_head(&mut out, "127.0.0.1:9090", 42).expect("head");
        let head = String::from_utf8(out).expect("text");
        assert!(head.starts_with("POST / HTTP/1.1\r\n"), "{head}");
        assert!(head.contains("Host: 127.0.0.1:9090\r\n"), "{head}");
        assert!(head.contains("Content-Length: 42\r\n"), "{head}");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
    }

    #[test]
    fn a_reply_decodes_to_its_answer_and_length() {
        for protocol in [ProtocolArg::Binary, ProtocolArg::Compact] {
            let mut bytes = reply(protocol, 9, &cells());
            let length = bytes.len();
            // Bytes of the next message must not be consumed.
            bytes.extend_from_slice(&[1, 2, 3]);
            let (answer, used) =
                decode_reply::<HbaseGetResult>(&bytes, protocol, "get", 9).expect("decodes");
            assert_eq!(used, length);
            let cells = answer.expect("the call succeeded");
            assert_eq!(cells.len(), 1);
            assert_eq!(cells[0].timestamp, Some(42));
            assert_eq!(cells[0].value.as_ref().map(|value| value.len()), Some(1000));
        }
    }

    #[test]
    fn every_truncated_reply_asks_for_more_bytes() {
        for protocol in [ProtocolArg::Binary, ProtocolArg::Compact] {
            let bytes = reply(protocol, 3, &cells());
            for cut in 0..bytes.len() {
                match decode_reply::<HbaseGetResult>(&bytes[..cut], protocol, "get", 3) {
                    Err(e) => assert!(is_incomplete(&e), "cut at {cut}: {e}"),
                    Ok(_) => panic!("a reply cut at {cut} of {} decoded", bytes.len()),
                }
            }
        }
    }

    #[test]
    fn the_declared_exception_is_the_calls_error() {
        let failed = HbaseGetResult {
            result_value: None,
            io: Some(IOError::new("no such table".to_string(), false)),
        };
        let bytes = reply(ProtocolArg::Binary, 1, &failed);
        let (answer, _) =
            decode_reply::<HbaseGetResult>(&bytes, ProtocolArg::Binary, "get", 1).expect("decodes");
        match answer {
            Err(thrift::Error::User(e)) => assert!(format!("{e:?}").contains("no such table")),
            other => panic!("expected the IOError, got {other:?}"),
        }
    }

    #[test]
    fn an_application_exception_is_the_calls_error() {
        let mut bytes = Vec::new();
        {
            let mut o = TBinaryOutputProtocol::new(&mut bytes, true);
            o.write_message_begin(&TMessageIdentifier::new("get", TMessageType::Exception, 5))
                .expect("header");
            let e = ApplicationError::new(ApplicationErrorKind::InternalError, "boom");
            thrift::Error::write_application_error_to_out_protocol(&e, &mut o).expect("body");
            o.write_message_end().expect("end");
        }
        let (answer, used) =
            decode_reply::<HbaseGetResult>(&bytes, ProtocolArg::Binary, "get", 5).expect("decodes");
        assert_eq!(used, bytes.len());
        match answer {
            Err(thrift::Error::Application(e)) => {
                assert_eq!(e.kind, ApplicationErrorKind::InternalError);
                assert_eq!(e.message, "boom");
            }
            other => panic!("expected the exception, got {other:?}"),
        }
    }

    #[test]
    fn a_reply_to_another_call_is_refused() {
        let bytes = reply(ProtocolArg::Binary, 4, &cells());
        for (method, sequence) in [("get", 5), ("getRow", 4)] {
            match decode_reply::<HbaseGetResult>(&bytes, ProtocolArg::Binary, method, sequence) {
                Err(thrift::Error::Application(e)) => {
                    assert_eq!(e.kind, ApplicationErrorKind::BadSequenceId)
                }
                Err(e) => panic!("expected a bad sequence id, got {e}"),
                Ok(_) => panic!("a reply to get #4 was taken for {method} #{sequence}"),
            }
        }
    }

    #[test]
    fn a_call_encodes_its_method_sequence_and_arguments() {
        let args = HbaseGetArgs {
            table_name: b"t".to_vec(),
            row: b"r".to_vec(),
            column: b"cf:q".to_vec(),
            attributes: no_attributes(),
        };
        for protocol in [ProtocolArg::Binary, ProtocolArg::Compact] {
            let mut out = Vec::new();
            encode_call(&mut out, protocol, "get", 77, &args).expect("encodes");
            let mut cursor = Cursor::new(&out[..]);
            let read =
                |i: &mut dyn TInputProtocol| -> thrift::Result<(TMessageIdentifier, HbaseGetArgs)> {
                    let header = i.read_message_begin()?;
                    let decoded = HbaseGetArgs::read_from_in_protocol(i)?;
                    i.read_message_end()?;
                    Ok((header, decoded))
                };
            let (header, decoded) = match protocol {
                ProtocolArg::Binary => read(&mut TBinaryInputProtocol::new(&mut cursor, true)),
                ProtocolArg::Compact => read(&mut TCompactInputProtocol::new(&mut cursor)),
            }
            .expect("decodes");
            assert_eq!(header.name, "get");
            assert_eq!(header.message_type, TMessageType::Call);
            assert_eq!(header.sequence_number, 77);
            assert_eq!(decoded, args);
            assert_eq!(cursor.position() as usize, out.len());
        }
    }
}
