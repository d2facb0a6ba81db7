package tabula.compat;

import static tabula.compat.Assert.check;
import static tabula.compat.Assert.eq;
import static tabula.compat.Assert.expect;
import static tabula.compat.Assert.expectApp;
import static tabula.compat.Bytes.bb;
import static tabula.compat.Bytes.str;
import static tabula.compat.T2.createTable;
import static tabula.compat.T2.cv;
import static tabula.compat.T2.family;
import static tabula.compat.T2.name;
import static tabula.compat.T2.names;
import static tabula.compat.T2.put;
import static tabula.compat.T2.rows;
import static tabula.compat.T2.tget;
import static tabula.compat.T2.tn;
import static tabula.compat.T2.values;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.thrift.TApplicationException;
import tabula.compat.thrift2.TAccessControlEntity;
import tabula.compat.thrift2.TBloomFilterType;
import tabula.compat.thrift2.TColumnFamilyDescriptor;
import tabula.compat.thrift2.TCompressionAlgorithm;
import tabula.compat.thrift2.TDataBlockEncoding;
import tabula.compat.thrift2.THRegionLocation;
import tabula.compat.thrift2.TDelete;
import tabula.compat.thrift2.TIOError;
import tabula.compat.thrift2.TKeepDeletedCells;
import tabula.compat.thrift2.TLogQueryFilter;
import tabula.compat.thrift2.TNamespaceDescriptor;
import tabula.compat.thrift2.TOnlineLogRecord;
import tabula.compat.thrift2.TPermissionScope;
import tabula.compat.thrift2.TScan;
import tabula.compat.thrift2.TServerName;
import tabula.compat.thrift2.TTableDescriptor;
import tabula.compat.thrift2.TTableName;
import tabula.compat.thrift2.TTimeRange;

/** Thrift2 admin checks: tables, families, regions, namespaces, logs, permissions. */
final class Thrift2AdminChecks {
    private Thrift2AdminChecks() {}

    static Map<String, TColumnFamilyDescriptor> families(TTableDescriptor d) {
        Map<String, TColumnFamilyDescriptor> out = new TreeMap<>();
        if (d.getColumns() != null) {
            for (TColumnFamilyDescriptor f : d.getColumns()) out.put(str(f.getName()), f);
        }
        return out;
    }

    /** Region key ranges as "start..end". */
    static List<String> ranges(List<THRegionLocation> locations) {
        List<String> out = new ArrayList<>();
        for (THRegionLocation l : locations) out.add(range(l));
        Collections.sort(out, (a, b) -> {
            // Sort by start key, the first region ("" start) first.
            return a.substring(0, a.indexOf("..")).compareTo(b.substring(0, b.indexOf("..")));
        });
        return out;
    }

    static String range(THRegionLocation l) {
        byte[] start = l.getRegionInfo().getStartKey();
        byte[] end = l.getRegionInfo().getEndKey();
        return (start == null ? "" : str(start)) + ".." + (end == null ? "" : str(end));
    }

    /** Creates a table split at {@code splits} with family cf1. */
    static String createSplit(Ctx c, String... splits) throws Exception {
        String t = c.table();
        T2.createTable(c.t2(), tn(t), List.of(splits), family("cf1", 3));
        return t;
    }

    static void register(Suite s) {
        s.thrift2("t2.createTable.descriptor_roundtrip", c -> {
            String t = c.table();
            TColumnFamilyDescriptor cf1 = family("cf1", 4);
            cf1.setTimeToLive(3600);
            cf1.setInMemory(true);
            cf1.setBloomnFilterType(TBloomFilterType.ROWCOL);
            cf1.setCompressionType(TCompressionAlgorithm.NONE);
            TColumnFamilyDescriptor cf2 = new TColumnFamilyDescriptor(bb("cf2"));
            T2.createTable(c.t2(), tn(t), List.of(), cf1, cf2);
            TTableDescriptor d = c.t2().getTableDescriptor(tn(t));
            eq("tableName", "default:" + t, name(d.getTableName()));
            check(d.getTableName().isSetNs(), "the server sets TTableName.ns on replies");
            Map<String, TColumnFamilyDescriptor> f = families(d);
            eq("families", List.of("cf1", "cf2"), new ArrayList<>(f.keySet()));
            TColumnFamilyDescriptor g1 = f.get("cf1");
            eq("cf1 maxVersions", 4, g1.getMaxVersions());
            eq("cf1 timeToLive", 3600, g1.getTimeToLive());
            eq("cf1 inMemory", true, g1.isInMemory());
            eq("cf1 bloom filter", TBloomFilterType.ROWCOL, g1.getBloomnFilterType());
            eq("cf1 compression", TCompressionAlgorithm.NONE, g1.getCompressionType());
            TColumnFamilyDescriptor g2 = f.get("cf2");
            eq("cf2 maxVersions (HBase default 1)", 1, g2.getMaxVersions());
            eq("cf2 timeToLive (forever)", Integer.MAX_VALUE, g2.getTimeToLive());
            eq("cf2 inMemory", false, g2.isInMemory());
        });

        s.thrift2("t2.createTable.settings_read_back_as_written", c -> {
            String t = c.table();
            TColumnFamilyDescriptor cf1 = family("cf1", 3);
            cf1.setBlockSize(16384);
            cf1.setDataBlockEncoding(TDataBlockEncoding.FAST_DIFF);
            cf1.setScope(1);
            cf1.setCacheDataOnWrite(true);
            cf1.setConfiguration(Map.of("hbase.hstore.blockingStoreFiles", "20"));
            TTableDescriptor desc = new TTableDescriptor(tn(t));
            desc.setColumns(List.of(cf1));
            desc.setAttributes(Map.of(bb("MAX_FILESIZE"), bb("10737418240"), bb("OWNER"), bb("ops")));
            c.t2().createTable(desc, List.of());
            TTableDescriptor d = c.t2().getTableDescriptor(tn(t));
            Map<String, String> attributes = new TreeMap<>();
            for (Map.Entry<java.nio.ByteBuffer, java.nio.ByteBuffer> e : d.getAttributes().entrySet()) {
                attributes.put(str(e.getKey()), str(e.getValue()));
            }
            eq("table attributes", Map.of("MAX_FILESIZE", "10737418240", "OWNER", "ops"), attributes);
            TColumnFamilyDescriptor g1 = families(d).get("cf1");
            eq("cf1 blockSize", 16384, g1.getBlockSize());
            eq("cf1 dataBlockEncoding", TDataBlockEncoding.FAST_DIFF, g1.getDataBlockEncoding());
            eq("cf1 scope", 1, g1.getScope());
            eq("cf1 cacheDataOnWrite", true, g1.isCacheDataOnWrite());
            eq("cf1 configuration", Map.of("hbase.hstore.blockingStoreFiles", "20"), g1.getConfiguration());
            TTableDescriptor small = new TTableDescriptor(tn(c.table()));
            small.setColumns(List.of(family("cf1", 1)));
            small.setAttributes(Map.of(bb("MAX_FILESIZE"), bb("1024")));
            expect(TIOError.class, "a MAX_FILESIZE under 2 MB", () -> c.t2().createTable(small, List.of()));
        });

        s.thrift2("t2.createTable.min_versions_and_keep_deleted_cells", c -> {
            String t = c.table();
            TColumnFamilyDescriptor cf1 = family("cf1", 5);
            cf1.setTimeToLive(3600);
            cf1.setMinVersions(1);
            cf1.setKeepDeletedCells(TKeepDeletedCells.TRUE);
            T2.createTable(c.t2(), tn(t), List.of(), cf1);
            TColumnFamilyDescriptor g1 = families(c.t2().getTableDescriptor(tn(t))).get("cf1");
            eq("cf1 minVersions", 1, g1.getMinVersions());
            eq("cf1 keepDeletedCells", TKeepDeletedCells.TRUE, g1.getKeepDeletedCells());
            long now = System.currentTimeMillis();
            put(c.t2(), t, "r", cv("cf1", "q", "fresh", now));
            TDelete d = new TDelete(bb("r"));
            d.setTimestamp(now + 1);
            c.t2().deleteSingle(bb(t), d);
            eq("after the delete", List.of(), values(c.t2().get(bb(t), tget("r"))));
            tabula.compat.thrift2.TGet asOf = tget("r");
            asOf.setTimeRange(new TTimeRange(0, now + 1));
            eq("as of before the delete", List.of("cf1:q=fresh"), values(c.t2().get(bb(t), asOf)));
            TColumnFamilyDescriptor bad = family("cf2", 2);
            bad.setMinVersions(3);
            expect(TIOError.class, "minVersions above maxVersions",
                    () -> T2.createTable(c.t2(), tn(c.table()), List.of(), bad));
        });

        s.thrift2("t2.createTable.default_family_keeps_one_version", c -> {
            String t = c.table();
            T2.createTable(c.t2(), tn(t), List.of(), new TColumnFamilyDescriptor(bb("cf1")));
            for (long ts : new long[] {10, 20, 30}) put(c.t2(), t, "r", cv("cf1", "q", "v" + ts, ts));
            tabula.compat.thrift2.TGet g = tget("r");
            g.setMaxVersions(10);
            eq("versions kept by a family with maxVersions unset", List.of("cf1:q=v30@30"),
                    T2.cells(c.t2().get(bb(t), g)));
        });

        s.thrift2("t2.createTable.existing_is_TIOError", c -> {
            String t = createTable(c);
            expect(TIOError.class, "createTable of an existing table",
                    () -> T2.createTable(c.t2(), tn(t), List.of(), family("x", 1)));
            eq("original families kept", List.of("cf1", "cf2"),
                    new ArrayList<>(families(c.t2().getTableDescriptor(tn(t))).keySet()));
        });

        s.thrift2("t2.createTable.missing_namespace_is_TIOError", c -> {
            String ns = c.namespace();
            expect(TIOError.class, "createTable in namespace " + ns + " (never created)",
                    () -> T2.createTable(c.t2(), tn(ns, "t"), List.of(), family("cf1", 1)));
        });

        s.thrift2("t2.createTable.no_families_is_TIOError", c -> {
            String t = c.table();
            expect(TIOError.class, "createTable without column families",
                    () -> c.t2().createTable(new TTableDescriptor(tn(t)), null));
            eq("table not created", false, c.t2().tableExists(tn(t)));
        });

        s.thrift2("t2.createTable.split_keys_and_region_locations", c -> {
            String t = createSplit(c, "g", "p");
            List<THRegionLocation> all = c.t2().getAllRegionLocations(bb(t));
            eq("regions", List.of("..g", "g..p", "p.."), ranges(all));
            for (THRegionLocation l : all) {
                eq("regionInfo.tableName", t, str(l.getRegionInfo().getTableName()));
                String host = l.getServerName().getHostName();
                check(host != null && !host.isEmpty(), "serverName.hostName must be set");
                check(l.getServerName().isSetStartCode() && l.getServerName().getStartCode() > 0,
                        "serverName.startCode must be the server's start time");
            }
            eq("region of 'h'", "g..p", range(c.t2().getRegionLocation(bb(t), bb("h"), false)));
            eq("region of 'a'", "..g", range(c.t2().getRegionLocation(bb(t), bb("a"), false)));
            eq("region of 'g' (start key inclusive)", "g..p", range(c.t2().getRegionLocation(bb(t), bb("g"), false)));
            eq("region of 'zz' with reload", "p..", range(c.t2().getRegionLocation(bb(t), bb("zz"), true)));
            for (String r : new String[] {"z", "a", "h", "p"}) put(c.t2(), t, r, cv("cf1", "q", r));
            eq("a scan crosses regions in key order", List.of("a", "h", "p", "z"),
                    rows(Thrift2ScanChecks.scan(c, t, new TScan())));
        });

        s.thrift2("t2.regionLocations.unsplit_and_missing_table", c -> {
            String t = createTable(c);
            eq("regions of an unsplit table", List.of(".."), ranges(c.t2().getAllRegionLocations(bb(t))));
            String missing = c.table();
            expect(TIOError.class, "getAllRegionLocations of a missing table",
                    () -> c.t2().getAllRegionLocations(bb(missing)));
            expect(TIOError.class, "getRegionLocation of a missing table",
                    () -> c.t2().getRegionLocation(bb(missing), bb("r"), false));
        });

        s.thrift2("t2.tableExists", c -> {
            String t = createTable(c);
            eq("existing table", true, c.t2().tableExists(tn(t)));
            eq("existing table as default:t", true, c.t2().tableExists(tn("default", t)));
            eq("missing table", false, c.t2().tableExists(tn(c.table())));
            eq("table in a missing namespace", false, c.t2().tableExists(tn(c.namespace(), t)));
        });

        s.thrift2("t2.enable_disable.states", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "1"));
            TTableName n = tn(t);
            eq("isTableEnabled", true, c.t2().isTableEnabled(n));
            eq("isTableDisabled", false, c.t2().isTableDisabled(n));
            eq("isTableAvailable", true, c.t2().isTableAvailable(n));
            expect(TIOError.class, "enableTable of an enabled table", () -> c.t2().enableTable(n));
            c.t2().disableTable(n);
            eq("isTableEnabled after disable", false, c.t2().isTableEnabled(n));
            eq("isTableDisabled after disable", true, c.t2().isTableDisabled(n));
            eq("isTableAvailable after disable", false, c.t2().isTableAvailable(n));
            expect(TIOError.class, "get on a disabled table", () -> c.t2().get(bb(t), tget("r")));
            expect(TIOError.class, "put on a disabled table", () -> put(c.t2(), t, "r", cv("cf1", "a", "2")));
            expect(TIOError.class, "disableTable of a disabled table", () -> c.t2().disableTable(n));
            c.t2().enableTable(n);
            eq("isTableEnabled after enable", true, c.t2().isTableEnabled(n));
            eq("data kept", List.of("cf1:a=1"), values(c.t2().get(bb(t), tget("r"))));
            expect(TIOError.class, "isTableEnabled of a missing table", () -> c.t2().isTableEnabled(tn(c.table())));
        });

        s.thrift2("t2.isTableAvailableWithSplit", c -> {
            String t = createSplit(c, "m");
            eq("with the table's split keys", true, c.t2().isTableAvailableWithSplit(tn(t), T2.bbs(List.of("m"))));
            eq("with other split keys", false, c.t2().isTableAvailableWithSplit(tn(t), T2.bbs(List.of("c", "x"))));
        });

        s.thrift2("t2.deleteTable.needs_disabled", c -> {
            String t = createTable(c);
            TTableName n = tn(t);
            expect(TIOError.class, "deleteTable of an enabled table", () -> c.t2().deleteTable(n));
            eq("still exists", true, c.t2().tableExists(n));
            c.t2().disableTable(n);
            c.t2().deleteTable(n);
            eq("tableExists after delete", false, c.t2().tableExists(n));
            expect(TIOError.class, "getTableDescriptor of a deleted table", () -> c.t2().getTableDescriptor(n));
            expect(TIOError.class, "deleteTable of a missing table", () -> c.t2().deleteTable(n));
        });

        s.thrift2("t2.truncateTable.preserveSplits", c -> {
            String t = createSplit(c, "m");
            TTableName n = tn(t);
            for (String r : new String[] {"a", "z"}) put(c.t2(), t, r, cv("cf1", "q", r));
            expect(TIOError.class, "truncateTable of an enabled table", () -> c.t2().truncateTable(n, true));
            c.t2().disableTable(n);
            c.t2().truncateTable(n, true);
            eq("enabled after truncate", true, c.t2().isTableEnabled(n));
            eq("rows after truncate", List.of(), rows(Thrift2ScanChecks.scan(c, t, new TScan())));
            eq("regions with preserveSplits", List.of("..m", "m.."), ranges(c.t2().getAllRegionLocations(bb(t))));
            put(c.t2(), t, "b", cv("cf1", "q", "again"));
            eq("writable after truncate", List.of("cf1:q=again"), values(c.t2().get(bb(t), tget("b"))));
            c.t2().disableTable(n);
            c.t2().truncateTable(n, false);
            eq("regions without preserveSplits", List.of(".."), ranges(c.t2().getAllRegionLocations(bb(t))));
            eq("families kept", List.of("cf1"), new ArrayList<>(families(c.t2().getTableDescriptor(n)).keySet()));
        });

        s.thrift2("t2.getTableDescriptors.several", c -> {
            String a = createTable(c);
            String b = c.table();
            T2.createTable(c.t2(), tn(b), List.of(), family("x", 2));
            List<TTableDescriptor> ds = c.t2().getTableDescriptors(List.of(tn(a), tn(b)));
            Map<String, List<String>> got = new TreeMap<>();
            for (TTableDescriptor d : ds) got.put(name(d.getTableName()), new ArrayList<>(families(d).keySet()));
            Map<String, List<String>> want = new TreeMap<>();
            want.put("default:" + a, List.of("cf1", "cf2"));
            want.put("default:" + b, List.of("x"));
            eq("descriptors", want, got);
        });

        s.thrift2("t2.byPattern.full_match_regex", c -> {
            String base = c.table();
            String a = base + "_a";
            String ab = base + "_ab";
            T2.createTable(c.t2(), tn(a), List.of(), family("cf1", 1));
            T2.createTable(c.t2(), tn(ab), List.of(), family("cf1", 1));
            eq("getTableNamesByPattern(" + a + ") matches the whole name", List.of("default:" + a),
                    sorted(names(c.t2().getTableNamesByPattern(a, false))));
            eq("getTableNamesByPattern(" + base + ".*)", List.of("default:" + a, "default:" + ab),
                    sorted(names(c.t2().getTableNamesByPattern(base + ".*", false))));
            List<String> ds = new ArrayList<>();
            for (TTableDescriptor d : c.t2().getTableDescriptorsByPattern(base + ".*", false)) {
                ds.add(name(d.getTableName()));
            }
            eq("getTableDescriptorsByPattern(" + base + ".*)", List.of("default:" + a, "default:" + ab), sorted(ds));
        });

        s.thrift2("t2.byPattern.default_namespace_prefix", c -> {
            // HBase also tries a default-namespace table's name as "default:NAME".
            String a = createTable(c);
            eq("getTableNamesByPattern(default:" + a + ")", List.of("default:" + a),
                    names(c.t2().getTableNamesByPattern("default:" + a, false)));
        });

        s.thrift2("t2.byPattern.default_namespace_prefix_descriptors", c -> {
            String a = createTable(c);
            eq("getTableDescriptorsByPattern(default:" + a + ") count", 1,
                    c.t2().getTableDescriptorsByPattern("default:" + a, false).size());
        });

        s.thrift2("t2.byPattern.java_regex_syntax", c -> {
            // Patterns are java.util.regex patterns (lookahead included).
            String base = c.table();
            T2.createTable(c.t2(), tn(base + "_keep"), List.of(), family("cf1", 1));
            T2.createTable(c.t2(), tn(base + "_skip"), List.of(), family("cf1", 1));
            eq("getTableNamesByPattern with a negative lookahead", List.of("default:" + base + "_keep"),
                    names(c.t2().getTableNamesByPattern(base + "_(?!skip).*", false)));
        });

        s.thrift2("t2.byPattern.invalid_regex_is_INTERNAL_ERROR", c -> {
            // HBase compiles the pattern in the Thrift handler; PatternSyntaxException is
            // unchecked and escapes as INTERNAL_ERROR.
            expectApp(TApplicationException.INTERNAL_ERROR, "getTableNamesByPattern(\"(\")",
                    () -> c.t2().getTableNamesByPattern("(", false));
            eq("connection usable", true, c.t2().listNamespaces().contains("default"));
        });

        s.thrift2("t2.byPattern.null_regex_lists_all", c -> {
            String a = createTable(c);
            List<String> all = names(c.t2().getTableNamesByPattern(null, false));
            check(all.contains("default:" + a), "getTableNamesByPattern(null) lacks " + a);
            for (String n : all) check(!n.startsWith("hbase:"), "system table listed with includeSysTables=false: " + n);
            List<String> ds = new ArrayList<>();
            for (TTableDescriptor d : c.t2().getTableDescriptorsByPattern(null, false)) ds.add(name(d.getTableName()));
            check(ds.contains("default:" + a), "getTableDescriptorsByPattern(null) lacks " + a);
            List<String> withSys = names(c.t2().getTableNamesByPattern(null, true));
            check(withSys.containsAll(all), "includeSysTables=true must list every user table too");
        });

        s.thrift2("t2.byNamespace.tables_of_a_namespace", c -> {
            String ns = c.namespace();
            c.t2().createNamespace(new TNamespaceDescriptor(ns));
            T2.createTable(c.t2(), tn(ns, "one"), List.of(), family("cf1", 1));
            T2.createTable(c.t2(), tn(ns, "two"), List.of(), family("cf1", 1));
            eq("getTableNamesByNamespace", List.of(ns + ":one", ns + ":two"),
                    sorted(names(c.t2().getTableNamesByNamespace(ns))));
            List<String> ds = new ArrayList<>();
            for (TTableDescriptor d : c.t2().getTableDescriptorsByNamespace(ns)) ds.add(name(d.getTableName()));
            eq("getTableDescriptorsByNamespace", List.of(ns + ":one", ns + ":two"), sorted(ds));
            TTableDescriptor one = c.t2().getTableDescriptor(tn(ns, "one"));
            eq("getTableDescriptor(ns:one).tableName", ns + ":one", name(one.getTableName()));
            String plain = createTable(c);
            check(names(c.t2().getTableNamesByNamespace("default")).contains("default:" + plain),
                    "getTableNamesByNamespace(default) lacks " + plain);
            check(!names(c.t2().getTableNamesByNamespace("default")).contains(ns + ":one"),
                    "getTableNamesByNamespace(default) lists " + ns + ":one");
            String missing = c.namespace();
            expect(TIOError.class, "getTableNamesByNamespace of a missing namespace",
                    () -> c.t2().getTableNamesByNamespace(missing));
            expect(TIOError.class, "getTableDescriptorsByNamespace of a missing namespace",
                    () -> c.t2().getTableDescriptorsByNamespace(missing));
        });

        s.thrift2("t2.addColumnFamily", c -> {
            String t = createTable(c);
            c.t2().addColumnFamily(tn(t), family("cf3", 2));
            Map<String, TColumnFamilyDescriptor> f = families(c.t2().getTableDescriptor(tn(t)));
            eq("families", List.of("cf1", "cf2", "cf3"), new ArrayList<>(f.keySet()));
            eq("cf3 maxVersions", 2, f.get("cf3").getMaxVersions());
            put(c.t2(), t, "r", cv("cf3", "a", "new"));
            eq("write to the new family", List.of("cf3:a=new"), values(c.t2().get(bb(t), tget("r"))));
            expect(TIOError.class, "addColumnFamily of an existing family",
                    () -> c.t2().addColumnFamily(tn(t), family("cf1", 1)));
        });

        s.thrift2("t2.modifyColumnFamily", c -> {
            String t = createTable(c);
            TColumnFamilyDescriptor cf1 = family("cf1", 2);
            cf1.setTimeToLive(7200);
            c.t2().modifyColumnFamily(tn(t), cf1);
            TColumnFamilyDescriptor got = families(c.t2().getTableDescriptor(tn(t))).get("cf1");
            eq("cf1 maxVersions", 2, got.getMaxVersions());
            eq("cf1 timeToLive", 7200, got.getTimeToLive());
            // Recent timestamps: with a 2 h TTL, cells stamped near 1970 are expired.
            long now = System.currentTimeMillis();
            for (long i = 1; i <= 3; i++) put(c.t2(), t, "r", cv("cf1", "q", "v" + i, now - 4000 + i * 1000));
            tabula.compat.thrift2.TGet g = tget("r");
            g.setMaxVersions(10);
            eq("versions kept after maxVersions 2", List.of("v3", "v2"), valuesOnly(c.t2().get(bb(t), g)));
            put(c.t2(), t, "old", cv("cf1", "q", "ancient", 10));
            g.setRow(bb("old"));
            eq("a cell far older than the TTL reads as gone", List.of(), T2.cells(c.t2().get(bb(t), g)));
            expect(TIOError.class, "modifyColumnFamily of a missing family",
                    () -> c.t2().modifyColumnFamily(tn(t), family("nofam", 1)));
        });

        s.thrift2("t2.deleteColumnFamily", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "1"), cv("cf2", "b", "2"));
            c.t2().deleteColumnFamily(tn(t), bb("cf2"));
            eq("families", List.of("cf1"), new ArrayList<>(families(c.t2().getTableDescriptor(tn(t))).keySet()));
            eq("row after dropping cf2", List.of("cf1:a=1"), values(c.t2().get(bb(t), tget("r"))));
            expect(TIOError.class, "get of the dropped family",
                    () -> c.t2().get(bb(t), tget("r", T2.col("cf2"))));
            expect(TIOError.class, "deleteColumnFamily of a missing family",
                    () -> c.t2().deleteColumnFamily(tn(t), bb("nofam")));
        });

        s.thrift2("t2.modifyTable.replaces_families", c -> {
            String t = createTable(c);
            TTableDescriptor d = new TTableDescriptor(tn(t));
            d.setColumns(new ArrayList<>(List.of(family("cf1", 7), family("cfx", 1))));
            c.t2().modifyTable(d);
            Map<String, TColumnFamilyDescriptor> f = families(c.t2().getTableDescriptor(tn(t)));
            eq("families after modifyTable", List.of("cf1", "cfx"), new ArrayList<>(f.keySet()));
            eq("cf1 maxVersions", 7, f.get("cf1").getMaxVersions());
            put(c.t2(), t, "r", cv("cfx", "a", "1"));
            eq("write to the added family", List.of("cfx:a=1"), values(c.t2().get(bb(t), tget("r"))));
            TTableDescriptor missing = new TTableDescriptor(tn(c.table()));
            missing.setColumns(new ArrayList<>(List.of(family("cf1", 1))));
            expect(TIOError.class, "modifyTable of a missing table", () -> c.t2().modifyTable(missing));
        });

        s.thrift2("t2.namespace.lifecycle", c -> {
            String ns = c.namespace();
            TNamespaceDescriptor d = new TNamespaceDescriptor(ns);
            d.setConfiguration(new HashMap<>(Map.of("k", "v")));
            c.t2().createNamespace(d);
            TNamespaceDescriptor got = c.t2().getNamespaceDescriptor(ns);
            eq("name", ns, got.getName());
            eq("configuration", Map.of("k", "v"), got.getConfiguration());
            List<String> all = c.t2().listNamespaces();
            check(all.contains(ns) && all.contains("default") && all.contains("hbase"),
                    "listNamespaces must contain default, hbase and " + ns + ", got " + all);
            boolean listed = false;
            for (TNamespaceDescriptor x : c.t2().listNamespaceDescriptors()) listed |= x.getName().equals(ns);
            check(listed, "listNamespaceDescriptors lacks " + ns);
            TNamespaceDescriptor changed = new TNamespaceDescriptor(ns);
            changed.setConfiguration(new HashMap<>(Map.of("k", "v2", "k2", "x")));
            c.t2().modifyNamespace(changed);
            eq("configuration after modifyNamespace", Map.of("k", "v2", "k2", "x"),
                    c.t2().getNamespaceDescriptor(ns).getConfiguration());
            expect(TIOError.class, "createNamespace of an existing namespace",
                    () -> c.t2().createNamespace(new TNamespaceDescriptor(ns)));
            T2.createTable(c.t2(), tn(ns, "t"), List.of(), family("cf1", 1));
            expect(TIOError.class, "deleteNamespace of a namespace with a table", () -> c.t2().deleteNamespace(ns));
            c.t2().disableTable(tn(ns, "t"));
            c.t2().deleteTable(tn(ns, "t"));
            c.t2().deleteNamespace(ns);
            check(!c.t2().listNamespaces().contains(ns), "deleted namespace still listed");
            expect(TIOError.class, "getNamespaceDescriptor of a deleted namespace",
                    () -> c.t2().getNamespaceDescriptor(ns));
            expect(TIOError.class, "modifyNamespace of a missing namespace", () -> c.t2().modifyNamespace(changed));
            expect(TIOError.class, "deleteNamespace of a missing namespace", () -> c.t2().deleteNamespace(ns));
        });

        s.thrift2("t2.namespace.reserved_cannot_be_deleted", c -> {
            expect(TIOError.class, "deleteNamespace(default)", () -> c.t2().deleteNamespace("default"));
            expect(TIOError.class, "deleteNamespace(hbase)", () -> c.t2().deleteNamespace("hbase"));
            eq("default still there", "default", c.t2().getNamespaceDescriptor("default").getName());
        });

        s.thrift2("t2.slowLog.no_servers_is_empty", c -> {
            eq("getSlowLogResponses for no servers", 0,
                    c.t2().getSlowLogResponses(new HashSet<>(), new TLogQueryFilter()).size());
            eq("clearSlowLogResponses for no servers", 0, c.t2().clearSlowLogResponses(new HashSet<>()).size());
        });

        s.thrift2("t2.slowLog.one_server", c -> {
            String t = createTable(c);
            TServerName server = c.t2().getRegionLocation(bb(t), bb("r"), false).getServerName();
            Set<TServerName> one = new HashSet<>(List.of(server));
            List<TOnlineLogRecord> records = c.t2().getSlowLogResponses(one, new TLogQueryFilter());
            check(records.size() <= 10, "more records than the filter's default limit (10): " + records.size());
            eq("one flag per server", 1, c.t2().clearSlowLogResponses(one).size());
        });

        s.thrift2("t2.grant_revoke.return_true", c -> {
            String t = createTable(c);
            TAccessControlEntity table = new TAccessControlEntity("alice", TPermissionScope.TABLE, "RW");
            table.setTableName(t);
            eq("grant on a table", true, c.t2().grant(table));
            eq("revoke on a table", true, c.t2().revoke(table));
            TAccessControlEntity ns = new TAccessControlEntity("bob", TPermissionScope.NAMESPACE, "R");
            ns.setNsName("default");
            eq("grant on a namespace", true, c.t2().grant(ns));
            eq("revoke on a namespace", true, c.t2().revoke(ns));
        });
    }

    static List<String> valuesOnly(tabula.compat.thrift2.TResult r) {
        List<String> out = new ArrayList<>();
        for (tabula.compat.thrift2.TColumnValue v : r.getColumnValues()) out.add(str(v.getValue()));
        return out;
    }

    static List<String> sorted(List<String> in) {
        List<String> out = new ArrayList<>(in);
        Collections.sort(out);
        return out;
    }
}
