import FerryCore

/// A ``ModelDiagram`` as a Graphviz DOT graph (`dot -Tsvg` draws it).
///
/// Each entity is a table: its name (italic and `«abstract»` for an abstract entity), one row
/// per attribute, one per multi-property uniqueness constraint. A relationship pair is one edge
/// labelled with both names and delete rules, its multiplicities at its ends (a crow's foot at
/// a to-many end); a sub-entity has a hollow-arrow edge to its parent. Marks of a diff fill the
/// marked table, row or edge with the mark's colour and print `kind, origin` beside it; a
/// legend table lists the colours.
package enum DOTDiagram {
    /// The DOT text of `diagram`, ending with a newline.
    package static func render(_ diagram: ModelDiagram) -> String {
        var lines = [
            "digraph \(quoted(diagram.title)) {",
            "    graph [rankdir=LR, fontname=\"Helvetica\", label=\(quoted(diagram.title)), labelloc=t, nodesep=0.4, ranksep=1.2];",
            "    node [shape=plain, fontname=\"Helvetica\", fontsize=11];",
            "    edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\", labeldistance=1.8];",
        ]
        for entity in diagram.entities {
            lines.append("    \(quoted(entity.name)) [label=<\(table(entity))>];")
        }
        for relationship in diagram.relationships {
            var attributes = [
                "label=\(quoted(relationship.text + (relationship.mark.map { "\n[\($0.text)]" } ?? "")))",
                "headlabel=\(quoted(relationship.forward.multiplicity))",
                "arrowhead=\(relationship.forward.isToMany ? "crow" : "tee")",
            ]
            if let inverse = relationship.inverse {
                attributes += [
                    "dir=both", "taillabel=\(quoted(inverse.multiplicity))",
                    "arrowtail=\(inverse.isToMany ? "crow" : "tee")",
                ]
            }
            if let mark = relationship.mark {
                attributes += [
                    "color=\(quoted(mark.kind.stroke))", "fontcolor=\(quoted(mark.kind.stroke))", "penwidth=2",
                ]
                if mark.kind == .removed { attributes.append("style=dashed") }
            }
            lines.append(
                "    \(quoted(relationship.forward.entity)) -> \(quoted(relationship.destination)) [\(attributes.joined(separator: ", "))];"
            )
        }
        for entity in diagram.entities {
            if let parent = entity.parent {
                lines.append(
                    "    \(quoted(entity.name)) -> \(quoted(parent)) [arrowhead=empty, color=\"#333333\", label=\"is a\"];"
                )
            }
        }
        if !diagram.legend.isEmpty {
            var rows = "<tr><td colspan=\"2\"><b>Legend</b></td></tr>"
            for kind in diagram.legend {
                rows +=
                    "<tr><td bgcolor=\"\(kind.fill)\" width=\"24\"> </td><td align=\"left\">\(kind.rawValue)</td></tr>"
            }
            rows +=
                "<tr><td colspan=\"2\" align=\"left\">inferred: lightweight migration does it<br align=\"left\"/>mapped: the step's mapping does it<br align=\"left\"/>needs a mapping: inference refuses it, and the step has no mapping<br align=\"left\"/></td></tr>"
            lines.append(
                "    \"legend\" [label=<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"4\">\(rows)</table>>];"
            )
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The HTML-like label of an entity: a header row, then its attributes and constraints.
    static func table(_ entity: ModelDiagram.Entity) -> String {
        var title = "<b>\(escape(entity.name))</b>"
        if entity.isAbstract { title = "<i>\(title)</i><br/>«abstract»" }
        if let mark = entity.mark { title += "<br/>[\(escape(mark.text))]<br/>\(escape(mark.detail))" }
        let header = entity.mark?.kind.fill ?? "#e3e9f3"
        let border = entity.mark.map { " border=\"2\" color=\"\($0.kind.stroke)\"" } ?? " border=\"0\""
        var rows = ["<tr><td bgcolor=\"\(header)\">\(title)</td></tr>"]
        for attribute in entity.attributes {
            var text = escape(attribute.text)
            if attribute.mark?.kind == .removed { text = "<s>\(text)</s>" }
            if let mark = attribute.mark {
                rows.append(
                    "<tr><td align=\"left\" bgcolor=\"\(mark.kind.fill)\">\(text) [\(escape(mark.text))]</td></tr>")
            } else {
                rows.append("<tr><td align=\"left\">\(text)</td></tr>")
            }
        }
        for constraint in entity.uniqueness {
            rows.append(
                "<tr><td align=\"left\"><i>unique (\(escape(constraint.joined(separator: ", "))))</i></td></tr>")
        }
        return "<table cellborder=\"1\" cellspacing=\"0\" cellpadding=\"4\"\(border)>"
            + rows.joined() + "</table>"
    }

    /// A DOT string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for character in text {
            switch character {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": break
            default: out.append(character)
            }
        }
        return out + "\""
    }

    /// Text for an HTML-like label (Graphviz reads these labels as XML).
    static func escape(_ text: String) -> String { XMLEscaping.escape(text) }
}
