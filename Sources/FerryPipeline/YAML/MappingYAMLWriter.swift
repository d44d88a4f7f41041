import FerryCore
import Yams

/// Writes a ``MappingModel`` as a ferry mapping file (docs/migration.md, "Mapping files") that
/// ``MappingLoader`` reads back into the same mapping: every entity mapping of the destination
/// with its source, policy and the value of every attribute and relationship, so nothing is left
/// to inference. `ferry mapping show` prints an Xcode mapping model this way.
package enum MappingYAMLWriter {
    /// The YAML text of `mapping`; `comment` lines (without `#`) go first.
    package static func text(of mapping: MappingModel, comment: [String] = []) throws -> String {
        typealias Y = ModelYAMLWriter
        var top: [(String, Node)] = [
            ("from", Y.scalar(mapping.source.version)), ("to", Y.scalar(mapping.destination.version)),
        ]
        var entities: [(String, Node)] = []
        for entity in mapping.entities {
            var fields: [(String, Node)] = []
            if entity.name != entity.destination { fields.append(("entity", Y.scalar(entity.destination))) }
            fields.append(("source", entity.source.map { Y.scalar($0) } ?? Y.scalar("none")))
            if let filter = entity.filter { fields.append(("filter", Y.scalar(filter))) }
            if let distinct = entity.distinct { fields.append(("distinct", Y.scalar(distinct))) }
            if let policy = entity.policy { fields.append(("policy", Y.scalar(policy))) }
            let described = mapping.destination.entity(named: entity.destination)
            let attributes: [(String, Node)] = entity.attributes.compactMap { attribute in
                // A mapping that reads no source objects gives a required attribute without a
                // default nil (Xcode's implicit value); the file leaves it out, as a file may not
                // set a required attribute to nil: read back, it starts empty the same.
                if entity.source == nil, case .constant(let value) = attribute.value, value.isNull,
                    let described,
                    mapping.destination.attribute(named: attribute.destination, in: described)?
                        .isOptional == false
                {
                    return nil
                }
                switch attribute.value {
                case .copy(let source, _, _): return (attribute.destination, Y.mapping([("source", Y.scalar(source))]))
                case .expression(let text): return (attribute.destination, Node(text, .implicit, .doubleQuoted))
                case .constant(let value):
                    if value.isNull { return (attribute.destination, Node("~")) }
                    return (
                        attribute.destination, Y.mapping([("value", Node(Y.text(value), .implicit, .doubleQuoted))])
                    )
                }
            }
            if !attributes.isEmpty { fields.append(("attributes", Y.mapping(attributes))) }
            let relationships: [(String, Node)] = entity.relationships.map { relationship in
                switch relationship.value {
                case .carry(let source): return (relationship.destination, Y.mapping([("source", Y.scalar(source))]))
                case .keyPath(let path):
                    return (relationship.destination, Y.mapping([("source", Y.scalar(path.joined(separator: ".")))]))
                case .fromMapping(let name): return (relationship.destination, Y.mapping([("mapping", Y.scalar(name))]))
                case .none: return (relationship.destination, Y.scalar("none"))
                }
            }
            if !relationships.isEmpty { fields.append(("relationships", Y.mapping(relationships))) }
            entities.append((entity.name, Y.mapping(fields)))
        }
        top.append(("entities", Y.mapping(entities)))
        let header = comment.map { "# \($0)\n" }.joined()
        return header + (try Y.serialize(Y.mapping(top)))
    }
}
