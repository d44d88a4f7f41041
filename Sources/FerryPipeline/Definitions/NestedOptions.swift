/// How an import step treats nested JSON objects and arrays that stand for related objects
/// (`nested: true` or `nested: {max_depth: N}` on an import step).
public struct NestedOptions: Sendable, Hashable {
    /// The deepest chain of nested related objects a record may hold (the record itself is
    /// level 0): a deeper one rejects its record at the nested value.
    public var maxDepth: Int = 8
    /// The largest `max_depth` a step may ask for.
    public static let depthLimit = 64

    /// Options allowing related objects nested `maxDepth` levels deep.
    public init(maxDepth: Int = 8) {
        self.maxDepth = maxDepth
    }

    /// Why a step reading `format` (named `name`, `pgcopy` for instance; by default the format's
    /// own name) cannot nest related objects (nil when it can).
    package static func problem(with format: DataFormat, named name: String? = nil) -> String? {
        format == .json || format == .ndjson
            ? nil
            : "'nested' reads nested JSON objects and arrays: it needs a json or ndjson source, not \(name ?? format.rawValue)"
    }
}
