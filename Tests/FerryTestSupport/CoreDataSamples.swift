import FerryCore
import Foundation

/// The real Xcode models in `../shared/data/coredata` (relative to the package root). Tests that
/// use them fail, never skip, when the folder is missing.
public enum CoreDataSamples {
    public static var root: URL {
        (TestPaths.sharedData ?? TestPaths.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data"))
            .appendingPathComponent("coredata").standardizedFileURL
    }

    /// Every `.xcdatamodeld` package, and every `.xcdatamodel` that is not inside one, sorted.
    public static func models() throws -> [String] {
        try find { $0.hasSuffix(".xcdatamodeld") || ($0.hasSuffix(".xcdatamodel") && !$0.contains(".xcdatamodeld/")) }
    }

    /// Every `.xcdatamodel` version folder, inside a package or not, sorted.
    public static func versionFolders() throws -> [String] {
        try find { $0.hasSuffix(".xcdatamodel") }
    }

    private static func find(_ include: (String) -> Bool) throws -> [String] {
        guard FileManager.default.fileExists(atPath: root.path) else {
            throw SampleError(description: "the Core Data samples are missing: expected \(root.path)")
        }
        guard let enumerator = FileManager.default.enumerator(atPath: root.path) else {
            throw SampleError(description: "cannot list \(root.path)")
        }
        var paths: [String] = []
        while let relative = enumerator.nextObject() as? String {
            if include(relative) { paths.append(root.appendingPathComponent(relative).path) }
        }
        return paths.sorted()
    }

    public struct SampleError: Error, CustomStringConvertible {
        public var description: String
    }
}

/// Models compared as Core Data compares them: entities by name, properties by name, without
/// where they were read from.
public enum ModelComparison {
    public static func normalized(_ model: ObjectModel) -> ObjectModel {
        var copy = model
        copy.location = nil
        copy.origin = .ferry
        copy.entities = model.entities.sorted { $0.name < $1.name }.map { entity in
            var entity = entity
            entity.location = nil
            entity.uniquenessConstraintLocations = []
            entity.attributes = entity.attributes.sorted { $0.name < $1.name }.map { attribute in
                var attribute = attribute
                attribute.location = nil
                return attribute
            }
            entity.relationships = entity.relationships.sorted { $0.name < $1.name }.map { relationship in
                var relationship = relationship
                relationship.location = nil
                return relationship
            }
            entity.indexes = entity.indexes.map { index in
                var index = index
                index.location = nil
                return index
            }
            entity.fetchedProperties = entity.fetchedProperties.map { property in
                var property = property
                property.location = nil
                return property
            }
            return entity
        }
        copy.fetchRequests = model.fetchRequests.map { request in
            var request = request
            request.location = nil
            return request
        }
        return copy
    }

    /// True when the bundles have the same name, versions (in order), current version and
    /// normalized models.
    public static func equal(_ a: ModelBundle, _ b: ModelBundle) -> Bool {
        difference(a, b) == nil
    }

    /// The first difference between the bundles, in words, or nil when they are equal.
    public static func difference(_ a: ModelBundle, _ b: ModelBundle) -> String? {
        if a.name != b.name { return "name \(a.name) ≠ \(b.name)" }
        if a.currentVersion != b.currentVersion { return "current version \(a.currentVersion) ≠ \(b.currentVersion)" }
        if a.versions.map(\.version) != b.versions.map(\.version) {
            return "versions \(a.versions.map(\.version)) ≠ \(b.versions.map(\.version))"
        }
        for (x, y) in zip(a.versions.map(normalized), b.versions.map(normalized)) where x != y {
            if x.entityNames != y.entityNames { return "version \(x.version): entities \(x.entityNames) ≠ \(y.entityNames)" }
            for (e, f) in zip(x.entities, y.entities) where e != f {
                return "version \(x.version), entity \(e.name):\n\(e)\n≠\n\(f)"
            }
            return "version \(x.version): \(x.fetchRequests) \(x.configurations) \(String(describing: x.versionIdentifier)) ≠ \(y.fetchRequests) \(y.configurations) \(String(describing: y.versionIdentifier))"
        }
        return nil
    }
}
