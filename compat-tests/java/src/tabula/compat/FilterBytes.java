package tabula.compat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * TGet/TScan.filterBytes values written field by field, the protobuf messages
 * HBase's Java Thrift2 client (ThriftTable) sends for a filter: an hbase.pb.Filter
 * naming the filter's class around that filter's own message.
 */
final class FilterBytes {
    private FilterBytes() {}

    static final int LESS = 0;
    static final int EQUAL = 2;
    static final int GREATER_OR_EQUAL = 4;

    private static void varint(long v, ByteArrayOutputStream out) {
        while ((v & ~0x7FL) != 0) {
            out.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    static byte[] bytesField(int tag, byte[] value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        varint(((long) tag << 3) | 2, out);
        varint(value.length, out);
        out.writeBytes(value);
        return out.toByteArray();
    }

    static byte[] varintField(int tag, long value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        varint((long) tag << 3, out);
        varint(value, out);
        return out.toByteArray();
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) out.writeBytes(p);
        return out.toByteArray();
    }

    /** hbase.pb.Filter (or hbase.pb.Comparator): class name, serialized message. */
    static byte[] named(String simpleClass, byte[] body) {
        byte[] name = ("org.apache.hadoop.hbase.filter." + simpleClass).getBytes(StandardCharsets.UTF_8);
        return concat(bytesField(1, name), bytesField(2, body));
    }

    static byte[] prefix(String p) {
        return named("PrefixFilter", bytesField(1, Bytes.b(p)));
    }

    static byte[] binary(String value) {
        return named("BinaryComparator", bytesField(1, bytesField(1, Bytes.b(value))));
    }

    /** LongComparator: the value as 8 signed big-endian bytes. */
    static byte[] longValue(long value) {
        byte[] bytes = java.nio.ByteBuffer.allocate(8).putLong(value).array();
        return named("LongComparator", bytesField(1, bytesField(1, bytes)));
    }

    /** A BigDecimal as HBase's Bytes.toBytes(BigDecimal) writes it: the scale, then the unscaled value. */
    static byte[] decimalBytes(java.math.BigDecimal value) {
        byte[] scale = java.nio.ByteBuffer.allocate(4).putInt(value.scale()).array();
        return concat(scale, value.unscaledValue().toByteArray());
    }

    /** BigDecimalComparator. */
    static byte[] decimal(java.math.BigDecimal value) {
        return named("BigDecimalComparator", bytesField(1, bytesField(1, decimalBytes(value))));
    }

    /** BinaryComponentComparator: {@code value} at {@code offset} of the cell's value. */
    static byte[] component(String value, int offset) {
        return named("BinaryComponentComparator", concat(bytesField(1, Bytes.b(value)), varintField(2, offset)));
    }

    /** ColumnPaginationFilter in its column-offset form. */
    static byte[] columnPage(int limit, String columnOffset) {
        return named("ColumnPaginationFilter", concat(varintField(1, limit), bytesField(3, Bytes.b(columnOffset))));
    }

    /** RegexStringComparator with java.util.regex.Pattern flags. */
    static byte[] regex(String pattern, int flags) {
        return named("RegexStringComparator",
                concat(bytesField(1, Bytes.b(pattern)), varintField(2, flags), bytesField(3, Bytes.b("UTF-8"))));
    }

    /** RowFilter, FamilyFilter, QualifierFilter or ValueFilter. */
    static byte[] compare(String filterClass, int op, byte[] comparator) {
        return named(filterClass, bytesField(1, concat(varintField(1, op), bytesField(2, comparator))));
    }

    static byte[] singleColumnValue(String family, String qualifier, int op, byte[] comparator,
                                    boolean filterIfMissing) {
        return named("SingleColumnValueFilter", concat(
                bytesField(1, Bytes.b(family)), bytesField(2, Bytes.b(qualifier)),
                varintField(3, op), bytesField(4, comparator), varintField(5, filterIfMissing ? 1 : 0)));
    }

    /** FilterList: MUST_PASS_ALL when {@code all}, else MUST_PASS_ONE. */
    static byte[] list(boolean all, byte[]... filters) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(varintField(1, all ? 1 : 2));
        for (byte[] f : filters) body.writeBytes(bytesField(2, f));
        return named("FilterList", body.toByteArray());
    }
}
