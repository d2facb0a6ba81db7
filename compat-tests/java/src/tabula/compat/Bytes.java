package tabula.compat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Byte helpers: Thrift `binary` fields are ByteBuffers in the generated Java code. */
final class Bytes {
    private Bytes() {}

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static ByteBuffer bb(String s) {
        return ByteBuffer.wrap(b(s));
    }

    static ByteBuffer bb(byte[] b) {
        return ByteBuffer.wrap(b);
    }

    /** The remaining bytes of a buffer, without moving its position. */
    static byte[] get(ByteBuffer buf) {
        if (buf == null) return null;
        ByteBuffer d = buf.duplicate();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }

    static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    static String str(ByteBuffer buf) {
        return str(get(buf));
    }

    /** HBase's counter encoding: 8 bytes, big-endian, signed. */
    static byte[] i64(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    static long toI64(byte[] b) {
        if (b == null || b.length != 8) {
            throw new AssertionFailed("expected an 8-byte counter, got " + show(b));
        }
        return ByteBuffer.wrap(b).getLong();
    }

    static byte[] concat(byte[] a, byte[] c) {
        byte[] out = Arrays.copyOf(a, a.length + c.length);
        System.arraycopy(c, 0, out, a.length, c.length);
        return out;
    }

    /** Printable form: ASCII as is, other bytes as \xNN, in quotes. */
    static String show(byte[] b) {
        if (b == null) return "null";
        StringBuilder sb = new StringBuilder("\"");
        for (byte x : b) {
            int v = x & 0xff;
            if (v >= 0x20 && v < 0x7f && v != '"' && v != '\\') {
                sb.append((char) v);
            } else {
                sb.append(String.format("\\x%02x", v));
            }
        }
        return sb.append('"').toString();
    }
}
