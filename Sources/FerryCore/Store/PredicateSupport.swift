/// Registers the SQL functions that compiled predicates and verification checks rely on, on
/// every connection a store opens.
enum PredicateSupport {
    static func register(on connection: Connection) throws {
        try PredicateFunctions.register(on: connection)
        try Verifier.registerFunctions(on: connection)
    }
}
