import FerryCore
import FuzzSupport

/// Parses the input as a mapping value expression (bound to the fuzzing model) and as a batch
/// update's `set:` expression, whose bare names are attributes (run as a dry-run batch update on
/// the in-memory store): an accepted expression must never crash ferry or make SQL that SQLite
/// refuses.
@main
enum FuzzExpression {
    static func main() { FuzzDriver.run(test) }
}

@_cdecl("LLVMFuzzerTestOneInput")
func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let text = FuzzInput.text(data, size)
    if let expression = try? Expression.parse(text),
        let bound = try? expression.bind(source: FuzzModel.customer, model: FuzzModel.model)
    {
        _ = bound.sql { slot in "s.\"\(bound.keyPaths[slot].attribute.name)\"" }
    }
    if let update = try? Expression.parse(text, bareNamesAreAttributes: true) {
        for attribute in ["name", "age", "score"] {
            let request = BatchUpdateRequest(
                entity: "Customer", predicate: .constant(true), propertiesToUpdate: [attribute: .expression(update)])
            guard (try? request.check(model: FuzzModel.model)) != nil else { continue }
            do {
                _ = try FuzzModel.store.execute(request, dryRun: true)
            } catch let error as FerryError where error.code != .store {
                // Values that break the attribute's rules are the request's to report.
            } catch {
                fatalError("an accepted update expression \(text.debugDescription) failed in SQLite: \(error)")
            }
        }
    }
    return 0
}
