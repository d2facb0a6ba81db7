package tabula.compat;

import java.util.ArrayList;
import java.util.List;

/** The registry of checks and the runner that prints one line per check and a summary. */
final class Suite {
    /** A check's body. */
    interface Body {
        void run(Ctx c) throws Exception;
    }

    private static final class Case {
        final String name;
        final boolean needsThrift2;
        final Body body;

        Case(String name, boolean needsThrift2, Body body) {
            this.name = name;
            this.needsThrift2 = needsThrift2;
            this.body = body;
        }
    }

    private final List<Case> cases = new ArrayList<>();

    /** A check that talks to the Thrift1 port only. */
    void thrift1(String name, Body body) {
        add(new Case(name, false, body));
    }

    /** A check that needs the Thrift2 port (it may use the Thrift1 port too). */
    void thrift2(String name, Body body) {
        add(new Case(name, true, body));
    }

    private void add(Case c) {
        for (Case other : cases) {
            if (other.name.equals(c.name)) throw new IllegalStateException("duplicate check " + c.name);
        }
        cases.add(c);
    }

    /** Runs every selected check; returns the number of failures. */
    int run(Settings settings) {
        int passed = 0;
        int skipped = 0;
        List<String> failed = new ArrayList<>();
        for (Case c : cases) {
            if (!settings.only.isEmpty() && !c.name.contains(settings.only)) continue;
            if (c.needsThrift2 && settings.thrift2Port == 0) {
                System.out.println("SKIP " + c.name + " (no Thrift2 port)");
                skipped++;
                continue;
            }
            long start = System.nanoTime();
            String problem = null;
            try (Ctx ctx = new Ctx(settings, c.name)) {
                c.body.run(ctx);
            } catch (AssertionFailed e) {
                problem = e.getMessage() + where(e);
            } catch (Throwable t) {
                problem = "unexpected " + Assert.describe(t) + where(t);
            }
            long ms = (System.nanoTime() - start) / 1_000_000;
            if (problem == null) {
                System.out.println("PASS " + c.name + " (" + ms + " ms)");
                passed++;
            } else {
                // One line per check, even for multi-line server messages.
                String flat = problem.replaceAll("\\s*\\R\\s*", " | ");
                System.out.println("FAIL " + c.name + " (" + ms + " ms): " + flat);
                failed.add(c.name);
            }
            System.out.flush();
        }
        System.out.println();
        System.out.println("java compat suite [" + settings.variant() + "]: " + passed + " passed, "
                + failed.size() + " failed, " + skipped + " skipped");
        for (String name : failed) System.out.println("  failed: " + name);
        return failed.size();
    }

    /** The innermost frame of the suite's own check code, to find the failing line. */
    private static String where(Throwable t) {
        for (StackTraceElement f : t.getStackTrace()) {
            String cls = f.getClassName();
            if (cls.startsWith("tabula.compat.") && cls.contains("Checks")) {
                return " [at " + f.getFileName() + ":" + f.getLineNumber() + "]";
            }
        }
        return "";
    }
}
