package tabula.compat;

/** A check's expectation did not hold. */
final class AssertionFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    AssertionFailed(String message) {
        super(message);
    }
}
