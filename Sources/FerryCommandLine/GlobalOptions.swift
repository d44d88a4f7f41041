import ArgumentParser

/// Options shared by the commands that run steps.
struct GlobalOptions: ParsableArguments {
    @Option(name: .customLong("param"), help: ArgumentHelp("A job parameter for ${name}.", valueName: "name=value"))
    var parameters: [String] = []

    @Flag(help: "Check and count everything, then roll back: the store is not changed.")
    var dryRun = false

    @Option(
        help: ArgumentHelp(
            "Write a report of the run: JSON, or a self-contained HTML page when the name ends in .html.",
            valueName: "file.json|file.html"))
    var report: String?

    @Flag(help: "Print only errors.")
    var quiet = false

    /// `--param` values as a dictionary; a malformed one is a usage error.
    func parameterValues() throws -> [String: String] {
        var values: [String: String] = [:]
        for item in parameters {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                throw ValidationError("--param needs name=value, got '\(item)'")
            }
            values[String(item[..<equals])] = String(item[item.index(after: equals)...])
        }
        return values
    }
}
