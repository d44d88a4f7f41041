import FerryCore
import FuzzSupport

/// Parses the input as a predicate, binds it to the fuzzing model, and runs a fetch with it (SQLite
/// prepares the SQL made from it): a predicate ferry accepts must make SQL SQLite accepts (a raw
/// SQLite error such as "parser stack overflow" is a finding, like a crash).
@main
enum FuzzPredicate {
    static func main() { FuzzDriver.run(test) }
}

@_cdecl("LLVMFuzzerTestOneInput")
func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let text = FuzzInput.text(data, size)
    guard let predicate = try? Predicate(format: text),
        (try? predicate.bound(to: FuzzModel.customer, model: FuzzModel.model)) != nil
    else { return 0 }
    do {
        try FuzzModel.store.fetch(FetchRequest(entity: FuzzModel.customer.name, predicate: predicate, limit: 0)) { _ in
        }
    } catch let error as FerryError where error.code == .store {
        fatalError("SQLite refused the SQL of an accepted predicate \(text.debugDescription): \(error)")
    } catch {
        // ferry refused it itself, with a located error: not a finding.
    }
    return 0
}
