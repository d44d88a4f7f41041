import FerryCore
import Foundation

extension JobLoader {
    package static let exportKeys = ["entity", "where", "sort", "fields", "limit", "offset", "format", "output"]

    /// Reads an `export` step. The predicate is parsed here (syntax errors point at the job
    /// file's line and column); ``JobValidator`` checks it, the fields and sort keys against the
    /// model.
    func loadExport(_ entry: YAMLMapping.Entry, resolve: (String) -> String, reader: DefinitionReader) -> ExportStep? {
        guard let mapping = reader.mapping(entry.value, for: "export") else { return nil }
        reader.checkKeys(mapping, allowed: Self.exportKeys, in: "an export step")
        var complete = true
        guard let entityNode = mapping["entity"] else {
            reader.fail("the export step needs 'entity'", at: entry.keyLocation)
            return nil
        }
        guard let entity = reader.string(entityNode, for: "entity") else { return nil }
        var step = ExportStep(
            entity: entity, format: .csv, location: entry.keyLocation, entityLocation: entityNode.location)

        if let node = mapping["output"], let output = reader.string(node, for: "output") {
            step.output = output == "-" ? "-" : resolve(output)
        }
        if let node = mapping["format"] {
            if let name = reader.string(node, for: "format") {
                if DataFormat(name: name) == .fixed {
                    reader.fail(DataFormat.fixedExportMessage, at: node.location)
                    complete = false
                } else if let format = DataFormat(name: name) {
                    step.format = format
                    if let delimiter = DataFormat.impliedDelimiter(name) { step.csvDelimiter = delimiter }
                } else {
                    reader.fail(
                        "unknown format '\(name)' (csv, json, ndjson)\(Suggestions.didYouMean(name, in: ["csv", "json", "ndjson", "jsonl"]))",
                        at: node.location)
                    complete = false
                }
            }
        } else if step.output == "-" {
            reader.fail("an export to standard output needs 'format:' (csv, json, ndjson)", at: entry.keyLocation)
            complete = false
        } else if let format = DataFormat(pathExtension: (step.output as NSString).pathExtension) {
            step.format = format
            if let delimiter = DataFormat.impliedDelimiter((step.output as NSString).pathExtension) {
                step.csvDelimiter = delimiter
            }
        } else {
            reader.fail(
                "cannot tell the format of '\(step.output)' from its extension; add 'format:' (csv, json, ndjson)",
                at: mapping["output"]?.location ?? entry.keyLocation)
            complete = false
        }

        if let node = mapping["where"], let text = reader.string(node, for: "where") {
            var start = node.location
            if node.isQuoted { start.column += 1 }
            do {
                step.predicate = try Predicate(format: text, location: start)
            } catch {
                reader.record(error)
                complete = false
            }
        }
        if let node = mapping["sort"] {
            let items: [YAMLNode]
            if case .sequence(let list) = node.content { items = list } else { items = [node] }
            for item in items {
                guard let text = reader.string(item, for: "sort") else { continue }
                var start = item.location
                if item.isQuoted { start.column += 1 }
                do {
                    step.sort.append(try SortDescriptor.parse(text, location: start))
                } catch {
                    reader.record(error)
                }
            }
        }
        if let node = mapping["fields"] {
            var fields: [FetchProperty] = []
            let items: [YAMLNode]
            if case .sequence(let list) = node.content { items = list } else { items = [node] }
            for item in items {
                guard let text = reader.string(item, for: "fields") else { continue }
                var start = item.location
                if item.isQuoted { start.column += 1 }
                fields += FetchProperty.list(text, location: start)
            }
            if fields.isEmpty {
                reader.fail("'fields' names no key paths", at: node.location)
            } else {
                step.fields = fields
            }
        }
        if let node = mapping["limit"], let limit = reader.int(node, for: "limit") { step.limit = limit }
        if let node = mapping["offset"], let offset = reader.int(node, for: "offset") { step.offset = offset }
        return complete ? step : nil
    }
}
