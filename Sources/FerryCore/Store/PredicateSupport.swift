/// Registers the SQL functions that compiled predicates and queries rely on.
///
/// TEMPORARY home: the predicate branch supplies the real functions; this keeps one entry point
/// that `Store` calls on every connection it opens.
enum PredicateSupport {
    static func register(on connection: Connection) throws {}
}
