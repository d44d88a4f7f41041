import FerryCore

/// The PostgreSQL engine's entry point: a program that opens stores in PostgreSQL registers the
/// engine once at start-up, before anything parses a store's name.
///
/// ```swift
/// import FerryPostgresStore
///
/// PostgreSQLEngine.register()
/// let store = try Store.open(at: "postgresql://localhost/shop?schema=sales", model: model)
/// ```
///
/// ferry's command line, its job runner and its test support call ``register()`` themselves.
public enum PostgreSQLEngine {
    /// The URL schemes that name a store in PostgreSQL.
    public static let schemes = ["postgres", "postgresql"]

    /// Registers the engine for ``schemes`` (`StoreEngine.postgreSQL`). Thread-safe and
    /// idempotent: a second call changes nothing.
    public static func register() {
        StoreEngines.register(.postgreSQL, schemes: schemes)
    }
}
