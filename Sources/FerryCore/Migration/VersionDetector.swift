/// Finds which version of a model bundle a store is at, from the model hash in its metadata
/// (Core Data's `isConfiguration(withName:compatibleWithStoreMetadata:)` over every version).
///
/// ```swift
/// let metadata = try Store.metadata(at: "shop.sqlite")
/// let version = try VersionDetector.detect(metadata: metadata, bundle: bundle)
/// ```
public enum VersionDetector {
    /// The bundle version whose version hash is the store's model hash. When several versions
    /// share that hash (they differ only in defaults, validation or renaming hints), the one
    /// whose label the store recorded wins, else the latest.
    ///
    /// - Parameters:
    ///   - metadata: the store's metadata (``Store/metadata(at:)``).
    ///   - bundle: the versions to look among.
    ///   - store: the store's path, for the error message.
    /// - Throws: `FerryError` (`.modelMismatch`) when no version matches, listing the bundle's
    ///   versions and which entities differ from the closest one (the version sharing the most
    ///   entity hashes with the store).
    public static func detect(metadata: StoreMetadata, bundle: ModelBundle, store: String? = nil) throws -> ObjectModel
    {
        let matches = bundle.versions.filter { $0.versionHash == metadata.modelHash }
        if let match = matches.first(where: { $0.version == metadata.modelVersion }) ?? matches.last {
            return match
        }
        throw noMatch(metadata: metadata, bundle: bundle, store: store)
    }

    /// How one version compares with the store's entity hashes.
    public struct Comparison: Sendable, Hashable {
        /// The version's label.
        public var version: String
        /// Entities with the same hash in the store and the version.
        public var matching: [String]
        /// Entities in both whose hashes differ.
        public var changed: [String]
        /// Entities only the store has.
        public var onlyInStore: [String]
        /// Entities only the version has.
        public var onlyInVersion: [String]

        /// Entities that differ, in name order, each with how: `Customer (changed)`.
        public var differences: [String] {
            (changed.map { "\($0) (changed)" } + onlyInStore.map { "\($0) (only in the store)" }
                + onlyInVersion.map { "\($0) (only in version \(version))" })
                .sorted()
        }
    }

    /// Compares the store's entity hashes with each version's, oldest version first.
    public static func compare(metadata: StoreMetadata, bundle: ModelBundle) -> [Comparison] {
        bundle.versions.map { version in
            let hashes = version.entityHashes
            let stored = metadata.entityHashes
            let common = Set(hashes.keys).intersection(stored.keys)
            return Comparison(
                version: version.version,
                matching: common.filter { hashes[$0] == stored[$0] }.sorted(),
                changed: common.filter { hashes[$0] != stored[$0] }.sorted(),
                onlyInStore: Set(stored.keys).subtracting(hashes.keys).sorted(),
                onlyInVersion: Set(hashes.keys).subtracting(stored.keys).sorted())
        }
    }

    /// The closest version: most matching entity hashes, then fewest differences, then the latest.
    public static func closest(metadata: StoreMetadata, bundle: ModelBundle) -> Comparison? {
        var best: Comparison?
        for comparison in compare(metadata: metadata, bundle: bundle) {
            guard let current = best else {
                best = comparison
                continue
            }
            let better =
                comparison.matching.count > current.matching.count
                || (comparison.matching.count == current.matching.count
                    && comparison.differences.count <= current.differences.count)
            if better { best = comparison }
        }
        return best
    }

    static func noMatch(metadata: StoreMetadata, bundle: ModelBundle, store: String?) -> FerryError {
        let what = store.map { "store '\($0)'" } ?? "the store"
        var notes = [
            "versions of \(bundle.name): "
                + bundle.versions.map { "\($0.version) (hash \($0.versionHash.prefix(12)))" }.joined(separator: ", ")
        ]
        if let closest = closest(metadata: metadata, bundle: bundle) {
            let total = Set(metadata.entityHashes.keys).union(bundle.version(closest.version)?.entityNames ?? []).count
            notes.append(
                "closest: version \(closest.version) (\(closest.matching.count) of \(total) entities match); entities that differ: \(closest.differences.joined(separator: ", "))"
            )
        }
        notes.append("the store was made with another model; open it with that model, or add its version to the bundle")
        return FerryError(
            .modelMismatch,
            "\(what) (model \(metadata.modelName) version \(metadata.modelVersion), hash \(metadata.modelHash.prefix(12))) matches no version of model \(bundle.name)",
            at: nil, notes: notes)
    }
}
