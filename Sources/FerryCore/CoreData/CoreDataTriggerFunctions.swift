import Foundation

/// The SQL functions Core Data registers on its connections and that its triggers call
/// (COREDATA.md §2.7): without them, SQLite refuses to prepare any statement on a table with a
/// derived-attribute trigger ("no such function: NSCoreDataDATriggerUpdatedAffectedObjectValue").
///
/// The trigger bodies compute the derived values themselves (`UPDATE ZBOOK SET ZPAGESCOUNT =
/// …`); the functions only tell Core Data's in-memory objects about the new values, which a
/// process without Core Data has none of. So each returns NULL, and the counts come out right.
enum CoreDataTriggerFunctions {
    /// Functions called with (table, Z_ENT, Z_PK, attribute name, new value).
    static let notifications = [
        "NSCoreDataDATriggerUpdatedAffectedObjectValue",
        "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
        "NSCoreDataTriggerUpdateAffectedObjectValue",
    ]

    static func register(on connection: Connection) throws {
        for name in notifications {
            try connection.registerFunction(name, argumentCount: 5, deterministic: false) { _ in .null }
        }
        // `now()` derivations: the current time in Core Data's date form (seconds since 2001).
        try connection.registerFunction("NSCoreDataNow", argumentCount: 0, deterministic: false) { _ in
            .real(Date().timeIntervalSince1970 - CoreDataValueCoding.referenceDateOffset)
        }
    }
}
