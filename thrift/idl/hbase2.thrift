// Tabula: the Thrift2 interface, service `THBaseService`.
//
// Wire contract: every service, method, argument id, field id, field type,
// requiredness, default value and enum value below matches the newest
// `THBaseService` published by Apache HBase (plus isTableAvailableWithSplit,
// still served by HBase 2.x), so HBase Thrift2 clients talk to Tabula's
// gateway unchanged. Names and comments are Tabula's own. Change nothing
// here that a client could observe on the wire.
//
// Rust code is generated from this file by `thrift/regen.sh` into
// `thrift/src/hbase2.rs`; CI checks that the committed output is current.
//
// `table` arguments are `namespace:table`, or `table` in the default
// namespace.

// Package of the Java stubs built by the Java compatibility suite
// (compat-tests/java); it keeps them apart from the Thrift1 stubs.
namespace java tabula.compat.thrift2

// ---------------------------------------------------------------------------
// Cells, reads and writes
// ---------------------------------------------------------------------------

/** Timestamps t with minStamp <= t < maxStamp. */
struct TTimeRange {
  1: required i64 minStamp,
  2: required i64 maxStamp
}

/** A family, optionally narrowed to one qualifier (and timestamp). */
struct TColumn {
  1: required binary family,
  2: optional binary qualifier,
  3: optional i64 timestamp
}

/**
 * One cell. `type` is the cell type code on results (4 put, 8 delete,
 * 10 family-version delete, 12 column delete, 14 family delete); `i8` and
 * `byte` are the same wire type.
 */
struct TColumnValue {
  1: required binary family,
  2: required binary qualifier,
  3: required binary value,
  4: optional i64 timestamp,
  5: optional binary tags,
  6: optional i8 type
}

/** A counter column and the amount to add to it. */
struct TColumnIncrement {
  1: required binary family,
  2: required binary qualifier,
  3: optional i64 amount = 1
}

/**
 * One row (or part of one, when `partial`). A missing row has `row` unset
 * and no cells.
 */
struct TResult {
  1: optional binary row,
  2: required list<TColumnValue> columnValues,
  3: optional bool stale = false,
  4: optional bool partial = false
}

/** How a TDelete naming columns removes them. */
enum TDeleteType {
  /** One version of a column. */
  DELETE_COLUMN = 0,
  /** All versions of a column up to the timestamp. */
  DELETE_COLUMNS = 1,
  /** All columns of a family up to the timestamp. */
  DELETE_FAMILY = 2,
  /** All columns of a family at exactly the timestamp. */
  DELETE_FAMILY_VERSION = 3
}

/** How a write is made durable. */
enum TDurability {
  USE_DEFAULT = 0,
  SKIP_WAL = 1,
  ASYNC_WAL = 2,
  SYNC_WAL = 3,
  FSYNC_WAL = 4
}

/** Visibility labels a read is allowed to see. */
struct TAuthorization {
  1: optional list<string> labels
}

/** Visibility expression attached to written cells. */
struct TCellVisibility {
  1: optional string expression
}

/** Whether a read may be served by a region replica. */
enum TConsistency {
  STRONG = 1,
  TIMELINE = 2
}

/**
 * A read of one row. `timestamp` selects exactly that version and wins
 * over `timeRange`; `maxVersions` unset means 1.
 */
struct TGet {
  1: required binary row,
  2: optional list<TColumn> columns,
  3: optional i64 timestamp,
  4: optional TTimeRange timeRange,
  5: optional i32 maxVersions,
  6: optional binary filterString,
  7: optional map<binary, binary> attributes,
  8: optional TAuthorization authorizations,
  9: optional TConsistency consistency,
  10: optional i32 targetReplicaId,
  11: optional bool cacheBlocks,
  12: optional i32 storeLimit,
  13: optional i32 storeOffset,
  14: optional bool existence_only,
  15: optional binary filterBytes
}

/**
 * A write of cells to one row. Cells without a timestamp take
 * `timestamp`, or the server time. Field id 4 is unused.
 */
struct TPut {
  1: required binary row,
  2: required list<TColumnValue> columnValues,
  3: optional i64 timestamp,
  5: optional map<binary, binary> attributes,
  6: optional TDurability durability,
  7: optional TCellVisibility cellVisibility
}

/**
 * A delete in one row: the whole row when `columns` is unset, otherwise
 * the named columns as `deleteType` says. Field id 5 is unused.
 */
struct TDelete {
  1: required binary row,
  2: optional list<TColumn> columns,
  3: optional i64 timestamp,
  4: optional TDeleteType deleteType = TDeleteType.DELETE_COLUMNS,
  6: optional map<binary, binary> attributes,
  7: optional TDurability durability,
  8: optional TCellVisibility cellVisibility
}

/** Counter increments in one row. Field id 3 is unused. */
struct TIncrement {
  1: required binary row,
  2: required list<TColumnIncrement> columns,
  4: optional map<binary, binary> attributes,
  5: optional TDurability durability,
  6: optional TCellVisibility cellVisibility,
  7: optional bool returnResults
}

/** Byte appends to cells of one row. */
struct TAppend {
  1: required binary row,
  2: required list<TColumnValue> columns,
  3: optional map<binary, binary> attributes,
  4: optional TDurability durability,
  5: optional TCellVisibility cellVisibility,
  6: optional bool returnResults
}

/** How a scan reads its files. */
enum TReadType {
  DEFAULT = 1,
  STREAM = 2,
  PREAD = 3
}

/**
 * A scan over [startRow, stopRow). Column timestamps are ignored; use
 * timeRange or colFamTimeRangeMap.
 */
struct TScan {
  1: optional binary startRow,
  2: optional binary stopRow,
  3: optional list<TColumn> columns,
  4: optional i32 caching,
  5: optional i32 maxVersions = 1,
  6: optional TTimeRange timeRange,
  7: optional binary filterString,
  8: optional i32 batchSize,
  9: optional map<binary, binary> attributes,
  10: optional TAuthorization authorizations,
  11: optional bool reversed,
  12: optional bool cacheBlocks,
  13: optional map<binary, TTimeRange> colFamTimeRangeMap,
  14: optional TReadType readType,
  15: optional i32 limit,
  16: optional TConsistency consistency,
  17: optional i32 targetReplicaId,
  18: optional binary filterBytes
}

/** One step of a TRowMutations: a put or a delete. */
union TMutation {
  1: TPut put,
  2: TDelete deleteSingle
}

/** Puts and deletes applied atomically to one row. */
struct TRowMutations {
  1: required binary row,
  2: required list<TMutation> mutations
}

// ---------------------------------------------------------------------------
// Regions and servers
// ---------------------------------------------------------------------------

/** Identity and key range of a region. */
struct THRegionInfo {
  1: required i64 regionId,
  2: required binary tableName,
  3: optional binary startKey,
  4: optional binary endKey,
  5: optional bool offline,
  6: optional bool split,
  7: optional i32 replicaId
}

/** A server process: host, port and start code. */
struct TServerName {
  1: required string hostName,
  2: optional i32 port,
  3: optional i64 startCode
}

/** A region and the server hosting it. */
struct THRegionLocation {
  1: required TServerName serverName,
  2: required THRegionInfo regionInfo
}

/** Comparison applied as `provided value <op> stored value`. */
enum TCompareOperator {
  LESS = 0,
  LESS_OR_EQUAL = 1,
  EQUAL = 2,
  NOT_EQUAL = 3,
  GREATER_OR_EQUAL = 4,
  GREATER = 5,
  NO_OP = 6
}

// ---------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------

/** Bloom filter kind of a column family. */
enum TBloomFilterType {
  NONE = 0,
  ROW = 1,
  ROWCOL = 2,
  ROWPREFIX_FIXED_LENGTH = 3
}

/** Block compression of a column family. */
enum TCompressionAlgorithm {
  LZO = 0,
  GZ = 1,
  NONE = 2,
  SNAPPY = 3,
  LZ4 = 4,
  BZIP2 = 5,
  ZSTD = 6
}

/** Block encoding of a column family (values 1, 5 and 6 are unused). */
enum TDataBlockEncoding {
  NONE = 0,
  PREFIX = 2,
  DIFF = 3,
  FAST_DIFF = 4,
  ROW_INDEX_V1 = 7
}

/** Whether deleted cells stay readable by time-range reads. */
enum TKeepDeletedCells {
  FALSE = 0,
  TRUE = 1,
  TTL = 2
}

/** A table name; `ns` unset means the default namespace. */
struct TTableName {
  1: optional binary ns,
  2: required binary qualifier
}

/** Column family settings (`bloomnFilterType` spelling is part of the contract). */
struct TColumnFamilyDescriptor {
  1: required binary name,
  2: optional map<binary, binary> attributes,
  3: optional map<string, string> configuration,
  4: optional i32 blockSize,
  5: optional TBloomFilterType bloomnFilterType,
  6: optional TCompressionAlgorithm compressionType,
  7: optional i16 dfsReplication,
  8: optional TDataBlockEncoding dataBlockEncoding,
  9: optional TKeepDeletedCells keepDeletedCells,
  10: optional i32 maxVersions,
  11: optional i32 minVersions,
  12: optional i32 scope,
  13: optional i32 timeToLive,
  14: optional bool blockCacheEnabled,
  15: optional bool cacheBloomsOnWrite,
  16: optional bool cacheDataOnWrite,
  17: optional bool cacheIndexesOnWrite,
  18: optional bool compressTags,
  19: optional bool evictBlocksOnClose,
  20: optional bool inMemory
}

/** A table, its column families and table-level settings. */
struct TTableDescriptor {
  1: required TTableName tableName,
  2: optional list<TColumnFamilyDescriptor> columns,
  3: optional map<binary, binary> attributes,
  4: optional TDurability durability
}

/** A namespace and its settings. */
struct TNamespaceDescriptor {
  1: required string name,
  2: optional map<string, string> configuration
}

// ---------------------------------------------------------------------------
// Slow and large request logs
// ---------------------------------------------------------------------------

/** Which request log to query. */
enum TLogType {
  SLOW_LOG = 1,
  LARGE_LOG = 2
}

/** How the criteria of a TLogQueryFilter combine (AND = 0, OR = 1). */
enum TFilterByOperator {
  AND,
  OR
}

/** Selects records of a request log. */
struct TLogQueryFilter {
  1: optional string regionName,
  2: optional string clientAddress,
  3: optional string tableName,
  4: optional string userName,
  5: optional i32 limit = 10,
  6: optional TLogType logType = TLogType.SLOW_LOG,
  7: optional TFilterByOperator filterByOperator = TFilterByOperator.OR
}

/** One recorded slow or large request. */
struct TOnlineLogRecord {
  1: required i64 startTime,
  2: required i32 processingTime,
  3: required i32 queueTime,
  4: required i64 responseSize,
  5: required string clientAddress,
  6: required string serverClass,
  7: required string methodName,
  8: required string callDetails,
  9: required string param,
  10: required string userName,
  11: required i32 multiGetsCount,
  12: required i32 multiMutationsCount,
  13: required i32 multiServiceCalls,
  14: optional string regionName,
  15: optional i64 blockBytesScanned,
  16: optional i64 fsReadTime
}

// ---------------------------------------------------------------------------
// Errors declared by methods (sent inside a REPLY, at their `throws` id)
// ---------------------------------------------------------------------------

/** A storage or cluster failure; canRetry says whether retrying may help. */
exception TIOError {
  1: optional string message,
  2: optional bool canRetry
}

/** The request was malformed, e.g. an unknown scanner id. */
exception TIllegalArgument {
  1: optional string message
}

// ---------------------------------------------------------------------------
// Server type and access control
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
  5: optional string tableName,
  6: optional string nsName
}

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

/**
 * Thrift2 interface. Every method not marked otherwise may raise TIOError.
 * Arguments not marked `required` may be omitted by clients (the compiler
 * rejects `optional` on arguments, so none is written).
 */
service THBaseService {

  // --- Data ---------------------------------------------------------------

  /** Whether the TGet matches at least one cell. */
  bool exists(
    1: required binary table,
    2: required TGet tget
  ) throws (1: TIOError io)

  /** exists for several TGets, answers in request order. */
  list<bool> existsAll(
    1: required binary table,
    2: required list<TGet> tgets
  ) throws (1: TIOError io)

  /** Read one row; a missing row yields an empty TResult. */
  TResult get(
    1: required binary table,
    2: required TGet tget
  ) throws (1: TIOError io)

  /** Read several rows; one TResult per TGet, in request order. */
  list<TResult> getMultiple(
    1: required binary table,
    2: required list<TGet> tgets
  ) throws (1: TIOError io)

  /** Write one TPut. */
  void put(
    1: required binary table,
    2: required TPut tput
  ) throws (1: TIOError io)

  /**
   * Apply `tput` if family:qualifier holds `value` (or, with `value`
   * unset, is absent). Returns whether it was applied.
   */
  bool checkAndPut(
    1: required binary table,
    2: required binary row,
    3: required binary family,
    4: required binary qualifier,
    5: binary value,
    6: required TPut tput
  ) throws (1: TIOError io)

  /** Write several TPuts (not atomic across rows). */
  void putMultiple(
    1: required binary table,
    2: required list<TPut> tputs
  ) throws (1: TIOError io)

  /** Apply one TDelete. */
  void deleteSingle(
    1: required binary table,
    2: required TDelete tdelete
  ) throws (1: TIOError io)

  /** Apply several TDeletes; the returned list is always empty. */
  list<TDelete> deleteMultiple(
    1: required binary table,
    2: required list<TDelete> tdeletes
  ) throws (1: TIOError io)

  /** checkAndPut with a TDelete as the conditional action. */
  bool checkAndDelete(
    1: required binary table,
    2: required binary row,
    3: required binary family,
    4: required binary qualifier,
    5: binary value,
    6: required TDelete tdelete
  ) throws (1: TIOError io)

  /** Increment counters of one row; returns the new cells. */
  TResult increment(
    1: required binary table,
    2: required TIncrement tincrement
  ) throws (1: TIOError io)

  /** Append to cells of one row; returns the new cells. */
  TResult append(
    1: required binary table,
    2: required TAppend tappend
  ) throws (1: TIOError io)

  /** Open a scanner and return its id. */
  i32 openScanner(
    1: required binary table,
    2: required TScan tscan
  ) throws (1: TIOError io)

  /** Up to numRows further rows; an empty list once exhausted. */
  list<TResult> getScannerRows(
    1: required i32 scannerId,
    2: i32 numRows = 1
  ) throws (1: TIOError io, 2: TIllegalArgument ia)

  /** Release a scanner. */
  void closeScanner(1: required i32 scannerId)
    throws (1: TIOError io, 2: TIllegalArgument ia)

  /** Apply puts and deletes to one row atomically. */
  void mutateRow(
    1: required binary table,
    2: required TRowMutations trowMutations
  ) throws (1: TIOError io)

  /** Open a scanner, return its first numRows rows and close it. */
  list<TResult> getScannerResults(
    1: required binary table,
    2: required TScan tscan,
    3: i32 numRows = 1
  ) throws (1: TIOError io)

  /** The region holding `row`. */
  THRegionLocation getRegionLocation(
    1: required binary table,
    2: required binary row,
    3: bool reload
  ) throws (1: TIOError io)

  /** Every region of a table with its server. */
  list<THRegionLocation> getAllRegionLocations(1: required binary table)
    throws (1: TIOError io)

  /**
   * Apply rowMutations atomically if `value <compareOperator> stored`
   * holds (with `value` unset: if the column is absent).
   */
  bool checkAndMutate(
    1: required binary table,
    2: required binary row,
    3: required binary family,
    4: required binary qualifier,
    5: required TCompareOperator compareOperator,
    6: binary value,
    7: required TRowMutations rowMutations
  ) throws (1: TIOError io)

  // --- Tables -------------------------------------------------------------

  /** Descriptor of one table. */
  TTableDescriptor getTableDescriptor(1: required TTableName table)
    throws (1: TIOError io)

  /** Descriptors of several tables. */
  list<TTableDescriptor> getTableDescriptors(
    1: required list<TTableName> tables
  ) throws (1: TIOError io)

  /** Whether a table exists. */
  bool tableExists(1: TTableName tableName)
    throws (1: TIOError io)

  /** Descriptors of tables whose name matches `regex` (unset or empty = all). */
  list<TTableDescriptor> getTableDescriptorsByPattern(
    1: string regex,
    2: required bool includeSysTables
  ) throws (1: TIOError io)

  /** Descriptors of the tables of a namespace. */
  list<TTableDescriptor> getTableDescriptorsByNamespace(
    1: required string name
  ) throws (1: TIOError io)

  /** Names of tables matching `regex` (unset or empty = all). */
  list<TTableName> getTableNamesByPattern(
    1: string regex,
    2: required bool includeSysTables
  ) throws (1: TIOError io)

  /** Names of the tables of a namespace. */
  list<TTableName> getTableNamesByNamespace(1: required string name)
    throws (1: TIOError io)

  /** Create a table, pre-split at splitKeys (n keys give n + 1 regions). */
  void createTable(
    1: required TTableDescriptor desc,
    2: list<binary> splitKeys
  ) throws (1: TIOError io)

  /** Drop a disabled table. */
  void deleteTable(1: required TTableName tableName)
    throws (1: TIOError io)

  /** Remove all rows of a disabled table. */
  void truncateTable(
    1: required TTableName tableName,
    2: required bool preserveSplits
  ) throws (1: TIOError io)

  /** Bring a table online. */
  void enableTable(1: required TTableName tableName)
    throws (1: TIOError io)

  /** Take a table offline. */
  void disableTable(1: required TTableName tableName)
    throws (1: TIOError io)

  /** Whether a table is online. */
  bool isTableEnabled(1: required TTableName tableName)
    throws (1: TIOError io)

  /** Whether a table is offline. */
  bool isTableDisabled(1: required TTableName tableName)
    throws (1: TIOError io)

  /** Whether every region of a table is being served. */
  bool isTableAvailable(1: required TTableName tableName)
    throws (1: TIOError io)

  /**
   * isTableAvailable that also checks the table was split at splitKeys.
   * Served by HBase 2.x, absent from newer interface versions.
   */
  bool isTableAvailableWithSplit(
    1: required TTableName tableName,
    2: list<binary> splitKeys
  ) throws (1: TIOError io)

  /** Add a column family to a table. */
  void addColumnFamily(
    1: required TTableName tableName,
    2: required TColumnFamilyDescriptor column
  ) throws (1: TIOError io)

  /** Remove a column family and its data from a table. */
  void deleteColumnFamily(
    1: required TTableName tableName,
    2: required binary column
  ) throws (1: TIOError io)

  /** Change the settings of a column family. */
  void modifyColumnFamily(
    1: required TTableName tableName,
    2: required TColumnFamilyDescriptor column
  ) throws (1: TIOError io)

  /** Replace a table's descriptor. */
  void modifyTable(1: required TTableDescriptor desc)
    throws (1: TIOError io)

  // --- Namespaces ---------------------------------------------------------

  /** Create a namespace. */
  void createNamespace(1: required TNamespaceDescriptor namespaceDesc)
    throws (1: TIOError io)

  /** Change a namespace's settings. */
  void modifyNamespace(1: required TNamespaceDescriptor namespaceDesc)
    throws (1: TIOError io)

  /** Remove an empty namespace. */
  void deleteNamespace(1: required string name)
    throws (1: TIOError io)

  /** Descriptor of one namespace. */
  TNamespaceDescriptor getNamespaceDescriptor(1: required string name)
    throws (1: TIOError io)

  /** Descriptors of all namespaces. */
  list<TNamespaceDescriptor> listNamespaceDescriptors()
    throws (1: TIOError io)

  /** Names of all namespaces. */
  list<string> listNamespaces()
    throws (1: TIOError io)

  // --- Cluster ------------------------------------------------------------

  /** TWO on a Thrift2 port. Declares no errors. */
  TThriftServerType getThriftServerType()

  /** The cluster's identifier. Declares no errors. */
  string getClusterId()

  /** Slow or large request records of the given servers. */
  list<TOnlineLogRecord> getSlowLogResponses(
    1: set<TServerName> serverNames,
    2: TLogQueryFilter logQueryFilter
  ) throws (1: TIOError io)

  /** Clear the request logs of the given servers; one flag per server. */
  list<bool> clearSlowLogResponses(1: set<TServerName> serverNames)
    throws (1: TIOError io)

  /** Grant permissions on a table or namespace. */
  bool grant(1: required TAccessControlEntity info)
    throws (1: TIOError io)

  /** Revoke permissions on a table or namespace. */
  bool revoke(1: required TAccessControlEntity info)
    throws (1: TIOError io)
}
