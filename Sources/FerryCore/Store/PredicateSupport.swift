/// Registers the SQL functions and collations that compiled predicates, fetch requests and
/// compiled expressions rely on, on every connection a store opens.
enum PredicateSupport {
    static func register(on connection: Connection) throws {
        try PredicateFunctions.register(on: connection)
        try ExpressionSQLFunctions.register(on: connection)
        try Verifier.registerFunctions(on: connection)
        try connection.registerCollation(FetchRequest.decimalCollation, DecimalCollation.compare)
    }
}

/// Exact numeric order of decimal text (`ORDER BY CAST(x AS REAL), x COLLATE ferry_decimal`):
/// SQLite calls it only for values whose REAL approximations are equal, so the exact comparison
/// costs nothing on ordinary data. Text that is not a decimal sorts after decimals, byte-wise.
enum DecimalCollation {
    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let textA = String(decoding: a, as: UTF8.self)
        let textB = String(decoding: b, as: UTF8.self)
        switch (DecimalText.canonical(textA), DecimalText.canonical(textB)) {
        case (let x?, let y?): return DecimalText.compare(x, y)
        case (nil, .some): return 1
        case (.some, nil): return -1
        case (nil, nil): return a.lexicographicallyPrecedes(b) ? -1 : (a.elementsEqual(b) ? 0 : 1)
        }
    }
}
