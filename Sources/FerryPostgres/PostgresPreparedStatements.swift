/// The names of the statements a session prepared (``PostgresConnection/executePrepared(_:_:)``),
/// by statement text and parameter types: `ferry_s1`, `ferry_s2`, … in the order they were
/// prepared.
///
/// A statement is prepared with the parameter types its arguments are sent with (0, inferred by
/// the server, for NULL and text), as ``PostgresConnection/execute(_:_:)`` sends them, so the
/// server infers the same types and a prepared run behaves as an unprepared one. The same text
/// run with other types (a float8 where a NULL was) is another statement.
struct PostgresPreparedStatements {
    /// A statement's text and the type OIDs of its parameters.
    struct Key: Hashable {
        var sql: String
        var types: [UInt32]
    }

    /// At most this many statements are prepared in one session (each holds memory on the
    /// server until the session ends); later texts run unprepared.
    static let capacity = 256

    private var names: [Key: String] = [:]
    private var prepared = 0

    /// How many statements are prepared now.
    var count: Int { names.count }

    /// The name `key` was prepared under, if it was.
    func name(for key: Key) -> String? { names[key] }

    /// A name no statement of the session has had, or nil when the session holds ``capacity``
    /// statements already.
    mutating func nextName() -> String? {
        guard names.count < Self.capacity else { return nil }
        prepared += 1
        return "ferry_s\(prepared)"
    }

    /// Notes that `key` is prepared as `name`.
    mutating func insert(_ key: Key, name: String) { names[key] = name }

    /// Forgets `key` (its statement is gone, or no longer usable on the server).
    mutating func remove(_ key: Key) { names[key] = nil }

    /// Forgets every statement (the session ended, or they were deallocated).
    mutating func removeAll() { names.removeAll() }
}
