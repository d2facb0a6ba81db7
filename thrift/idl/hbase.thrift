// Tabula: the Thrift1 interface, service `Hbase`.
//
// Wire contract: every service, method, argument id, field id, field type,
// requiredness, default value and enum value below matches the newest `Hbase`
// service published by Apache HBase, so HBase Thrift1 clients (happybase,
// generated Java/Python/C++ stubs) talk to Tabula's gateway unchanged.
// Names and comments are Tabula's own. Change nothing here that a client
// could observe on the wire.
//
// Rust code is generated from this file by `thrift/regen.sh` into
// `thrift/src/hbase.rs`; CI checks that the committed output is current.

// Package of the Java stubs built by the Java compatibility suite
// (compat-tests/java); it keeps them apart from the Thrift2 stubs.
namespace java tabula.compat.thrift1

// Row keys, table names, column names and values are raw bytes.
typedef binary Text
typedef binary Bytes

// Handle of an open scanner, issued by the scannerOpen* calls.
typedef i32 ScannerID

// ---------------------------------------------------------------------------
// Data structures
// ---------------------------------------------------------------------------

/** One stored version of a cell: its value and its timestamp (ms). */
struct TCell {
  1: Bytes value,
  2: i64 timestamp
}

/**
 * Column family settings, used by createTable and returned by
 * getColumnDescriptors. `name` is the family followed by a colon.
 */
struct ColumnDescriptor {
  1: Text name,
  2: i32 maxVersions = 3,
  3: string compression = "NONE",
  4: bool inMemory = false,
  5: string bloomFilterType = "NONE",
  6: i32 bloomFilterVectorSize = 0,
  7: i32 bloomFilterNbHashes = 0,
  8: bool blockCacheEnabled = false,
  /** Seconds; 2147483647 (and any value <= 0 on create) means forever. */
  9: i32 timeToLive = 2147483647
}

/** Where one region of a table lives and which key range it covers. */
struct TRegionInfo {
  1: Text startKey,
  2: Text endKey,
  3: i64 id,
  4: Text name,
  /** Always 1. (`i8` and `byte` are the same wire type.) */
  5: i8 version,
  6: Text serverName,
  7: i32 port
}

/**
 * A put (isDelete = false) or a delete (isDelete = true) of one column.
 * `column` is `family` or `family:qualifier`.
 */
struct Mutation {
  1: bool isDelete = false,
  2: Text column,
  3: Text value,
  4: bool writeToWAL = true
}

/** The mutations to apply to one row. */
struct BatchMutation {
  1: Text row,
  2: list<Mutation> mutations
}

/** Add `ammount` (spelling fixed by the wire contract) to a counter cell. */
struct TIncrement {
  1: Text table,
  2: Text row,
  3: Text column,
  4: i64 ammount
}

/** A column name together with one of its cells. */
struct TColumn {
  1: Text columnName,
  2: TCell cell
}

/**
 * One row of a read result. Exactly one of `columns` (keyed
 * `family:qualifier`) or `sortedColumns` (ordered by column) is filled,
 * the latter only for scanners opened with TScan.sortColumns = true.
 */
struct TRowResult {
  1: Text row,
  2: optional map<Text, TCell> columns,
  3: optional list<TColumn> sortedColumns
}

/** Parameters of scannerOpenWithScan; every field may be left unset. */
struct TScan {
  1: optional Text startRow,
  2: optional Text stopRow,
  /** Exclusive upper bound on cell timestamps. */
  3: optional i64 timestamp,
  4: optional list<Text> columns,
  5: optional i32 caching,
  /** A filter expression in HBase's filter language. */
  6: optional Text filterString,
  /** Maximum cells per returned TRowResult; wide rows arrive in pieces. */
  7: optional i32 batchSize,
  8: optional bool sortColumns,
  9: optional bool reversed,
  10: optional bool cacheBlocks
}

/** Append values[i] to columns[i] of one row. */
struct TAppend {
  1: Text table,
  2: Text row,
  3: list<Text> columns,
  4: list<Text> values
}

// ---------------------------------------------------------------------------
// Errors declared by methods (sent inside a REPLY, at their `throws` id)
// ---------------------------------------------------------------------------

/** A storage or cluster failure; canRetry says whether retrying may help. */
exception IOError {
  1: string message,
  2: bool canRetry
}

/** The request was malformed, e.g. an unknown scanner id. */
exception IllegalArgument {
  1: string message
}

/** createTable named a table that already exists. */
exception AlreadyExists {
  1: string message
}

// ---------------------------------------------------------------------------
// Enums and access control
// ---------------------------------------------------------------------------

/** Which interface a gateway port serves. */
enum TThriftServerType {
  ONE = 1,
  TWO = 2
}

/** What a permission applies to. */
enum TPermissionScope {
  TABLE = 0,
  NAMESPACE = 1
}

/**
 * A grant or revoke request. `actions` holds permission letters (R, W, X,
 * C, A); the scope decides whether tableName or nsName is used.
 * Field id 3 is unused.
 */
struct TAccessControlEntity {
  1: required string username,
  2: required TPermissionScope scope,
  4: required string actions,
  5: optional Bytes tableName,
  6: optional string nsName
}

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

/**
 * Thrift1 interface. Every `attributes` argument carries per-operation
 * attributes (clients usually send an empty map). Read calls with a
 * timestamp treat it as an exclusive upper bound; delete calls with a
 * timestamp remove versions at or below it.
 */
service Hbase {

  // --- Table administration -----------------------------------------------

  /** Bring a table online. */
  void enableTable(1: Bytes tableName)
    throws (1: IOError io)

  /** Take a table offline. */
  void disableTable(1: Bytes tableName)
    throws (1: IOError io)

  /** Whether a table is online. */
  bool isTableEnabled(1: Bytes tableName)
    throws (1: IOError io)

  /** Request a compaction of a table or of one region. */
  void compact(1: Bytes tableNameOrRegionName)
    throws (1: IOError io)

  /** Request a major compaction of a table or of one region. */
  void majorCompact(1: Bytes tableNameOrRegionName)
    throws (1: IOError io)

  /** Names of all user tables. */
  list<Text> getTableNames()
    throws (1: IOError io)

  /** Names of all user tables, each with its enabled flag. */
  map<Text, bool> getTableNamesWithIsTableEnabled()
    throws (1: IOError io)

  /** Column families of a table, keyed `family:`. */
  map<Text, ColumnDescriptor> getColumnDescriptors(1: Text tableName)
    throws (1: IOError io)

  /** Regions of a table; an empty list for an unknown table. */
  list<TRegionInfo> getTableRegions(1: Text tableName)
    throws (1: IOError io)

  /** Create a table with the given column families. */
  void createTable(
    1: Text tableName,
    2: list<ColumnDescriptor> columnFamilies
  ) throws (1: IOError io, 2: IllegalArgument ia, 3: AlreadyExists exist)

  /** Drop a disabled table and all its data. */
  void deleteTable(1: Text tableName)
    throws (1: IOError io)

  // --- Point reads --------------------------------------------------------

  /** Newest cell of one column; an empty list when absent. */
  list<TCell> get(
    1: Text tableName,
    2: Text row,
    3: Text column,
    4: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Up to numVersions cells of one column, newest first. */
  list<TCell> getVer(
    1: Text tableName,
    2: Text row,
    3: Text column,
    4: i32 numVersions,
    5: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Like getVer, limited to cells older than `timestamp`. */
  list<TCell> getVerTs(
    1: Text tableName,
    2: Text row,
    3: Text column,
    4: i64 timestamp,
    5: i32 numVersions,
    6: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Newest version of every column of a row; empty list when absent. */
  list<TRowResult> getRow(
    1: Text tableName,
    2: Text row,
    3: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Newest version of the named columns (all when empty) of a row. */
  list<TRowResult> getRowWithColumns(
    1: Text tableName,
    2: Text row,
    3: list<Text> columns,
    4: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Like getRow, limited to cells older than `timestamp`. */
  list<TRowResult> getRowTs(
    1: Text tableName,
    2: Text row,
    3: i64 timestamp,
    4: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Like getRowWithColumns, limited to cells older than `timestamp`. */
  list<TRowResult> getRowWithColumnsTs(
    1: Text tableName,
    2: Text row,
    3: list<Text> columns,
    4: i64 timestamp,
    5: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Several rows in request order; missing rows are left out. */
  list<TRowResult> getRows(
    1: Text tableName,
    2: list<Text> rows,
    3: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** getRows restricted to the named columns. */
  list<TRowResult> getRowsWithColumns(
    1: Text tableName,
    2: list<Text> rows,
    3: list<Text> columns,
    4: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** getRows limited to cells older than `timestamp`. */
  list<TRowResult> getRowsTs(
    1: Text tableName,
    2: list<Text> rows,
    3: i64 timestamp,
    4: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** getRowsWithColumns limited to cells older than `timestamp`. */
  list<TRowResult> getRowsWithColumnsTs(
    1: Text tableName,
    2: list<Text> rows,
    3: list<Text> columns,
    4: i64 timestamp,
    5: map<Text, Text> attributes
  ) throws (1: IOError io)

  // --- Writes -------------------------------------------------------------

  /** Apply puts and deletes to one row at the current time. */
  void mutateRow(
    1: Text tableName,
    2: Text row,
    3: list<Mutation> mutations,
    4: map<Text, Text> attributes
  ) throws (1: IOError io, 2: IllegalArgument ia)

  /** Apply puts and deletes to one row at the given timestamp. */
  void mutateRowTs(
    1: Text tableName,
    2: Text row,
    3: list<Mutation> mutations,
    4: i64 timestamp,
    5: map<Text, Text> attributes
  ) throws (1: IOError io, 2: IllegalArgument ia)

  /** Apply mutations to several rows (not atomic across rows). */
  void mutateRows(
    1: Text tableName,
    2: list<BatchMutation> rowBatches,
    3: map<Text, Text> attributes
  ) throws (1: IOError io, 2: IllegalArgument ia)

  /** mutateRows at the given timestamp. */
  void mutateRowsTs(
    1: Text tableName,
    2: list<BatchMutation> rowBatches,
    3: i64 timestamp,
    4: map<Text, Text> attributes
  ) throws (1: IOError io, 2: IllegalArgument ia)

  /** Add `value` to an 8-byte big-endian counter and return the result. */
  i64 atomicIncrement(
    1: Text tableName,
    2: Text row,
    3: Text column,
    4: i64 value
  ) throws (1: IOError io, 2: IllegalArgument ia)

  /** Delete every version of a column or family. */
  void deleteAll(
    1: Text tableName,
    2: Text row,
    3: Text column,
    4: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Delete versions of a column or family at or below `timestamp`. */
  void deleteAllTs(
    1: Text tableName,
    2: Text row,
    3: Text column,
    4: i64 timestamp,
    5: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Delete a whole row. */
  void deleteAllRow(
    1: Text tableName,
    2: Text row,
    3: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Apply one counter increment. */
  void increment(1: TIncrement increment)
    throws (1: IOError io)

  /** Apply several counter increments. */
  void incrementRows(1: list<TIncrement> increments)
    throws (1: IOError io)

  /** Delete the cells of a row at or below `timestamp`. */
  void deleteAllRowTs(
    1: Text tableName,
    2: Text row,
    3: i64 timestamp,
    4: map<Text, Text> attributes
  ) throws (1: IOError io)

  // --- Scanners -----------------------------------------------------------

  /** Open a scanner described by a TScan. */
  ScannerID scannerOpenWithScan(
    1: Text tableName,
    2: TScan scan,
    3: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Open a scanner from startRow (inclusive; empty = table start). */
  ScannerID scannerOpen(
    1: Text tableName,
    2: Text startRow,
    3: list<Text> columns,
    4: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Open a scanner over [startRow, stopRow). */
  ScannerID scannerOpenWithStop(
    1: Text tableName,
    2: Text startRow,
    3: Text stopRow,
    4: list<Text> columns,
    5: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** Open a scanner over the rows starting with a prefix. */
  ScannerID scannerOpenWithPrefix(
    1: Text tableName,
    2: Text startAndPrefix,
    3: list<Text> columns,
    4: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** scannerOpen limited to cells older than `timestamp`. */
  ScannerID scannerOpenTs(
    1: Text tableName,
    2: Text startRow,
    3: list<Text> columns,
    4: i64 timestamp,
    5: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** scannerOpenWithStop limited to cells older than `timestamp`. */
  ScannerID scannerOpenWithStopTs(
    1: Text tableName,
    2: Text startRow,
    3: Text stopRow,
    4: list<Text> columns,
    5: i64 timestamp,
    6: map<Text, Text> attributes
  ) throws (1: IOError io)

  /** The next row of a scanner; an empty list once it is exhausted. */
  list<TRowResult> scannerGet(1: ScannerID id)
    throws (1: IOError io, 2: IllegalArgument ia)

  /** Up to nbRows further rows; an empty list once exhausted. */
  list<TRowResult> scannerGetList(
    1: ScannerID id,
    2: i32 nbRows
  ) throws (1: IOError io, 2: IllegalArgument ia)

  /** Release a scanner. */
  void scannerClose(1: ScannerID id)
    throws (1: IOError io, 2: IllegalArgument ia)

  // --- Miscellaneous ------------------------------------------------------

  /**
   * The row at or before `row` in a family. Declared by HBase 1.x and
   * dropped later; kept so the gateway decides how to answer it.
   */
  list<TCell> getRowOrBefore(
    1: Text tableName,
    2: Text row,
    3: Text family
  ) throws (1: IOError io)

  /** The region holding a catalog row key (`table,row,...`). */
  TRegionInfo getRegionInfo(1: Text row)
    throws (1: IOError io)

  /** Append to columns of one row; returns the resulting cells. */
  list<TCell> append(1: TAppend append)
    throws (1: IOError io)

  /**
   * Apply `mput` if `column` holds `value` (or, with `value` unset, if the
   * column is absent). Returns whether it was applied. Argument id 4 is
   * unused.
   */
  bool checkAndPut(
    1: Text tableName,
    2: Text row,
    3: Text column,
    5: Text value,
    6: Mutation mput,
    7: map<Text, Text> attributes
  ) throws (1: IOError io, 2: IllegalArgument ia)

  /** ONE on a Thrift1 port. */
  TThriftServerType getThriftServerType()

  /** The cluster's identifier. */
  string getClusterId()

  /** Grant permissions on a table or namespace. */
  bool grant(1: required TAccessControlEntity info)
    throws (1: IOError io)

  /** Revoke permissions on a table or namespace. */
  bool revoke(1: required TAccessControlEntity info)
    throws (1: IOError io)
}
