internal import CFerryYAML
import FerryCore

/// The bounds every ferry YAML file (model, job, mapping, expectations) must stay within, checked
/// on libyaml's events before Yams builds a tree, so that a hostile file (a "billion laughs" of
/// nested aliases, a list nested thousands deep) is a located error instead of gigabytes of
/// memory, a hang or a crash. See docs/files.md, "Limits".
enum YAMLLimits {
    /// The largest file: 4 MiB, far above any hand-written definition.
    static let maximumBytes = 4 << 20
    /// The deepest nesting of mappings and lists.
    static let maximumDepth = 64
    /// The most alias uses (`*name`) in one file.
    static let maximumAliases = 100
    /// The most nodes (scalars, mappings, lists) in one file once every alias is expanded.
    static let maximumNodes = 200_000
    /// The most scalar text in one file once every alias is expanded.
    static let maximumScalarBytes = 16 << 20
}

/// Walks a YAML document's events with libyaml and checks ``YAMLLimits`` without building any
/// tree: an alias counts the nodes and bytes its anchor expands to, so the size of the expanded
/// document is known before anything is expanded.
enum YAMLPreflight {
    /// What one node expands to.
    private struct Size {
        var nodes = 0
        var bytes = 0

        static func += (lhs: inout Size, rhs: Size) {
            lhs.nodes += rhs.nodes
            lhs.bytes += rhs.bytes
        }
    }

    /// An open mapping or list: its anchor and what it has expanded to so far.
    private struct Frame {
        var anchor: String?
        var size = Size(nodes: 1, bytes: 0)
    }

    /// Throws the first limit the document exceeds. Syntax errors are left to the composer,
    /// which reports them with more context.
    static func check(_ bytes: [UInt8], file: String, code: FerryError.Code) throws(FerryError) {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw FerryError(.internal, "cannot start the YAML parser (out of memory)", at: InputLocation(file: file))
        }
        defer { yaml_parser_delete(&parser) }
        try bytes.withUnsafeBufferPointer { (buffer) throws(FerryError) in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            try walk(&parser, file: file, code: code)
        }
    }

    private static func walk(_ parser: inout yaml_parser_t, file: String, code: FerryError.Code) throws(FerryError) {
        var anchors: [String: Size] = [:]
        var stack: [Frame] = []
        var total = Size()
        var aliases = 0

        func fail(_ message: String, _ mark: yaml_mark_t) -> FerryError {
            FerryError(
                code, message, at: InputLocation(file: file, line: Int(mark.line) + 1, column: Int(mark.column) + 1))
        }
        func name(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            pointer.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
        }
        /// Adds a finished node (or an alias's expansion) to its parent and to the document's total.
        func add(_ size: Size, at mark: yaml_mark_t) throws(FerryError) {
            total += size
            if stack.isEmpty == false { stack[stack.count - 1].size += size }
            if total.nodes > YAMLLimits.maximumNodes {
                throw fail(
                    "YAML document is too large: more than \(YAMLLimits.maximumNodes) values once its aliases are expanded",
                    mark)
            }
            if total.bytes > YAMLLimits.maximumScalarBytes {
                throw fail(
                    "YAML document is too large: more than \(YAMLLimits.maximumScalarBytes >> 20) MiB of text once its aliases are expanded",
                    mark)
            }
        }

        while true {
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) == 1 else { return }
            defer { yaml_event_delete(&event) }
            let mark = event.start_mark
            switch event.type {
            case YAML_STREAM_END_EVENT:
                return
            case YAML_SCALAR_EVENT:
                let size = Size(nodes: 1, bytes: event.data.scalar.length)
                if let anchor = name(event.data.scalar.anchor) { anchors[anchor] = size }
                try add(size, at: mark)
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                guard stack.count < YAMLLimits.maximumDepth else {
                    throw fail(
                        "YAML is nested too deeply: more than \(YAMLLimits.maximumDepth) levels of mappings and lists",
                        mark)
                }
                let anchor =
                    event.type == YAML_SEQUENCE_START_EVENT
                    ? name(event.data.sequence_start.anchor) : name(event.data.mapping_start.anchor)
                stack.append(Frame(anchor: anchor))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                guard let frame = stack.popLast() else { return }
                if let anchor = frame.anchor { anchors[anchor] = frame.size }
                // The node itself was not counted yet; its contents were, as they arrived.
                total.nodes += 1
                if stack.isEmpty == false { stack[stack.count - 1].size += frame.size }
            case YAML_ALIAS_EVENT:
                aliases += 1
                guard aliases <= YAMLLimits.maximumAliases else {
                    throw fail("too many YAML aliases: more than \(YAMLLimits.maximumAliases) in one file", mark)
                }
                // An undefined alias is left to the composer's error.
                guard let anchor = name(event.data.alias.anchor), let size = anchors[anchor] else { continue }
                try add(size, at: mark)
            default:
                continue
            }
        }
    }
}
