import Synchronization

/// The engines of stores in database servers, by the URL schemes that name their stores: the
/// one place ferry's generic code finds a server engine (``StoreLocation/serverEngine(_:)``),
/// as fluent finds the drivers an application registers. An engine module registers its engine
/// with ``register(_:schemes:)`` at start-up; PostgreSQL's is registered here until its files
/// leave `FerryCore`.
package enum StoreEngines {
    /// The registered engines by scheme (lowercase).
    private static let servers = Mutex<[String: StoreEngine]>(
        ["postgres": .postgreSQL, "postgresql": .postgreSQL])

    /// Registers `engine` for stores named by URLs of `schemes` (matched without regard to case).
    package static func register(_ engine: StoreEngine, schemes: [String]) {
        servers.withLock { servers in
            for scheme in schemes { servers[scheme.lowercased()] = engine }
        }
    }

    /// The engine registered for the URL scheme `scheme` (lowercase), nil when none is.
    package static func server(forScheme scheme: String) -> StoreEngine? {
        servers.withLock { $0[scheme] }
    }

    /// `text` with the password of every store URL in it hidden, as each registered engine hides
    /// them (a message naming a store, a source's URL).
    package static func redactingPasswords(in text: String) -> String {
        let drivers = servers.withLock { servers in
            var seen: Set<StoreEngine> = []
            return servers.values.sorted { $0.name < $1.name }.filter { seen.insert($0).inserted }.compactMap(
                \.driver.server)
        }
        return drivers.reduce(text) { text, server in server.redactingPasswords(in: text) }
    }
}
