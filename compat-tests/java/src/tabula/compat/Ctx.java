package tabula.compat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.transport.THttpClient;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import org.apache.thrift.transport.layered.TFramedTransport;
import tabula.compat.thrift1.Hbase;
import tabula.compat.thrift2.THBaseService;

/**
 * What one check works with: its own connections (opened on first use, closed when the
 * check ends) and a source of table and namespace names no other check uses.
 */
final class Ctx implements AutoCloseable {
    private static final AtomicInteger SEQ = new AtomicInteger();
    /** Distinguishes runs against one server, so names never collide between runs. */
    private static final String RUN = Long.toString(System.nanoTime() % 2176782336L, 36);

    final Settings settings;
    private final String tag;
    private final List<TTransport> transports = new ArrayList<>();
    private Hbase.Client t1;
    private THBaseService.Client t2;

    Ctx(Settings settings, String checkName) {
        this.settings = settings;
        // Keep the names short and within HBase's table-name alphabet.
        String t = checkName.replaceAll("[^A-Za-z0-9]+", "_");
        this.tag = t.length() > 40 ? t.substring(t.length() - 40) : t;
    }

    /** This check's Thrift1 client (one connection, reused). */
    Hbase.Client t1() throws TTransportException {
        if (t1 == null) t1 = newT1();
        return t1;
    }

    /** This check's Thrift2 client (one connection, reused). */
    THBaseService.Client t2() throws TTransportException {
        if (t2 == null) t2 = newT2();
        return t2;
    }

    /** A further Thrift1 connection. */
    Hbase.Client newT1() throws TTransportException {
        return new Hbase.Client(open(settings.thrift1Port));
    }

    /** A further Thrift2 connection. */
    THBaseService.Client newT2() throws TTransportException {
        if (settings.thrift2Port == 0) throw new IllegalStateException("no Thrift2 port given");
        return new THBaseService.Client(open(settings.thrift2Port));
    }

    /**
     * A fresh connection to {@code port}, for checks that put clients of both services
     * on one connection (unknown-method checks).
     */
    TProtocol open(int port) throws TTransportException {
        TTransport transport;
        if (settings.transport.startsWith("http")) {
            // HBase's HTTP mode: each message POSTed, as Thrift's THttpClient does.
            THttpClient http = new THttpClient(settings.transport + "://" + settings.host + ":" + port + "/");
            http.setConnectTimeout(settings.timeoutMs);
            http.setReadTimeout(settings.timeoutMs);
            transport = http;
        } else {
            TSocket socket = new TSocket(settings.host, port, settings.timeoutMs);
            transport = settings.transport.equals("framed") ? new TFramedTransport(socket) : socket;
        }
        transport.open();
        transports.add(transport);
        return settings.protocol.equals("compact")
                ? new TCompactProtocol(transport)
                : new TBinaryProtocol(transport);
    }

    /** A table name unique to this run and call, e.g. jc_k3x9_17_t2_get_basic. */
    String table() {
        return "jc_" + RUN + "_" + SEQ.incrementAndGet() + "_" + tag;
    }

    /** A namespace name unique to this run and call. */
    String namespace() {
        return "jcns_" + RUN + "_" + SEQ.incrementAndGet();
    }

    @Override
    public void close() {
        for (TTransport t : transports) {
            try {
                t.close();
            } catch (RuntimeException ignored) {
                // A broken connection is already reported by the check that broke it.
            }
        }
        transports.clear();
    }
}
