package tabula.compat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apache.thrift.TApplicationException;

/** The suite's assertion helper: each failure names what was checked and both values. */
final class Assert {
    private Assert() {}

    /** Code that may throw, run by {@link #expect}. */
    interface Call {
        void run() throws Exception;
    }

    static AssertionFailed fail(String message) {
        throw new AssertionFailed(message);
    }

    static void check(boolean condition, String what) {
        if (!condition) fail(what);
    }

    static void eq(String what, Object expected, Object actual) {
        Object e = normalize(expected);
        Object a = normalize(actual);
        if (!Objects.equals(e, a)) {
            fail(what + ": expected " + render(e) + ", got " + render(a));
        }
    }

    /** Compares bytes with the UTF-8 encoding of {@code expected} (null = absent). */
    static void eqBytes(String what, String expected, byte[] actual) {
        eq(what, expected == null ? null : Bytes.b(expected), actual);
    }

    /** Runs {@code call}, which must throw {@code type}; returns the exception. */
    static <T extends Throwable> T expect(Class<T> type, String what, Call call) {
        try {
            call.run();
        } catch (Throwable t) {
            if (type.isInstance(t)) return type.cast(t);
            if (t instanceof AssertionFailed) throw (AssertionFailed) t;
            fail(what + ": expected " + type.getSimpleName() + ", got " + describe(t));
        }
        throw fail(what + ": expected " + type.getSimpleName() + ", but the call succeeded");
    }

    /** Runs {@code call}, which must fail with a TApplicationException of {@code kind}. */
    static TApplicationException expectApp(int kind, String what, Call call) {
        TApplicationException e = expect(TApplicationException.class, what, call);
        if (e.getType() != kind) {
            fail(what + ": expected TApplicationException type " + appType(kind) + ", got "
                    + describe(e));
        }
        return e;
    }

    static String describe(Throwable t) {
        if (t instanceof TApplicationException) {
            TApplicationException a = (TApplicationException) t;
            return "TApplicationException(type=" + appType(a.getType()) + ", message=" + a.getMessage() + ")";
        }
        if (t instanceof org.apache.thrift.TBase) {
            // Declared Thrift exceptions print their fields.
            return t.getClass().getSimpleName() + t.toString().substring(t.toString().indexOf('('));
        }
        return t.getClass().getName() + ": " + t.getMessage();
    }

    static String appType(int type) {
        String[] names = {"UNKNOWN", "UNKNOWN_METHOD", "INVALID_MESSAGE_TYPE", "WRONG_METHOD_NAME",
            "BAD_SEQUENCE_ID", "MISSING_RESULT", "INTERNAL_ERROR", "PROTOCOL_ERROR",
            "INVALID_TRANSFORM", "INVALID_PROTOCOL", "UNSUPPORTED_CLIENT_TYPE"};
        return type >= 0 && type < names.length ? names[type] + "(" + type + ")" : String.valueOf(type);
    }

    /** byte[] and ByteBuffer compare by content; lists of them element-wise. */
    private static Object normalize(Object o) {
        if (o instanceof ByteBuffer) return new Blob(Bytes.get((ByteBuffer) o));
        if (o instanceof byte[]) return new Blob((byte[]) o);
        if (o instanceof List) {
            List<Object> out = new ArrayList<>();
            for (Object x : (List<?>) o) out.add(normalize(x));
            return out;
        }
        return o;
    }

    private static String render(Object o) {
        if (o instanceof String) return "\"" + o + "\"";
        return String.valueOf(o);
    }

    /** Bytes with content equality and a readable toString. */
    private static final class Blob {
        final byte[] b;

        Blob(byte[] b) {
            this.b = b;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Blob && Arrays.equals(b, ((Blob) other).b);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(b);
        }

        @Override
        public String toString() {
            return Bytes.show(b);
        }
    }
}
