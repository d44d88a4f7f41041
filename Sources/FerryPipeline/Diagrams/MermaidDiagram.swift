import FerryCore

/// A ``ModelDiagram`` as a Mermaid class diagram, which GitHub and GitLab draw from a
/// `mermaid` code block as it is.
///
/// Each entity is a class listing its attributes (`name: type?` with `unique`, `transient`,
/// `derived`) and its multi-property uniqueness constraints; a relationship pair is one line
/// with both multiplicities and both names with their delete rules; a sub-entity points at
/// its parent with Mermaid's inheritance arrow. Marks of a diff colour the entity and print
/// `[kind, origin]` beside the marked row; a note gives the legend.
package enum MermaidDiagram {
    /// The Mermaid text of `diagram`, ending with a newline.
    package static func render(_ diagram: ModelDiagram) -> String {
        var lines = ["---", "title: \(clean(diagram.title))", "---", "classDiagram", "    direction LR"]
        for entity in diagram.entities {
            var members: [String] = []
            if entity.isAbstract { members.append("<<abstract>>") }
            if let mark = entity.mark { members.append("[\(mark.text)] \(member(mark.detail))") }
            for attribute in entity.attributes {
                members.append(member(attribute.text) + (attribute.mark.map { " [\($0.text)]" } ?? ""))
            }
            for constraint in entity.uniqueness {
                members.append("unique: \(member(constraint.joined(separator: ", ")))")
            }
            if members.isEmpty {
                lines.append("    class \(entity.name)")
            } else {
                lines.append("    class \(entity.name) {")
                lines += members.map { "        \($0)" }
                lines.append("    }")
            }
        }
        for relationship in diagram.relationships {
            let link = relationship.inverse == nil ? "-->" : "--"
            let near = relationship.inverse.map { " \"\($0.multiplicity)\"" } ?? ""
            let mark = relationship.mark.map { " [\($0.text)]" } ?? ""
            lines.append(
                "    \(relationship.forward.entity)\(near) \(link) \"\(relationship.forward.multiplicity)\" \(relationship.destination) : \(clean(relationship.text))\(mark)"
            )
        }
        for entity in diagram.entities {
            if let parent = entity.parent { lines.append("    \(parent) <|-- \(entity.name)") }
        }
        for entity in diagram.entities {
            if let mark = entity.mark {
                lines.append("    style \(entity.name) fill:\(mark.kind.fill),stroke:\(mark.kind.stroke)")
            }
        }
        if !diagram.legend.isEmpty {
            let items = diagram.legend.map { "[\($0.rawValue)] \(colourName($0))" }
            lines.append(
                "    note \"Legend: \(items.joined(separator: ", ")); inferred: lightweight migration does it, mapped: the step's mapping does it, needs a mapping: inference refuses it and the step has none\""
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The colour's name in the legend (Mermaid notes have no colour swatches).
    static func colourName(_ kind: DiagramMark.Kind) -> String {
        switch kind {
        case .added: "green"
        case .removed: "red"
        case .renamed: "blue"
        case .changed: "yellow"
        }
    }

    /// Text for a class member: ``clean(_:)``, with parentheses as square brackets (Mermaid takes
    /// a member with parentheses for a method).
    static func member(_ text: String) -> String {
        String(
            clean(text).map { character -> Character in
                switch character {
                case "(": "["
                case ")": "]"
                default: character
                }
            })
    }

    /// Text without the characters that end a Mermaid statement or member early (braces, quotes,
    /// semicolons, line breaks).
    static func clean(_ text: String) -> String {
        String(
            text.map { character -> Character in
                switch character {
                case "{", "}": "'"
                case "\"": "'"
                case ";": ","
                case "\n", "\r": " "
                default: character
                }
            })
    }
}
