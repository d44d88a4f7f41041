import FerryCore

extension JobLoader {
    /// Reads `nested: true|false` or `nested: {max_depth: N}` of an import step.
    func loadNested(_ node: YAMLNode, into step: inout ImportStep, reader: DefinitionReader) {
        if case .scalar = node.content {
            if let on = reader.bool(node, for: "nested") { step.nested = on ? NestedOptions() : nil }
            return
        }
        guard let mapping = reader.mapping(node, for: "nested") else { return }
        reader.checkKeys(mapping, allowed: Self.nestedKeys, in: "nested")
        var options = NestedOptions()
        if let depth = mapping["max_depth"], let value = reader.int(depth, for: "max_depth", minimum: 1) {
            if value > NestedOptions.depthLimit {
                reader.fail("'max_depth' may be at most \(NestedOptions.depthLimit), not \(value)", at: depth.location)
            } else {
                options.maxDepth = value
            }
        }
        step.nested = options
    }
}
