import Synchronization

/// The engines of stores in database servers, by the URL schemes that name their stores: the
/// one place ferry's generic code finds a server engine (``StoreLocation/serverEngine(_:)``),
/// as fluent finds the drivers an application registers. An engine module registers its engine
/// with ``register(_:schemes:)`` at start-up (PostgreSQL's module, `FerryPostgresStore`, with
/// `PostgreSQLEngine.register()`, which ferry's command line, its job runner and the test support
/// call). Until an engine is registered for a scheme, a store named by such a URL is refused
/// with ``notRegistered(scheme:)``, and no password in such a URL is hidden.
package enum StoreEngines {
    /// The registered engines by scheme (lowercase).
    private static let servers = Mutex<[String: StoreEngine]>([:])

    /// Registers `engine` for stores named by URLs of `schemes` (matched without regard to case).
    /// Thread-safe, and idempotent: registering the same engine again changes nothing.
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

    /// The refusal of a store named by a `scheme` URL when no engine is registered for it. The
    /// URL itself is not repeated: without its engine, ferry cannot tell where its password is.
    package static func notRegistered(scheme: String) -> FerryError {
        let registration =
            scheme == "postgres" || scheme == "postgresql"
            ? "PostgreSQLEngine.register() of the FerryPostgresStore module"
            : "the register function of the engine's module"
        return FerryError(
            .usage,
            "a store named by a \(scheme):// URL needs its engine, and none is registered for \(scheme):// URLs in this program: call \(registration) at start-up, before any store is named"
        )
    }
}

extension StoreEngine {
    /// The engine of a server location (``StoreLocation/postgres(url:schema:)`` made directly)
    /// whose scheme no engine is registered for: every operation refuses with
    /// ``StoreEngines/notRegistered(scheme:)``.
    package static func unregistered(scheme: String) -> StoreEngine {
        StoreEngine(
            name: "\(scheme) (not registered)", holder: "a database server",
            capabilities: Capabilities(
                readsPrivateCopy: false, storesInheritance: false, orderedToMany: false, workArea: .workSchema,
                writerLock: .advisoryLock, predicatePushdown: .superset),
            driver: UnregisteredServerDriver(scheme: scheme))
    }
}

/// The driver of ``StoreEngine/unregistered(scheme:)``.
private struct UnregisteredServerDriver: StoreEngineDriver, ServerStoreDriver {
    let scheme: String

    private var refusal: FerryError { StoreEngines.notRegistered(scheme: scheme) }

    var newStoreLayout: FerryLayout? { nil }

    func sameStore(_ first: String, _ second: String) throws -> Bool { throw refusal }

    func copyDestination(for copier: StoreCopier, model: ObjectModel) throws -> any StoreCopyDestination {
        throw refusal
    }

    func engineMigration(
        of storePath: String, bundle: ModelBundle, options: MigrationOptions, mappings: StepMappingCache,
        observer: (any MigrationObserver)?
    ) -> (any EngineMigration)? { nil }

    var server: (any ServerStoreDriver)? { self }

    func open(_ text: String, model: ObjectModel, options: Store.Options) throws -> Store { throw refusal }

    func metadata(_ text: String) throws -> StoreMetadata? { throw refusal }

    func storeExists(_ text: String) throws -> Bool { throw refusal }

    func inspectionSession(_ text: String) throws -> (session: any DatabaseConnection, layout: FerryLayout) {
        throw refusal
    }

    func schema(of text: String) -> String { "" }

    func shown(_ text: String) -> String { "\(scheme)://***" }

    func redactingPasswords(in text: String) -> String { text }

    func unavailable(on path: String) -> FerryError { refusal }
}
