/// Registers the SQL functions that compiled predicates and update expressions rely on, on
/// every connection a store opens.
enum PredicateSupport {
    static func register(on connection: Connection) throws {
        try PredicateFunctions.register(on: connection)
        try UpdateFunctions.register(on: connection)
    }
}
