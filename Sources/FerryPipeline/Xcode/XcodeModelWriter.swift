import FerryCore
import Foundation

/// Writes ferry models as Xcode models, the way Xcode writes them (COREDATA.md §1): entities
/// sorted by name, properties sorted case-insensitively, 4-space indentation, `YES` flags,
/// Xcode's attribute spellings. ``XcodeModelReader`` reads the result back into an equal model.
enum XcodeModelWriter {
    /// The `contents` XML of one model version.
    static func contents(of model: ObjectModel) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
        out +=
            "<model type=\"com.apple.IDECoreDataModeler.DataModel\" documentVersion=\"1.0\" lastSavedToolsVersion=\"22758\""
        out += " systemVersion=\"23E224\" minimumToolsVersion=\"Automatic\" sourceLanguage=\"Swift\""
        out += " userDefinedModelVersionIdentifier=\"\(XMLEscaping.escape(model.versionIdentifier ?? ""))\">\n"
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            out += entityXML(entity)
        }
        for request in model.fetchRequests {
            var attributes: [(String, String)] = [("name", request.name), ("entity", request.entity)]
            if let predicate = request.predicate { attributes.append(("predicateString", predicate)) }
            if let limit = request.limit { attributes.append(("fetchLimit", String(limit))) }
            if let size = request.batchSize { attributes.append(("fetchBatchSize", String(size))) }
            attributes += request.options.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            out += "    " + element("fetchRequest", attributes) + "\n"
        }
        for configuration in model.configurations {
            var attributes = [("name", configuration.name)]
            if configuration.usedWithCloudKit { attributes.append(("usedWithCloudKit", "YES")) }
            out += "    " + element("configuration", attributes, close: false) + "\n"
            for member in configuration.entities {
                out += "        " + element("memberEntity", [("name", member)]) + "\n"
            }
            out += "    </configuration>\n"
        }
        // Like Xcode's own files: no newline after the closing tag.
        return out + "</model>"
    }

    /// The `.xccurrentversion` property list naming `label`'s version folder.
    static func currentVersionPlist(label: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>\(XcodeModelPackage.currentVersionKey)</key>
        \t<string>\(XMLEscaping.escape(label)).\(XcodeModelPackage.versionExtension)</string>
        </dict>
        </plist>

        """
    }

    /// Writes `bundle` as a `.xcdatamodeld` package into the (new, empty) folder `folder`.
    static func writePackage(_ bundle: ModelBundle, to folder: String) throws {
        for version in bundle.versions {
            try writeVersion(
                version,
                to: (folder as NSString).appendingPathComponent(
                    "\(version.version).\(XcodeModelPackage.versionExtension)"))
        }
        let plist = (folder as NSString).appendingPathComponent(XcodeModelPackage.currentVersionFile)
        try Data(currentVersionPlist(label: bundle.currentVersion).utf8).write(to: URL(fileURLWithPath: plist))
    }

    /// Writes one version as a `.xcdatamodel` folder holding its `contents`.
    static func writeVersion(_ model: ObjectModel, to folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(contents(of: model).utf8).write(
            to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent("contents")))
    }

    // MARK: - Elements

    private static func entityXML(_ entity: EntityDescription) -> String {
        var attributes: [(String, String)] = [("name", entity.name)]
        if let className = entity.className { attributes.append(("representedClassName", className)) }
        if let parent = entity.parent { attributes.append(("parentEntity", parent)) }
        if entity.isAbstract { attributes.append(("isAbstract", "YES")) }
        if let renamed = entity.renamedFrom { attributes.append(("elementID", renamed)) }
        if let modifier = entity.hashModifier { attributes.append(("versionHashModifier", modifier)) }
        attributes.append(("syncable", "YES"))
        var children: [String] = []
        for attribute in entity.attributes.sorted(by: { XcodeSpelling.precedes($0.name, $1.name) }) {
            children.append(attributeXML(attribute))
        }
        for relationship in entity.relationships.sorted(by: { XcodeSpelling.precedes($0.name, $1.name) }) {
            children.append(relationshipXML(relationship))
        }
        for property in entity.fetchedProperties {
            var request: [(String, String)] = [("name", "fetchedPropertyFetchRequest"), ("entity", property.entity)]
            if let predicate = property.predicate { request.append(("predicateString", predicate)) }
            children.append(
                element("fetchedProperty", [("name", property.name), ("optional", "YES")], close: false)
                    + "\n            "
                    + element("fetchRequest", request) + "\n        </fetchedProperty>")
        }
        for index in entity.indexes where index.name != nil {
            var text = element("fetchIndex", [("name", index.name ?? "")], close: false)
            for name in index.attributes {
                let order = index.descending.contains(name) ? "descending" : "ascending"
                text +=
                    "\n            "
                    + element("fetchIndexElement", [("property", name), ("type", "Binary"), ("order", order)])
            }
            children.append(text + "\n        </fetchIndex>")
        }
        let unnamed = entity.indexes.filter { $0.name == nil }
        if !unnamed.isEmpty {
            children.append(list("compoundIndexes", item: "compoundIndex", entry: "index", unnamed.map(\.attributes)))
        }
        if !entity.uniquenessConstraints.isEmpty {
            children.append(
                list(
                    "uniquenessConstraints", item: "uniquenessConstraint", entry: "constraint",
                    entity.uniquenessConstraints))
        }
        if let info = userInfoXML(entity.userInfo, indent: "        ") { children.append(info) }
        guard !children.isEmpty else { return "    " + element("entity", attributes) + "\n" }
        return "    " + element("entity", attributes, close: false) + "\n"
            + children.map { "        " + $0 + "\n" }.joined() + "    </entity>\n"
    }

    private static func attributeXML(_ attribute: AttributeDescription) -> String {
        var attributes: [(String, String)] = [("name", attribute.name)]
        if attribute.isOptional { attributes.append(("optional", "YES")) }
        if attribute.isTransient { attributes.append(("transient", "YES")) }
        attributes.append(("attributeType", XcodeSpelling.xmlType(of: attribute)))
        let rules = attribute.validation
        if attribute.type == .date {
            if let value = rules.minValue { attributes.append(("minDateTimeInterval", interval(value))) }
            if let value = rules.maxValue { attributes.append(("maxDateTimeInterval", interval(value))) }
        } else {
            if let value = rules.minValue { attributes.append(("minValueString", text(value))) }
            if let value = rules.maxValue { attributes.append(("maxValueString", text(value))) }
            if let length = rules.minLength { attributes.append(("minValueString", String(length))) }
            if let length = rules.maxLength { attributes.append(("maxValueString", String(length))) }
        }
        if let pattern = rules.pattern { attributes.append(("regularExpressionString", pattern)) }
        if let value = attribute.defaultValue, !value.isNull {
            attributes.append(
                attribute.type == .date
                    ? ("defaultDateTimeInterval", interval(value)) : ("defaultValueString", text(value)))
        }
        if let derivation = attribute.derivation {
            attributes.append(("derived", "YES"))
            attributes.append(("derivation", derivation))
        }
        if attribute.coreDataKind == nil, attribute.type.isNumeric || attribute.type == .bool {
            attributes.append(("usesScalarValueType", attribute.type == .decimal ? "NO" : "YES"))
        }
        if case .transformable(let transformer, let valueClass) = attribute.coreDataKind {
            if let transformer { attributes.append(("valueTransformerName", transformer)) }
            if let valueClass { attributes.append(("customClassName", valueClass)) }
        }
        if let renamed = attribute.renamedFrom { attributes.append(("elementID", renamed)) }
        if let modifier = attribute.hashModifier { attributes.append(("versionHashModifier", modifier)) }
        if attribute.allowsExternalBinaryDataStorage { attributes.append(("allowsExternalBinaryDataStorage", "YES")) }
        if attribute.preservesAfterDeletion { attributes.append(("preserveAfterDeletion", "YES")) }
        var info = attribute.userInfo
        if attribute.type == .json { info[XcodeSpelling.jsonUserInfoKey] = "json" }
        guard let infoXML = userInfoXML(info, indent: "            ") else { return element("attribute", attributes) }
        return element("attribute", attributes, close: false) + "\n            " + infoXML + "\n        </attribute>"
    }

    private static func relationshipXML(_ relationship: RelationshipDescription) -> String {
        var attributes: [(String, String)] = [("name", relationship.name)]
        if relationship.isOptional { attributes.append(("optional", "YES")) }
        if relationship.isToMany {
            attributes.append(("toMany", "YES"))
            if let min = relationship.minCount { attributes.append(("minCount", String(min))) }
            if let max = relationship.maxCount { attributes.append(("maxCount", String(max))) }
        } else {
            attributes.append(("maxCount", "1"))
        }
        let rule = XcodeSpelling.deleteRules.first { $0.rule == relationship.deleteRule }?.xml ?? "Nullify"
        attributes.append(("deletionRule", rule))
        if relationship.isOrdered { attributes.append(("ordered", "YES")) }
        attributes.append(("destinationEntity", relationship.destination))
        if let inverse = relationship.inverse {
            attributes.append(("inverseName", inverse))
            attributes.append(("inverseEntity", relationship.destination))
        }
        if let renamed = relationship.renamedFrom { attributes.append(("elementID", renamed)) }
        if let modifier = relationship.hashModifier { attributes.append(("versionHashModifier", modifier)) }
        guard let infoXML = userInfoXML(relationship.userInfo, indent: "            ") else {
            return element("relationship", attributes)
        }
        return element("relationship", attributes, close: false) + "\n            " + infoXML
            + "\n        </relationship>"
    }

    private static func list(_ container: String, item: String, entry: String, _ groups: [[String]]) -> String {
        var text = "<\(container)>"
        for names in groups {
            text += "\n            <\(item)>"
            for name in names { text += "\n                " + element(entry, [("value", name)]) }
            text += "\n            </\(item)>"
        }
        return text + "\n        </\(container)>"
    }

    private static func userInfoXML(_ info: [String: String], indent: String) -> String? {
        guard !info.isEmpty else { return nil }
        let entries = info.sorted { $0.key < $1.key }.map {
            "\(indent)    " + element("entry", [("key", $0.key), ("value", $0.value)]) + "\n"
        }
        return "<userInfo>\n" + entries.joined() + indent + "</userInfo>"
    }

    // MARK: - Values

    /// A value as Xcode writes it in `defaultValueString` and `min/maxValueString`.
    private static func text(_ value: Value) -> String {
        switch value {
        case .bool(let flag): return flag ? "YES" : "NO"
        case .double(let number): return String(number)
        default: return value.description
        }
    }

    /// A date as seconds since 2001-01-01 (Xcode's `…DateTimeInterval`).
    private static func interval(_ value: Value) -> String {
        guard case .date(let instant) = value else { return text(value) }
        guard instant.isWholeMilliseconds else { return String(instant.referenceSeconds) }
        let millis = instant.milliseconds
        let relative = millis - XcodeSpelling.referenceDateOffset * 1000
        if relative % 1000 == 0 { return String(relative / 1000) }
        return String(Double(relative) / 1000)
    }

    private static func element(_ name: String, _ attributes: [(String, String)], close: Bool = true) -> String {
        "<\(name)" + attributes.map { " \($0.0)=\"\(XMLEscaping.escape($0.1))\"" }.joined() + (close ? "/>" : ">")
    }
}
