import FerryCore
import FerryPostgres
import Foundation
import Synchronization

/// The writer lock of a PostgreSQL store held across many sessions of one process: a job's run
/// holds it from its first step to its last (a `rebuild: true` run until its new schema is
/// swapped in), as `StoreLock` holds a store file's.
///
/// The lock itself is the store's session advisory lock (`Store.postgreSQLLockKey`), taken on a
/// session of its own that lives as long as the last holder in the process. Like `StoreLock`, it
/// is reentrant within a process: while it is held, every other opening of the same store for
/// writing in this process (each step's store, the swap of a rebuild, `copy_from:`) goes ahead
/// without taking it again (`Store.takeWriterLock`), and every other process waits for it. A
/// writer that waited opens the store's schema by name once it holds the lock, so it writes into
/// the store a rebuild swapped in, never into the schema it retired.
package final class PostgreSQLWriterLock: Sendable {
    /// The session holding the advisory lock (unchecked: only the registry touches it, under
    /// its mutex).
    private final class Holder: @unchecked Sendable {
        let session: PostgresDatabase
        var holders = 1
        init(session: PostgresDatabase) { self.session = session }
    }

    /// The locks this process holds, by server, database and schema (`identity`).
    private static let held = Mutex<[String: Holder]>([:])

    private let identity: String

    private init(identity: String) { self.identity = identity }

    deinit {
        Self.held.withLock { held in
            guard let holder = held[identity] else { return }
            holder.holders -= 1
            // The last holder's session goes with the entry: closing it releases the lock.
            if holder.holders == 0 { held[identity] = nil }
        }
    }

    /// What names one store's writer lock: advisory locks are per database of a server.
    static func identity(of url: PostgresURL, schema: String) -> String {
        "\(url.host ?? "")\u{0}\(url.port.map(String.init) ?? "")\u{0}\(url.database ?? "")\u{0}\(schema)"
    }

    /// True when this process holds the writer lock of the store in `schema` at `url`.
    static func isHeld(url: PostgresURL, schema: String) -> Bool {
        held.withLock { $0[identity(of: url, schema: schema)] != nil }
    }

    /// Takes (or, when this process holds it already, joins) the writer lock of the PostgreSQL
    /// store at `text`, waiting up to `timeout` for another process to release it; held until
    /// the returned value is released.
    package static func acquire(for text: String, timeout: Duration) throws -> PostgreSQLWriterLock {
        let url = try Store.postgresURL(text)
        let schema = url.schema ?? Store.defaultPostgreSQLSchema
        let identity = identity(of: url, schema: schema)
        let joined = held.withLock { held in
            guard let holder = held[identity] else { return false }
            holder.holders += 1
            return true
        }
        if joined { return PostgreSQLWriterLock(identity: identity) }
        let session = try PostgresDatabase(url: url, schema: schema)
        try Store.takeWriterLock(on: session, schema: schema, timeout: timeout, store: url.description)
        held.withLock { held in
            if let holder = held[identity] {
                holder.holders += 1
            } else {
                held[identity] = Holder(session: session)
            }
        }
        return PostgreSQLWriterLock(identity: identity)
    }
}
