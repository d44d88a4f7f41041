import FerryCore
import FuzzSupport

/// Parses the input as a predicate, binds it to the fuzzing model, and has SQLite prepare the SQL
/// made from it: a predicate ferry accepts must make SQL SQLite accepts (a raw SQLite error such as
/// "parser stack overflow" is a finding, like a crash).
@main
enum FuzzPredicate {
    static func main() { FuzzDriver.run(test) }
}

@_cdecl("LLVMFuzzerTestOneInput")
func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let text = FuzzInput.text(data, size)
    guard let predicate = try? Predicate(format: text), let bound = try? predicate.bound(to: FuzzModel.customer, model: FuzzModel.model),
        let sql = try? bound.sql(for: FuzzModel.customer, model: FuzzModel.model)
    else { return 0 }
    do {
        _ = try FuzzModel.store.read { connection in try connection.prepare("SELECT count(*) FROM \(sql.from) WHERE \(sql.sql)") }
    } catch {
        fatalError("SQLite refused the SQL of an accepted predicate \(text.debugDescription): \(error)")
    }
    return 0
}
