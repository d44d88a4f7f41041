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
            if x.entityNames != y.entityNames {
                return "version \(x.version): entities \(x.entityNames) ≠ \(y.entityNames)"
            }
            for (e, f) in zip(x.entities, y.entities) where e != f {
                return "version \(x.version), entity \(e.name):\n\(e)\n≠\n\(f)"
            }
            return
                "version \(x.version): \(x.fetchRequests) \(x.configurations) \(String(describing: x.versionIdentifier)) ≠ \(y.fetchRequests) \(y.configurations) \(String(describing: y.versionIdentifier))"
        }
        return nil
    }
}

extension CoreDataSamples {
    /// Writes a Core Data-shaped store for the Sync sample model `239.xcdatamodeld` (Car with
    /// sub-entities Racecar and Sedan, Passenger → Car), laid out as COREDATA.md §2 describes:
    /// entities numbered in pre-order (Car 1, Racecar 2, Sedan 3, Passenger 4), one table per
    /// root, `Z1_CAR` beside the to-one whose destination has sub-entities. It has no cached model,
    /// and its metadata is a real store's (`wibosco…Revised` v1). Rows: 1 Car, 2 Racecars,
    /// 3 Sedans, 4 Passengers.
    public static func writeInheritanceStore(at path: String) throws {
        let source = root.appendingPathComponent(
            "wibosco-CoreDataMigrationRevised/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite"
        ).path
        let scratch = path + ".metadata-source"
        try FileManager.default.copyItem(atPath: source, toPath: scratch)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: scratch)
        guard
            case .blob(let plist) = try Connection(path: scratch, create: false).scalar(
                "SELECT Z_PLIST FROM Z_METADATA")
        else {
            throw SampleError(description: "no Z_PLIST in \(source)")
        }
        let store = try Connection(path: path)
        try store.executeScript(
            """
            CREATE TABLE ZCAR ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZMAXSPEED INTEGER, ZREMOTEID INTEGER );
            CREATE TABLE ZPASSENGER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZREMOTEID INTEGER, ZCAR INTEGER, Z1_CAR INTEGER, ZNAME VARCHAR );
            CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
            CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
            CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
            INSERT INTO Z_PRIMARYKEY VALUES (1, 'Car', 0, 6), (2, 'Racecar', 1, 0), (3, 'Sedan', 1, 0), (4, 'Passenger', 0, 4);
            INSERT INTO ZCAR (Z_PK, Z_ENT, Z_OPT, ZMAXSPEED, ZREMOTEID) VALUES (1, 1, 1, NULL, NULL), (2, 2, 1, 300, 7), (3, 2, 1, 320, 8), (4, 3, 1, NULL, NULL), (5, 3, 1, NULL, NULL), (6, 3, 1, NULL, NULL);
            INSERT INTO ZPASSENGER (Z_PK, Z_ENT, Z_OPT, ZREMOTEID, ZCAR, Z1_CAR, ZNAME) VALUES (1, 4, 1, 1, 2, 2, 'Ann'), (2, 4, 1, 2, 4, 3, 'Bo'), (3, 4, 1, 3, NULL, NULL, 'Cy'), (4, 4, 1, 4, 1, 1, 'Di');
            """)
        try store.execute(
            "INSERT INTO Z_METADATA VALUES (1, 'A0B1C2D3-0000-4000-8000-000000000239', ?)", [.blob(plist)])
    }
}
