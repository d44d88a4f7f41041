import FerryPostgresStore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// PostgreSQL's engine lives in its own module and registers itself with `StoreEngines`; a
/// server store whose engine no module registered is refused with a message that says which
/// call registers it, and never repeats the URL (no engine is there to hide its password).
@Suite("Registering a server engine")
struct StoreEngineRegistrationTests {
    private static let model = SampleModels.shop()

    @Test("registering PostgreSQL's engine from many threads at once leaves one engine for both schemes")
    func registrationIsIdempotentAndThreadSafe() {
        DispatchQueue.concurrentPerform(iterations: 64) { _ in PostgreSQLEngine.register() }
        PostgreSQLEngine.register()

        let location = StoreLocation("postgresql://ferry:secret@db.example/shop?schema=sales")
        #expect(location == .postgres(url: "postgresql://ferry:secret@db.example/shop?schema=sales", schema: "sales"))
        #expect(location.engine == .postgreSQL)
        #expect(StoreLocation("POSTGRES://db.example/shop").engine == .postgreSQL)
        #expect(StoreEngines.server(forScheme: "postgres") == StoreEngines.server(forScheme: "postgresql"))
        // Registered once per engine: the password is hidden, and the text is otherwise kept.
        let shown = location.shown
        #expect(!shown.contains("secret"))
        #expect(shown.contains("db.example/shop"))
    }

    @Test("a server store whose engine is not registered is refused by every operation, naming the call")
    func unregisteredEngineRefuses() throws {
        let url = "pgfuture://ferry:secret@db.example/shop"
        let engine = StoreLocation.postgres(url: url, schema: "ferry").engine
        #expect(engine == .unregistered(scheme: "pgfuture"))
        #expect(engine.driver.newStoreLayout == nil)
        let server = try #require(engine.driver.server)

        var messages: [String] = []
        func refusal(_ body: () throws -> Void) {
            do {
                try body()
                Issue.record("an unregistered engine did not refuse")
            } catch let error as FerryError {
                #expect(error.code == .usage)
                messages.append(error.message)
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        refusal { _ = try server.open(url, model: Self.model, options: .existingReadOnly) }
        refusal { _ = try server.metadata(url) }
        refusal { _ = try server.storeExists(url) }
        refusal { _ = try server.inspectionSession(url) }
        refusal { _ = try engine.driver.sameStore(url, url) }
        #expect(messages.count == 5)
        for message in messages {
            #expect(
                message
                    == "a store named by a pgfuture:// URL needs its engine, and none is registered for pgfuture:// URLs in this program: call the register function of the engine's module at start-up, before any store is named"
            )
            #expect(!message.contains("secret"))
        }
        #expect(server.shown(url) == "pgfuture://***")
    }

    @Test("the refusal of a PostgreSQL URL names the module and the call that register its engine")
    func postgresRefusalNamesTheCall() {
        let error = StoreEngines.notRegistered(scheme: "postgresql")
        #expect(error.code == .usage)
        #expect(
            error.message
                == "a store named by a postgresql:// URL needs its engine, and none is registered for postgresql:// URLs in this program: call PostgreSQLEngine.register() of the FerryPostgresStore module at start-up, before any store is named"
        )
    }
}
