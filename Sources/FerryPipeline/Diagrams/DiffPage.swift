import FerryCore

/// `ferry model diff --format html`: one self-contained page with the picture of the newer
/// version (changes marked), its legend, and every step's changes with who makes each.
package enum DiffPage {
    /// One version step and its mapping's coverage.
    package struct Step: Sendable {
        /// The step's changes.
        package var diff: ModelDiff
        /// What the step's mapping states.
        package var coverage: MappingCoverage

        /// A step and what its mapping states.
        package init(diff: ModelDiff, coverage: MappingCoverage) {
            self.diff = diff
            self.coverage = coverage
        }
    }

    /// The page: `svg` is the picture drawn by Graphviz, or nil to show the Mermaid text
    /// instead (with a note saying so).
    package static func render(diagram: ModelDiagram, svg: String?, steps: [Step]) -> String {
        var body = "<h1>\(HTMLPage.escape(diagram.title))</h1>\n"
        body += "<p>\(HTMLPage.escape(verdict(steps)))</p>\n"
        body += legend(diagram)
        if let svg {
            body += "<figure>\n\(HTMLPage.inlineSVG(svg))</figure>\n"
        } else {
            body +=
                "<p class=\"note\">Graphviz's dot is not on PATH, so the picture is given as Mermaid text (paste it in a mermaid block of GitHub or GitLab Markdown).</p>\n"
            body += "<pre>\(HTMLPage.escape(MermaidDiagram.render(diagram)))</pre>\n"
        }
        for step in steps {
            let diff = step.diff
            body +=
                "<h2>\(HTMLPage.escape("\(diff.destination.name) \(diff.source.version) → \(diff.destination.version)")) <span class=\"note\">(\(HTMLPage.escape(diff.rules.title)))</span></h2>\n"
            guard !diff.changes.isEmpty else {
                body += "<p>No change.</p>\n"
                continue
            }
            let rows = diff.changes.map { change -> [String] in
                let kind = DiagramMark.Kind(change.kind)
                let notes = [
                    change.reason.map { "reason: \($0)" }, change.fix.map { "fix: \($0)" },
                    change.warning.map { "warning: \($0)" },
                ].compactMap { $0 }
                return [
                    HTMLPage.escape(change.entity), HTMLPage.escape(change.property ?? ""),
                    "<span class=\"swatch\" style=\"background: \(kind.fill)\"></span> \(kind.rawValue)",
                    HTMLPage.escape(change.detail), HTMLPage.escape(step.coverage.origin(of: change).rawValue),
                    notes.map(HTMLPage.escape).joined(separator: "<br>"),
                ]
            }
            body += HTMLPage.table(header: ["Entity", "Property", "Change", "Detail", "Made by", "Notes"], rows: rows)
        }
        return HTMLPage.document(title: diagram.title, body: body)
    }

    /// What migrating through `steps` takes, in one sentence.
    package static func verdict(_ steps: [Step]) -> String {
        let origins = steps.flatMap { step in step.diff.changes.map(step.coverage.origin) }
        if origins.isEmpty { return "The versions are the same as far as migration is concerned." }
        let count = origins.count
        let changes = "\(count) \(count == 1 ? "change" : "changes")"
        if origins.contains(.needsMapping) {
            let refused = origins.filter { $0 == .needsMapping }.count
            return
                "Needs a mapping: \(refused) of \(changes) cannot be inferred and no mapping makes \(refused == 1 ? "it" : "them")."
        }
        if origins.contains(.mapped) {
            return
                "Migrates with the steps' mappings: \(changes), \(origins.filter { $0 == .mapped }.count) made by a mapping."
        }
        return "Lightweight: every one of the \(changes) is inferred."
    }

    /// The colour legend and what the origins mean.
    static func legend(_ diagram: ModelDiagram) -> String {
        guard !diagram.legend.isEmpty else { return "" }
        let items = diagram.legend.map { kind in
            "<li><span class=\"swatch\" style=\"background: \(kind.fill); border-color: \(kind.stroke)\"></span> \(kind.rawValue)</li>"
        }
        return "<ul>\n" + items.joined(separator: "\n")
            + "\n<li>inferred: lightweight migration makes it; mapped: the step's mapping makes it; needs a mapping: inference refuses it and the step has no mapping</li>\n</ul>\n"
    }
}
