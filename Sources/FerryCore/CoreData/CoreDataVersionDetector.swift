/// Finds which version of a model bundle a Core Data store is at (COREDATA.md §3.3), hashes
/// first: (B) the store's `NSStoreModelVersionHashes` against a compiled model's hashes when one
/// is given, then against the hashes computed from each version (``CoreDataVersionHashes``,
/// §3.2), (A) the model the store caches against each version, (C) the store's tables and
/// columns against those each version predicts.
///
/// ```swift
/// let store = try CoreDataStoreFile.read("App.sqlite")
/// let match = try CoreDataVersionDetector.detect(store: store, bundle: bundle)
/// print(match.version.version, match.method)
/// ```
package enum CoreDataVersionDetector {
    /// How the version was recognised.
    package enum Method: String, Sendable, Hashable, CustomStringConvertible {
        /// Entity version hashes equal the compiled model's (`VersionInfo.plist`).
        case compiledModelHashes = "compiled_model_hashes"
        /// Entity version hashes equal those computed from the version.
        case versionHashes = "version_hashes"
        /// The model cached in `Z_MODELCACHE` equals the version, property by property.
        case cachedModel = "cached_model"
        /// The tables and columns equal those the version predicts.
        case structure

        package var description: String {
            switch self {
            case .compiledModelHashes: return "the entity version hashes of the compiled model"
            case .versionHashes: return "the entity version hashes computed from the model"
            case .cachedModel: return "the model cached in the store"
            case .structure: return "the store's tables and columns"
            }
        }
    }

    /// A recognised version.
    package struct Match: Sendable {
        package var version: ObjectModel
        package var method: Method
        /// Other versions the same method cannot tell apart from `version` (they differ only in
        /// what the method does not see, such as defaults).
        package var alsoMatching: [String]
    }

    /// The version of `bundle` the Core Data store at `path` is at, read from a private copy:
    /// the entry point for commands that detect a store's version (`migrate`, `check`).
    package static func detect(
        storeAt path: String, bundle: ModelBundle, compiled: CompiledModelVersions? = nil
    ) throws -> Match {
        try detect(store: CoreDataStoreFile.read(path), bundle: bundle, compiled: compiled)
    }

    /// The version of `bundle` the store is at.
    ///
    /// - Parameter compiled: a compiled model's hashes; when given and one of its versions has
    ///   exactly the store's entity hashes, that version wins. Next, a version whose computed
    ///   hashes are exactly the store's (every entity, none more) wins.
    /// - Throws: `FerryError` (`.modelMismatch`) naming the closest version and exactly what
    ///   differs (entities and properties) when none matches.
    package static func detect(
        store: CoreDataStoreFile, bundle: ModelBundle, compiled: CompiledModelVersions? = nil
    ) throws -> Match {
        var notes: [String] = []
        if let compiled {
            let names = compiled.versionHashes.keys.sorted().filter {
                compiled.versionHashes[$0] == store.metadata.versionHashes
            }
            if let (name, version) = names.lazy.compactMap({ name in bundle.version(name).map { (name, $0) } }).first {
                return Match(
                    version: version, method: .compiledModelHashes,
                    alsoMatching: names.filter { $0 != name })
            }
            if let name = names.first {
                notes.append(
                    "the compiled model's version '\(name)' has the store's hashes, but model \(bundle.name) has no version of that name"
                )
            } else {
                notes.append("no version of the compiled model '\(compiled.path)' has the store's entity hashes")
            }
        }
        if !store.metadata.versionHashes.isEmpty {
            var matching = bundle.versions.filter {
                CoreDataVersionHashes(model: $0).hashes == store.metadata.versionHashes
            }
            // Versions the hashes cannot tell apart (an ordered flag is no input of them): those
            // the store's cached model equals, then those whose tables and columns, order
            // columns included, are the store's.
            if matching.count > 1, let cached = try? store.cachedModel() {
                let sameModel = matching.filter { differences(store: cached, version: $0).isEmpty }
                if !sameModel.isEmpty { matching = sameModel }
            }
            if matching.count > 1 {
                let sameTables = matching.filter {
                    structuralDifferences(store: store, version: $0, orderColumns: true).isEmpty
                }
                if !sameTables.isEmpty { matching = sameTables }
            }
            if let best = preferred(matching, store: store) {
                return Match(
                    version: best, method: .versionHashes,
                    alsoMatching: matching.map(\.version).filter { $0 != best.version })
            }
            notes.append("no version's computed entity version hashes are the store's")
        }
        var cached: ObjectModel?
        do {
            cached = try store.cachedModel()
        } catch let error as FerryError {
            notes.append("the cached model cannot be used: \(error.message)")
        }
        if let cached {
            let comparisons = bundle.versions.map { (model: $0, differences: differences(store: cached, version: $0)) }
            let matching = comparisons.filter { $0.differences.isEmpty }.map(\.model)
            if let best = preferred(matching, store: store) {
                return Match(
                    version: best, method: .cachedModel,
                    alsoMatching: matching.map(\.version).filter { $0 != best.version })
            }
            let closest = comparisons.min { $0.differences.count < $1.differences.count }
            if let closest {
                notes.append(
                    "closest: version \(closest.model.version) (by the cached model); what differs: "
                        + closest.differences.joined(separator: "; "))
            }
            throw mismatch(store: store, bundle: bundle, notes: notes)
        }
        let comparisons = bundle.versions.map {
            (model: $0, differences: structuralDifferences(store: store, version: $0))
        }
        let matching = comparisons.filter { $0.differences.isEmpty }.map(\.model)
        if let best = preferred(matching, store: store) {
            return Match(
                version: best, method: .structure, alsoMatching: matching.map(\.version).filter { $0 != best.version })
        }
        if let closest = comparisons.min(by: { $0.differences.count < $1.differences.count }) {
            notes.append(
                "closest: version \(closest.model.version) (by tables and columns); what differs: "
                    + closest.differences.joined(separator: "; "))
        }
        throw mismatch(store: store, bundle: bundle, notes: notes)
    }

    /// Of several equally matching versions: the one whose identifier the store recorded, else the latest.
    private static func preferred(_ matching: [ObjectModel], store: CoreDataStoreFile) -> ObjectModel? {
        let identifiers = store.metadata.versionIdentifiers.filter { !$0.isEmpty }
        return matching.last { model in model.versionIdentifier.map(identifiers.contains) ?? false } ?? matching.last
    }

    private static func mismatch(store: CoreDataStoreFile, bundle: ModelBundle, notes: [String]) -> FerryError {
        FerryError(
            .modelMismatch,
            "Core Data store '\(store.path)' matches no version of model \(bundle.name) (versions: \(bundle.versions.map(\.version).joined(separator: ", ")))",
            notes: notes + [
                "the store was made with another model; give the model it was made with, or add its version to the bundle"
            ])
    }

    // MARK: - (A) Cached model

    /// What persistence sees of a property, inherited ones included (COREDATA.md §3.3 A):
    /// kind, type, optional, transient, destination, to-many, ordered. Class names are ignored.
    struct PropertyShape: Hashable {
        var kind: String
        var optional: Bool
        var transient: Bool
        var destination: String?
        var toMany: Bool
        var ordered = false

        var description: String {
            var parts = [kind, optional ? "optional" : "required"]
            if transient { parts.append("transient") }
            if let destination {
                parts.append((toMany ? (ordered ? "ordered to-many " : "to-many ") : "to-one ") + destination)
            }
            return parts.joined(separator: " ")
        }
    }

    static func shapes(_ model: ObjectModel, _ entity: EntityDescription) -> [String: PropertyShape] {
        var result: [String: PropertyShape] = [:]
        for owner in ([entity] + model.ancestors(of: entity)).reversed() {
            for attribute in owner.attributes {
                let kind = attribute.coreDataKind?.typeName ?? attribute.type.rawValue
                result[attribute.name] = PropertyShape(
                    kind: (attribute.isDerived ? "derived " : "") + kind, optional: attribute.isOptional,
                    transient: attribute.isTransient, destination: nil, toMany: false)
            }
            for relationship in owner.relationships {
                result[relationship.name] = PropertyShape(
                    kind: "relationship", optional: relationship.isOptional, transient: false,
                    destination: relationship.destination, toMany: relationship.isToMany,
                    ordered: relationship.isToMany && relationship.isOrdered)
            }
            for fetched in owner.fetchedProperties {
                result[fetched.name] = PropertyShape(
                    kind: "fetched property", optional: true, transient: true, destination: fetched.entity, toMany: true
                )
            }
        }
        return result
    }

    /// Entity- and property-level differences between the store's cached model and a version,
    /// in words; empty when they match.
    package static func differences(store cached: ObjectModel, version: ObjectModel) -> [String] {
        var differences: [String] = []
        let storeNames = Set(cached.entityNames)
        let versionNames = Set(version.entityNames)
        for name in storeNames.subtracting(versionNames).sorted() {
            differences.append("entity \(name) is only in the store")
        }
        for name in versionNames.subtracting(storeNames).sorted() {
            differences.append("entity \(name) is only in version \(version.version)")
        }
        for name in storeNames.intersection(versionNames).sorted() {
            guard let mine = cached.entity(named: name), let theirs = version.entity(named: name) else { continue }
            if mine.parent != theirs.parent {
                differences.append(
                    "\(name): parent \(mine.parent ?? "none") in the store, \(theirs.parent ?? "none") in version \(version.version)"
                )
            }
            if mine.isAbstract != theirs.isAbstract {
                differences.append(
                    "\(name): \(mine.isAbstract ? "abstract" : "concrete") in the store, \(theirs.isAbstract ? "abstract" : "concrete") in version \(version.version)"
                )
            }
            let a = shapes(cached, mine)
            let b = shapes(version, theirs)
            for property in Set(a.keys).union(b.keys).sorted() {
                switch (a[property], b[property]) {
                case (let x?, nil): differences.append("\(name).\(property) (\(x.description)) is only in the store")
                case (nil, let y?):
                    differences.append("\(name).\(property) (\(y.description)) is only in version \(version.version)")
                case (let x?, let y?) where x != y:
                    differences.append(
                        "\(name).\(property): \(x.description) in the store, \(y.description) in version \(version.version)"
                    )
                default: break
                }
            }
        }
        return differences
    }

    // MARK: - (C) Structure

    /// The entity tables and their columns a version predicts (COREDATA.md §2.4): one table per
    /// root entity, `Z` + uppercased name; `Z_PK`, `Z_ENT`, `Z_OPT`, then a column per stored
    /// attribute and to-one relationship of every entity in the hierarchy.
    static func predictedTables(_ model: ObjectModel, orderColumns: Bool = false) -> [String: Set<String>] {
        var tables: [String: Set<String>] = [:]
        for entity in model.entities {
            let root = model.ancestors(of: entity).last ?? entity
            var columns = tables["Z" + root.name.uppercased(), default: ["Z_PK", "Z_ENT", "Z_OPT"]]
            for attribute in entity.attributes where attribute.isStored {
                columns.insert("Z" + attribute.name.uppercased())
            }
            for relationship in entity.relationships where !relationship.isToMany {
                columns.insert("Z" + relationship.name.uppercased())
                // `Z_FOK_<NAME>` beside a key whose inverse is an ordered to-many (§2.5).
                if orderColumns, let inverse = relationship.inverse,
                    let destination = model.entity(named: relationship.destination),
                    model.relationship(named: inverse, in: destination)?.isOrdered == true
                {
                    columns.insert("Z_FOK_" + relationship.name.uppercased())
                }
            }
            tables["Z" + root.name.uppercased()] = columns
        }
        return tables
    }

    /// Differences between the store's entity tables and a version's prediction; empty when they match.
    /// - Parameter orderColumns: also predict `Z_FOK_<NAME>` columns (to tell apart versions that
    ///   differ only in an ordered flag); otherwise `Z_FOK_…` columns are not compared.
    package static func structuralDifferences(
        store: CoreDataStoreFile, version: ObjectModel, orderColumns: Bool = false
    ) -> [String] {
        var differences: [String] = []
        let predicted = predictedTables(version, orderColumns: orderColumns)
        // Entity tables: `Z…` but not the system or join tables (`Z_…`). Columns `Z<n>_NAME`
        // (the entity of a to-one target) and `Z_FOK_…` (order keys) are not predicted.
        var actual: [String: Set<String>] = [:]
        for (table, columns) in store.tableColumns where table.hasPrefix("Z") && !table.hasPrefix("Z_") {
            actual[table] = Set(
                columns.filter { !isEntityOrOrderColumn($0) || (orderColumns && $0.hasPrefix("Z_FOK_")) })
        }
        for table in Set(actual.keys).subtracting(predicted.keys).sorted() {
            differences.append("table \(table) is only in the store")
        }
        for table in Set(predicted.keys).subtracting(actual.keys).sorted() {
            differences.append("table \(table) is missing from the store (version \(version.version) has it)")
        }
        for table in Set(actual.keys).intersection(predicted.keys).sorted() {
            let mine = actual[table] ?? []
            let theirs = predicted[table] ?? []
            for column in mine.subtracting(theirs).sorted() {
                differences.append("column \(table).\(column) is only in the store")
            }
            for column in theirs.subtracting(mine).sorted() {
                differences.append("column \(table).\(column) is missing from the store")
            }
        }
        let entityNames = Set(version.entities.flatMap { [$0.name] + ($0.renamedFrom.map { [$0] } ?? []) })
        for record in store.entities where !entityNames.contains(record.name) {
            differences.append("entity \(record.name) (Z_PRIMARYKEY) is not in version \(version.version)")
        }
        if store.entities.count != version.entities.count {
            differences.append(
                "the store numbers \(store.entities.count) entities, version \(version.version) has \(version.entities.count)"
            )
        }
        return differences
    }

    private static func isEntityOrOrderColumn(_ column: String) -> Bool {
        if column.hasPrefix("Z_FOK_") { return true }
        let rest = column.dropFirst()
        guard column.hasPrefix("Z"), let underscore = rest.firstIndex(of: "_"), underscore > rest.startIndex else {
            return false
        }
        return rest[rest.startIndex..<underscore].allSatisfy(\.isASCIIDigit)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
