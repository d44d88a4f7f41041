import FerryCore

/// The typed value of a parameter's text (`--param name=value`, the environment or a job's
/// `params:`) where a predicate or a mapping expression reads it as `$name`.
package enum ParameterValue {
    /// An integer, an exact decimal (text with a `.`), a boolean (`true`/`yes`, `false`/`no`, any
    /// case), else text.
    package static func typed(_ text: String) -> Value {
        if let integer = Int64(text) { return .integer(integer) }
        if let decimal = DecimalText.canonical(text), text.contains(".") { return .decimal(decimal) }
        switch text.lowercased() {
        case "true", "yes": return .bool(true)
        case "false", "no": return .bool(false)
        default: return .string(text)
        }
    }

    /// Every parameter of `texts`, typed.
    package static func typed(_ texts: [String: String]) -> [String: Value] {
        texts.mapValues(typed)
    }
}
