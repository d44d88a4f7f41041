import FerryCore
import FerryPipeline
import Foundation
import Testing

/// Paths of the fixture files beside this source file.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
}

/// The rendered errors a throwing call produced (one string per error), or nil when it did not throw.
func renderedErrors(_ body: () throws -> Void) -> [String]? {
    do {
        try body()
        return nil
    } catch let errors as FerryErrors {
        return errors.errors.map(\.description)
    } catch let error as FerryError {
        return [error.description]
    } catch {
        return ["unexpected: \(error)"]
    }
}
