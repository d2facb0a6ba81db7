package tabula.compat;

import java.util.Map;

/**
 * Where the servers under test listen and how to speak to them. Read from
 * command-line flags, falling back to TABULA_* environment variables.
 */
final class Settings {
    final String host;
    final int thrift1Port;
    /** 0 when no Thrift2 port was given (then only Thrift1 checks can run). */
    final int thrift2Port;
    /** "buffered", "framed", "http" or "https" (HBase's HTTP mode, plain or over TLS). */
    final String transport;
    /** "binary" or "compact". */
    final String protocol;
    final int timeoutMs;
    /** Run only checks whose name contains this (empty = all). */
    final String only;

    private Settings(String host, int thrift1Port, int thrift2Port, String transport,
            String protocol, int timeoutMs, String only) {
        this.host = host;
        this.thrift1Port = thrift1Port;
        this.thrift2Port = thrift2Port;
        this.transport = transport;
        this.protocol = protocol;
        this.timeoutMs = timeoutMs;
        this.only = only;
    }

    static final String USAGE = String.join("\n",
            "usage: java tabula.compat.Main [options]",
            "  --host HOST            server host (env TABULA_HOST, default 127.0.0.1)",
            "  --thrift1 PORT         Thrift1 (Hbase) port (env TABULA_THRIFT1_PORT, default 9090)",
            "  --thrift2 PORT         Thrift2 (THBaseService) port (env TABULA_THRIFT2_PORT);",
            "                         without it the Thrift2 and cross-API checks are skipped",
            "  --variant V            buffered-binary or framed-compact (env TABULA_VARIANT,",
            "                         default buffered-binary); or set --transport/--protocol:",
            "  --transport T          buffered, framed, http or https (env TABULA_TRANSPORT;",
            "                         https trusts what javax.net.ssl.trustStore holds)",
            "  --protocol P           binary or compact (env TABULA_PROTOCOL)",
            "  --timeout-ms N         socket timeout (env TABULA_TIMEOUT_MS, default 30000)",
            "  --only TEXT            run only checks whose name contains TEXT");

    static Settings parse(String[] args, Map<String, String> env) {
        String host = env.getOrDefault("TABULA_HOST", "127.0.0.1");
        String t1 = env.getOrDefault("TABULA_THRIFT1_PORT", "9090");
        String t2 = env.getOrDefault("TABULA_THRIFT2_PORT", "");
        String variant = env.getOrDefault("TABULA_VARIANT", "");
        String transport = env.getOrDefault("TABULA_TRANSPORT", "");
        String protocol = env.getOrDefault("TABULA_PROTOCOL", "");
        String timeout = env.getOrDefault("TABULA_TIMEOUT_MS", "30000");
        String only = "";
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (flag.equals("-h") || flag.equals("--help")) {
                throw new IllegalArgumentException(USAGE);
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("missing value after " + flag + "\n" + USAGE);
            }
            String value = args[++i];
            switch (flag) {
                case "--host": host = value; break;
                case "--thrift1": t1 = value; break;
                case "--thrift2": t2 = value; break;
                case "--variant": variant = value; break;
                case "--transport": transport = value; break;
                case "--protocol": protocol = value; break;
                case "--timeout-ms": timeout = value; break;
                case "--only": only = value; break;
                default:
                    throw new IllegalArgumentException("unknown option " + flag + "\n" + USAGE);
            }
        }
        if (!variant.isEmpty()) {
            int dash = variant.indexOf('-');
            if (dash < 0) {
                throw new IllegalArgumentException("variant must look like TRANSPORT-PROTOCOL, got " + variant);
            }
            if (transport.isEmpty()) transport = variant.substring(0, dash);
            if (protocol.isEmpty()) protocol = variant.substring(dash + 1);
        }
        if (transport.isEmpty()) transport = "buffered";
        if (protocol.isEmpty()) protocol = "binary";
        transport = transport.toLowerCase();
        protocol = protocol.toLowerCase();
        if (!transport.equals("buffered") && !transport.equals("framed")
                && !transport.equals("http") && !transport.equals("https")) {
            throw new IllegalArgumentException(
                    "transport must be buffered, framed, http or https, got " + transport);
        }
        if (transport.startsWith("http") && !protocol.equals("binary")) {
            throw new IllegalArgumentException("HBase's HTTP mode speaks the binary protocol only");
        }
        if (!protocol.equals("binary") && !protocol.equals("compact")) {
            throw new IllegalArgumentException("protocol must be binary or compact, got " + protocol);
        }
        return new Settings(host, port(t1, "Thrift1"), t2.isEmpty() ? 0 : port(t2, "Thrift2"),
                transport, protocol, positive(timeout, "timeout"), only);
    }

    private static int port(String text, String what) {
        int p = positive(text, what + " port");
        if (p > 65535) throw new IllegalArgumentException(what + " port out of range: " + p);
        return p;
    }

    private static int positive(String text, String what) {
        int v;
        try {
            v = Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " must be an integer, got '" + text + "'");
        }
        if (v <= 0) throw new IllegalArgumentException(what + " must be positive, got " + v);
        return v;
    }

    String variant() {
        return transport + "+" + protocol;
    }

    String describe() {
        return "host=" + host + " thrift1=" + thrift1Port
                + " thrift2=" + (thrift2Port == 0 ? "(none)" : String.valueOf(thrift2Port))
                + " transport=" + transport + " protocol=" + protocol;
    }
}
